--- pi_snippets.util: what every part of the plugin shares: the client name,
--- the options, messages and buffer numbers. It requires no other module of
--- the plugin, so any of them can load it first.

local M = {}

--- LSP config name (and therefore client name).
M.name = 'pi_snippets'

--- Every message the plugin shows starts with this, like Pi's own warnings.
M.PREFIX = 'pi-simple-snippets: '

--- @class pi_snippets.Options
--- @field completion? boolean Enable |vim.lsp.completion| for pi_snippets clients (default true).
--- @field autotrigger? boolean Open the popup when `%` is typed (default true).
--- @field shortcut? boolean Bind the shortcut reported by the server (default true).
--- @field completeopt? string|false Buffer-local 'completeopt' used with completion when the
---   global value would insert the first match by itself (default 'menu,menuone,noselect,popup').

--- @type pi_snippets.Options
local defaults = {
  completion = true,
  autotrigger = true,
  shortcut = true,
  completeopt = 'menu,menuone,noselect,popup',
}

--- Options given to setup(); they win over `vim.g.pi_snippets`.
--- @type pi_snippets.Options
local setup_opts = {}

--- The options in force: defaults, then `vim.g.pi_snippets`, then setup().
--- Read on every use, so a change to `vim.g.pi_snippets` applies at once.
--- @return pi_snippets.Options
function M.options()
  local g = vim.g.pi_snippets
  if type(g) ~= 'table' then
    g = {}
  end
  return vim.tbl_extend('force', defaults, g, setup_opts)
end

--- Replaces the setup() options (already validated by the caller).
--- @param opts pi_snippets.Options
function M.set_options(opts)
  setup_opts = vim.deepcopy(opts)
end

--- @param buf? integer 0 or nil for the current buffer
--- @return integer
function M.resolve_buf(buf)
  if buf == nil or buf == 0 then
    return vim.api.nvim_get_current_buf()
  end
  return buf
end

--- @param msg string
--- @param level? integer
function M.notify(msg, level)
  vim.notify(M.PREFIX .. msg, level or vim.log.levels.INFO)
end

--- Messages already shown once.
--- @type table<string, true>
local warned = {}

--- Shows a warning the first time this exact message comes up in the session:
--- a bad shortcut is reported on every rebind otherwise.
--- @param msg string
function M.warn_once(msg)
  if warned[msg] then
    return
  end
  warned[msg] = true
  M.notify(msg, vim.log.levels.WARN)
end

return M
