--- pi_snippets.features: the editor features that need the plugin's help.
---
--- Hover (`K`), code actions (`gra`), go to definition (the LSP tagfunc:
--- `CTRL-]`), semantic tokens and diagnostics are Neovim's own once the server
--- is attached. This module adds:
---   - attaching to Pi's settings files (the user file, a project's
---     `.pi/settings.json`), and to no other JSON buffer, so their diagnostics
---     and quick fixes show (`root_dir` of lsp/pi_snippets.lua);
---   - `:PiSnippetsExpand` through the server's `pi-snippets.expandDocument`,
---     whose edit replaces exactly the markers (marks and cursor stay);
---   - `:PiSnippetsSave` and the name prompt of the "Save selection as
---     snippet" code action (`vim.ui.input`), which run
---     `pi-snippets.saveSnippet`.

local util = require('pi_snippets.util')

local M = {}

local api = vim.api

M.EXPAND = 'pi-snippets.expandDocument'
M.SAVE = 'pi-snippets.saveSnippet'

--- Filetypes a settings file may have (Neovim detects `settings.json` as json,
--- or jsonc in some folders).
M.JSON_FILETYPES = { json = true, jsonc = true }

--- The user settings file, found as the server finds it.
--- @return string
function M.user_settings()
  local dir = vim.env.PI_CODING_AGENT_DIR
  if dir and dir ~= '' then
    return vim.fs.normalize(vim.fs.joinpath(vim.fn.expand(dir), 'settings.json'))
  end
  return vim.fs.normalize('~/.pi/agent/settings.json')
end

--- @param path string
--- @return string
local function real(path)
  return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
end

--- The folder a project settings file belongs to (the parent of its `.pi`),
--- or nil when `path` is not `<folder>/.pi/settings.json`.
--- @param path string
--- @return string?
function M.project_of(path)
  path = vim.fs.normalize(path)
  if vim.fs.basename(path) ~= 'settings.json' then
    return nil
  end
  local pi = vim.fs.dirname(path)
  if vim.fs.basename(pi) ~= '.pi' then
    return nil
  end
  return vim.fs.dirname(pi)
end

--- Whether `path` is a Pi settings file the server reads.
--- @param path string
--- @return boolean
function M.is_settings_file(path)
  if path == '' then
    return false
  end
  local user = M.user_settings()
  if vim.fs.normalize(path) == user or real(path) == real(user) then
    return true
  end
  return M.project_of(path) ~= nil
end

--- `root_dir` of the LSP config. A prompt buffer gets its project root (the
--- nearest folder holding one of the config's `root_markers`: `.pi`, `.git`). A JSON buffer is attached only when
--- it is a settings file: a project's `.pi/settings.json` to its project's
--- client, the user file to a running client (no second server), else to one
--- of its own. Any other JSON buffer: `on_dir` is not called, nothing attaches.
--- @param buf integer
--- @param on_dir fun(root?: string)
function M.root_dir(buf, on_dir)
  if not M.JSON_FILETYPES[vim.bo[buf].filetype] then
    local config = vim.lsp.config[util.name] or {}
    on_dir(vim.fs.root(buf, config.root_markers or { '.pi', '.git' }))
    return
  end
  local path = api.nvim_buf_get_name(buf)
  if not M.is_settings_file(path) then
    return
  end
  local user = M.user_settings()
  if vim.fs.normalize(path) ~= user and real(path) ~= real(user) then
    on_dir(M.project_of(path))
    return
  end
  local running = vim.lsp.get_clients({ name = util.name })[1]
  on_dir(running and running.root_dir or vim.fs.dirname(path))
end

--- The pi_snippets client of `buf` that offers `command`, or nil.
--- @param buf integer
--- @param command string
--- @return vim.lsp.Client?
function M.offering(buf, command)
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf, name = util.name })) do
    local provider = client.server_capabilities and client.server_capabilities.executeCommandProvider
    if type(provider) == 'table' and vim.list_contains(provider.commands or {}, command) then
      return client
    end
  end
end

--- `M.offering`, saying so when no client offers the command.
--- @param buf integer
--- @param command string
--- @return vim.lsp.Client?
local function client_with(buf, command)
  local client = M.offering(buf, command)
  if not client then
    util.notify(
      ('no pi_snippets language server attached to this buffer offers %s'):format(command),
      vim.log.levels.ERROR
    )
  end
  return client
end

