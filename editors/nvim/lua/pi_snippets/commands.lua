--- pi_snippets.commands: what `:PiSnippetsExpand`, `:PiSnippetsList` and
--- `:PiSnippetsReload` do (plugin/pi_snippets.lua defines the commands).
--- Each asks the pi_snippets client of the buffer through the server's custom
--- requests `snippets/expand`, `snippets/list` and `snippets/reload`.

local util = require('pi_snippets.util')
local keys = require('pi_snippets.keys')
local client_glue = require('pi_snippets.client')
local method = require('pi_snippets.protocol').method

local M = {}

local api = vim.api

--- The pi_snippets client of `buf`, else any pi_snippets client; says so when none runs.
--- @param buf integer
--- @return vim.lsp.Client?
local function pick_client(buf)
  local client = vim.lsp.get_clients({ bufnr = buf, name = util.name })[1]
    or vim.lsp.get_clients({ name = util.name })[1]
  if not client then
    util.notify(
      "no pi_snippets language server is running (add vim.lsp.enable('pi_snippets'))",
      vim.log.levels.ERROR
    )
  end
  return client
end

--- Splits text into lines the way LSP does (\r\n, \r and \n).
--- @param text string
--- @return string[]
local function split_lines(text)
  local normalized = text:gsub('\r\n?', '\n')
  return vim.split(normalized, '\n', { plain = true })
end

--- @class pi_snippets.ExpandOpts
--- @field buf? integer buffer (default current)
--- @field line1? integer first line, 1-based (default 1)
--- @field line2? integer last line, 1-based inclusive (default last line)
--- @field on_done? fun(changed: boolean)

--- Expands `%name` markers in a buffer (or a line range) in place. With a
--- server that offers `pi-snippets.expandDocument` (pi_snippets.features), its
--- edit replaces exactly the markers; otherwise the lines are replaced with
--- what `snippets/expand` returns, only when the server reports a change and
--- the buffer was not edited meanwhile.
--- @param opts? pi_snippets.ExpandOpts
function M.expand(opts)
  opts = opts or {}
  local buf = util.resolve_buf(opts.buf or 0)
  local features = require('pi_snippets.features')
  if features.offering(buf, features.EXPAND) then
    features.expand_document(opts)
    return
  end
  local line1 = opts.line1 or 1
  local line2 = opts.line2 or api.nvim_buf_line_count(buf)
  local client = pick_client(buf)
  if not client then
    return
  end
  local lines = api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  local tick = api.nvim_buf_get_changedtick(buf)
  --- @type pi_snippets.ExpandParams
  local params = { text = table.concat(lines, '\n'), uri = vim.uri_from_bufnr(buf) }
  client:request(method.expand, params, function(err, result)
    local function done(changed)
      if opts.on_done then
        opts.on_done(changed)
      end
    end
    if err then
      util.notify(('snippets/expand failed: %s'):format(err.message or ''), vim.log.levels.ERROR)
      return done(false)
    end
    if type(result) ~= 'table' or not result.changed then
      util.notify('nothing to expand')
      return done(false)
    end
    if not api.nvim_buf_is_valid(buf) or api.nvim_buf_get_changedtick(buf) ~= tick then
      util.notify('buffer changed during expansion; nothing replaced', vim.log.levels.WARN)
      return done(false)
    end
    api.nvim_buf_call(buf, function()
      -- Start a new undo block so `u` undoes exactly the expansion.
      vim.cmd('let &g:undolevels = &g:undolevels')
      api.nvim_buf_set_lines(buf, line1 - 1, line2, false, split_lines(result.text))
    end)
    api.nvim_exec_autocmds('User', {
      pattern = 'PiSnippetsExpanded',
      modeline = false,
      data = { buf = buf, line1 = line1, line2 = line2 },
    })
    done(true)
  end, buf)
end

--- @param result pi_snippets.SnippetsListing
--- @return string
local function shortcut_summary(result)
  if type(result.shortcut) ~= 'string' then
    return 'no shortcut'
  end
  local lhs = keys.translate(result.shortcut)
  return ('shortcut %s%s'):format(result.shortcut, lhs and (' = ' .. lhs) or ' (not bindable)')
end

--- Shows the snippets (name and preview) the server has loaded.
--- @param opts? { buf?: integer }
function M.list(opts)
  opts = opts or {}
  local buf = util.resolve_buf(opts.buf or 0)
  local client = pick_client(buf)
  if not client then
    return
  end
  client:request(method.list, { uri = vim.uri_from_bufnr(buf) }, function(err, result)
    if err then
      util.notify(('snippets/list failed: %s'):format(err.message or ''), vim.log.levels.ERROR)
      return
    end
    local snippets = result.snippets or {}
    local chunks = {
      {
        ('%s%d snippet%s, %s, expandOnCompletion %s\n'):format(
          util.PREFIX,
          #snippets,
          #snippets == 1 and '' or 's',
          shortcut_summary(result),
          result.expandOnCompletion and 'on' or 'off'
        ),
      },
    }
    local width = 0
    for _, s in ipairs(snippets) do
      width = math.max(width, vim.fn.strdisplaywidth('%' .. s.name))
    end
    for _, s in ipairs(snippets) do
      local label = '%' .. s.name
      chunks[#chunks + 1] = { label, 'Identifier' }
      chunks[#chunks + 1] = {
        (' '):rep(width - vim.fn.strdisplaywidth(label) + 2) .. (s.preview or '') .. '\n',
      }
    end
    for _, w in ipairs(result.warnings or {}) do
      chunks[#chunks + 1] = { w .. '\n', 'WarningMsg' }
    end
    local last = chunks[#chunks]
    last[1] = last[1]:gsub('\n$', '')
    api.nvim_echo(chunks, true, {})
  end, buf)
end

--- Asks the server to re-read its settings, then reports count and warnings.
--- @param opts? { buf?: integer, on_done?: fun(result: pi_snippets.SnippetsListing?) }
function M.reload(opts)
  opts = opts or {}
  local buf = util.resolve_buf(opts.buf or 0)
  local client = pick_client(buf)
  if not client then
    return
  end
  client:request(method.reload, vim.empty_dict(), function(err, result)
    if err then
      util.notify(('snippets/reload failed: %s'):format(err.message or ''), vim.log.levels.ERROR)
      if opts.on_done then
        opts.on_done(nil)
      end
      return
    end
    client_glue.remember(client.id, result)
    local n = #(result.snippets or {})
    local warnings = result.warnings or {}
    local msg = ('reloaded %d snippet%s, %s'):format(
      n,
      n == 1 and '' or 's',
      shortcut_summary(result)
    )
    if #warnings > 0 then
      msg = msg .. '\n' .. table.concat(warnings, '\n')
    end
    util.notify(msg, #warnings > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
    if opts.on_done then
      opts.on_done(result)
    end
  end, buf)
end

return M
