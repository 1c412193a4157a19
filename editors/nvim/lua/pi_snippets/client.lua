--- pi_snippets.client: the glue between Neovim's LSP client and the plugin.
--- Installs the LspAttach/LspDetach autocmds, enables completion in attached
--- buffers (pi_snippets.completion), keeps the last configuration each client
--- reported (`snippets/list` and `snippets/reload`, fetched again on every
--- `snippets/didLoad` notice) and rebinds the shortcut from it, and says once
--- when the server command cannot be run.

local util = require('pi_snippets.util')
local keys = require('pi_snippets.keys')
local completion = require('pi_snippets.completion')
local method = require('pi_snippets.protocol').method

local M = {}

local api = vim.api

local AUGROUP = 'pi_snippets'

-- The message types (pi_snippets.SnippetsListing, pi_snippets.LoadNotice, ...) are
-- in pi_snippets/protocol.lua, generated from the server's own definitions.

--- Last configuration reported by each client (list / reload).
--- @type table<integer, pi_snippets.SnippetsListing>
local loaded = {}

--- Stores a client's configuration and rebinds the shortcut in its buffers.
--- @param client_id integer
--- @param result pi_snippets.SnippetsListing
--- @param bufs? integer[] buffers to rebind (default: all attached to the client)
function M.remember(client_id, result, bufs)
  if type(result) ~= 'table' then
    return
  end
  loaded[client_id] = result
  local client = vim.lsp.get_client_by_id(client_id)
  if not client then
    return
  end
  if not bufs then
    bufs = vim.tbl_keys(client.attached_buffers)
  end
  for _, buf in ipairs(bufs) do
    if client.attached_buffers[buf] then
      keys.bind(buf, client_id, result.shortcut)
    end
  end
end

--- Last configuration reported by a client (the shape of `snippets/list`).
--- @param client_id? integer default: the first pi_snippets client of the current buffer
--- @return pi_snippets.SnippetsListing?
function M.loaded(client_id)
  if not client_id then
    local c = vim.lsp.get_clients({ bufnr = 0, name = util.name })[1]
      or vim.lsp.get_clients({ name = util.name })[1]
    client_id = c and c.id
  end
  return client_id and loaded[client_id] or nil
end

--- True when the plugin enabled completion in `buf` for some pi_snippets client.
M.completion_enabled = completion.enabled

--- Handler for the server notification `snippets/didLoad`: a new generation.
--- The notice has no snippet values, so the configuration is listed again;
--- then the shortcut is rebound and `User PiSnippetsLoaded` fires with
--- `data = { client_id, result, notice }` (`result` shaped like `snippets/list`).
--- @param err lsp.ResponseError?
--- @param notice pi_snippets.LoadNotice
--- @param ctx lsp.HandlerContext
function M.on_did_load(err, notice, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if err or type(notice) ~= 'table' or not client then
    return
  end
  client:request(method.list, vim.empty_dict(), function(list_err, result)
    if list_err or type(result) ~= 'table' then
      util.warn_once(('snippets/list failed: %s'):format(list_err and list_err.message or '?'))
      return
    end
    M.remember(ctx.client_id, result)
    api.nvim_exec_autocmds('User', {
      pattern = 'PiSnippetsLoaded',
      modeline = false,
      data = { client_id = ctx.client_id, result = result, notice = notice },
    })
  end)
end

--- @param client vim.lsp.Client
--- @param buf integer
function M.on_attach(client, buf)
  completion.enable(client, buf)
  local known = loaded[client.id]
  if known then
    keys.bind(buf, client.id, known.shortcut)
  end
  client:request(method.list, { uri = vim.uri_from_bufnr(buf) }, function(err, result)
    if err then
      util.warn_once(('snippets/list failed: %s'):format(err.message or vim.inspect(err)))
      return
    end
    M.remember(client.id, result, { buf })
  end, buf)
end

--- @param client_id integer
--- @param buf integer
function M.on_detach(client_id, buf)
  keys.unbind(buf, client_id)
  completion.disable(client_id, buf)
end

--- Applies the current options to every running client's buffers (after setup()).
function M.apply_options()
  for _, client in ipairs(vim.lsp.get_clients({ name = util.name })) do
    local result = loaded[client.id]
    for buf in pairs(client.attached_buffers) do
      completion.enable(client, buf)
      keys.bind(buf, client.id, result and result.shortcut)
    end
  end
end

-- ---------------------------------------------------------------------------
-- Server command check
-- ---------------------------------------------------------------------------

--- The program of a config's `cmd` when it is a list whose program cannot be
--- run (not on $PATH, not executable); nil when it can, or when `cmd` is a
--- function (nothing to check).
--- @param config table?
--- @return string?
function M.missing_command(config)
  local cmd = type(config) == 'table' and config.cmd or nil
  if type(cmd) == 'table' and type(cmd[1]) == 'string' and vim.fn.executable(cmd[1]) == 0 then
    return cmd[1]
  end
  return nil
end

local command_warned = false

--- Warns once per session, visibly, when a buffer that pi_snippets would
--- attach to opens and the server command cannot be run. Neovim then skips the
--- client and only writes the reason to its LSP log, so without this message
--- nothing tells the user why `%` does nothing.
--- @param buf integer
function M.check_command(buf)
  if command_warned or not api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' then
    return
  end
  if vim.lsp.is_enabled and not vim.lsp.is_enabled(util.name) then
    return
  end
  local ok, config = pcall(function()
    return vim.lsp.config[util.name]
  end)
  if not ok or type(config) ~= 'table' then
    return
  end
  if config.filetypes and not vim.list_contains(config.filetypes, vim.bo[buf].filetype) then
    return
  end
  local missing = M.missing_command(config)
  if not missing then
    return
  end
  command_warned = true
  util.notify(
    ('server command %q is not executable (not on $PATH?); see :checkhealth pi_snippets'):format(
      missing
    ),
    vim.log.levels.WARN
  )
end

local installed = false

--- Installs the LspAttach/LspDetach autocmds and the server command check
--- (idempotent).
function M.install()
  if installed then
    return
  end
  installed = true
  local group = api.nvim_create_augroup(AUGROUP, { clear = true })
  api.nvim_create_autocmd('LspAttach', {
    group = group,
    desc = 'pi_snippets: completion and shortcut',
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == util.name then
        M.on_attach(client, args.buf)
      end
    end,
  })
  api.nvim_create_autocmd('LspDetach', {
    group = group,
    desc = 'pi_snippets: remove shortcut',
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == util.name then
        M.on_detach(client.id, args.buf)
      elseif not client then
        M.on_detach(args.data.client_id, args.buf)
      end
    end,
  })
  api.nvim_create_autocmd('CompleteDone', {
    group = group,
    desc = 'pi_snippets: insert the whole text of an accepted item',
    callback = completion.on_complete_done,
  })
  api.nvim_create_autocmd('InsertEnter', {
    group = group,
    desc = 'pi_snippets: leave completion to nvim-cmp or blink.cmp once loaded',
    callback = function(args)
      completion.on_insert_enter(args.buf)
    end,
  })
  api.nvim_create_autocmd('FileType', {
    group = group,
    desc = 'pi_snippets: say when the server command cannot be run',
    callback = function(args)
      M.check_command(args.buf)
    end,
  })
  -- This runs while Neovim resolves the config for the buffer being opened,
  -- whose FileType event may already be past: check it once that is done.
  local buf = api.nvim_get_current_buf()
  vim.schedule(function()
    M.check_command(buf)
  end)
end

return M