--- Runs a server command; `on_result(result)` on success, a message on error.
--- The request names no buffer, so Neovim first sends the pending changes of
--- every buffer (not only the current one): the command edits the settings
--- file, whose buffer the server must see as it is.
--- @param client vim.lsp.Client
--- @param command string
--- @param argument table
--- @param on_result fun(result: table)
local function execute(client, command, argument, on_result)
  local params = { command = command, arguments = { argument } }
  client:request('workspace/executeCommand', params, function(err, result)
    if err then
      util.notify(('%s failed: %s'):format(command, err.message or ''), vim.log.levels.ERROR)
      return
    end
    on_result(type(result) == 'table' and result or {})
  end)
end

--- @class pi_snippets.ExpandDocumentOpts
--- @field buf? integer buffer (default current)
--- @field line1? integer first line, 1-based (default: the whole buffer)
--- @field line2? integer last line, 1-based inclusive
--- @field on_done? fun(changed: boolean)

--- Expands the markers of a buffer (or of whole lines of it) with the server's
--- `pi-snippets.expandDocument`: the server sends an edit of exactly the
--- markers that change, versioned, so an edit made meanwhile refuses it.
--- Fires `User PiSnippetsExpanded` when something was replaced.
--- @param opts? pi_snippets.ExpandDocumentOpts
--- @return boolean started false when no attached server offers the command
function M.expand_document(opts)
  opts = opts or {}
  local buf = util.resolve_buf(opts.buf or 0)
  local client = client_with(buf, M.EXPAND)
  if not client then
    return false
  end
  local argument = { uri = vim.uri_from_bufnr(buf) }
  if opts.line1 then
    argument.range = {
      start = { line = opts.line1 - 1, character = 0 },
      ['end'] = { line = opts.line2 or opts.line1, character = 0 },
    }
  end
  -- The edit arrives as workspace/applyEdit: start a new undo block for it, so
  -- `u` undoes exactly the expansion.
  api.nvim_buf_call(buf, function()
    vim.cmd('let &g:undolevels = &g:undolevels')
  end)
  execute(client, M.EXPAND, argument, function(result)
    local changed = (result.changed or 0) > 0
    if result.applied and changed then
      api.nvim_exec_autocmds('User', {
        pattern = 'PiSnippetsExpanded',
        modeline = false,
        data = { buf = buf, line1 = opts.line1 or 1, line2 = opts.line2 },
      })
    elseif not result.applied and not changed then
      util.notify('nothing to expand')
    end
    if opts.on_done then
      opts.on_done(result.applied and changed or false)
    end
  end)
  return true
end

--- The text of lines `line1`..`line2` of `buf`; with a characterwise or
--- blockwise Visual selection on exactly those lines, the selected text.
--- @param buf integer
--- @param line1 integer
--- @param line2 integer
--- @return string
function M.selected_text(buf, line1, line2)
  local mode = vim.fn.visualmode()
  local first, last = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if (mode == 'v' or mode == '\22') and first[2] == line1 and last[2] == line2 then
    local region = vim.fn.getregion(first, last, { type = mode })
    return table.concat(region, '\n')
  end
  return table.concat(api.nvim_buf_get_lines(buf, line1 - 1, line2, false), '\n')
end

--- Saves `text` as a snippet with `pi-snippets.saveSnippet`. Without a name,
--- asks for one with `vim.ui.input` (empty: the server derives one from the
--- text; cancelled: nothing is saved).
--- @param opts { buf?: integer, text: string, name?: string, on_done?: fun(result: table?) }
function M.save(opts)
  local buf = util.resolve_buf(opts.buf or 0)
  local client = client_with(buf, M.SAVE)
  if not client then
    return
  end
  local function run(name)
    local argument = { text = opts.text, uri = vim.uri_from_bufnr(buf) }
    if name and name ~= '' then
      argument.name = name
    end
    execute(client, M.SAVE, argument, function(result)
      if opts.on_done then
        opts.on_done(result)
      end
    end)
  end
  if opts.name and opts.name ~= '' then
    run(opts.name)
    return
  end
  vim.ui.input({ prompt = 'Snippet name (empty: from the first words): ' }, function(name)
    if name == nil then
      util.notify('not saved')
      if opts.on_done then
        opts.on_done(nil)
      end
      return
    end
    run(vim.trim(name))
  end)
end

--- Client-side handler of the `pi-snippets.saveSnippet` command, as carried by
--- the "Save selection as snippet" code action: asks for the name, then has
--- the server run the command with it (see `commands` in lsp/pi_snippets.lua).
--- @param command lsp.Command
--- @param ctx { bufnr: integer, client_id: integer }
function M.save_from_action(command, ctx)
  local argument = (command.arguments or {})[1]
  if type(argument) ~= 'table' or type(argument.text) ~= 'string' then
    util.notify('the save action carries no text', vim.log.levels.ERROR)
    return
  end
  M.save({ buf = ctx.bufnr, text = argument.text, name = argument.name })
end

return M
