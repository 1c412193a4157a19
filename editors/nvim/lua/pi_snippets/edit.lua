--- pi_snippets.edit: `:PiSnippetsEdit`, a snippet's value in a buffer of its own.
---
--- The server's `pi-snippets.editSnippet` names the snippet (by name, or the
--- marker or settings key under the cursor) and answers its value, unescaped,
--- from the settings file Pi takes it from. The value opens in a scratch buffer
--- `pisnippet://NAME` ('buftype' acwrite): its lines are the value split at
--- "\n", so nothing is added or lost (a final line break is a last empty line).
--- `:write` sends the lines joined with "\n" to `pi-snippets.setSnippetValue`
--- with the value the buffer was opened with: the server refuses the write when
--- the file changed meanwhile (the buffer stays modified: nothing is lost), and
--- otherwise has Neovim apply one edit of the value in the settings file, which
--- is then written when it had no unsaved changes of its own.

local util = require('pi_snippets.util')
local method = require('pi_snippets.protocol').method

local M = {}

local api = vim.api

M.EDIT = 'pi-snippets.editSnippet'
M.SET_VALUE = 'pi-snippets.setSnippetValue'
M.SCHEME = 'pisnippet://'

local AUGROUP = api.nvim_create_augroup('pi_snippets_edit', { clear = true })

--- The pi_snippets client of `buf` that offers `command`, or any that does.
--- @param buf integer
--- @return vim.lsp.Client?
local function client_for(buf)
  local function offers(c)
    local provider = c.server_capabilities and c.server_capabilities.executeCommandProvider
    return type(provider) == 'table' and vim.list_contains(provider.commands or {}, M.EDIT)
  end
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf, name = util.name })) do
    if offers(c) then
      return c
    end
  end
  for _, c in ipairs(vim.lsp.get_clients({ name = util.name })) do
    if offers(c) then
      return c
    end
  end
  util.notify('no pi_snippets language server offers ' .. M.EDIT, vim.log.levels.ERROR)
end

--- @param client vim.lsp.Client
--- @param command string
--- @param argument table
--- @param on_done fun(err: lsp.ResponseError?, result: any)
local function execute(client, command, argument, on_done)
  client:request('workspace/executeCommand', { command = command, arguments = { argument } }, on_done)
end

--- The lines a buffer shows for `value`: split at "\n" only.
--- @param value string
--- @return string[]
function M.lines_of(value)
  return vim.split(value, '\n', { plain = true })
end

--- Writes the snippet buffer back (its BufWriteCmd).
--- @param buf integer
--- @param on_done? fun(ok: boolean)
function M.write(buf, on_done)
  local state = vim.b[buf].pi_snippets_edit
  local client = state and vim.lsp.get_client_by_id(state.client_id)
  local function done(ok)
    if on_done then
      on_done(ok)
    end
    api.nvim_exec_autocmds('User', {
      pattern = 'PiSnippetsEditWritten',
      modeline = false,
      data = { buf = buf, ok = ok },
    })
  end
  if not state or not client then
    util.notify('the server of this snippet is gone; not saved', vim.log.levels.ERROR)
    return done(false)
  end
  local value = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  local tick = api.nvim_buf_get_changedtick(buf)
  -- The settings file's buffer: written after the edit only when it had no
  -- unsaved change of its own (those stay for the user to save).
  local path = vim.uri_to_fname(state.file)
  local file_buf = vim.fn.bufnr(path)
  local had_changes = file_buf ~= -1 and api.nvim_buf_is_loaded(file_buf) and vim.bo[file_buf].modified
  local argument = { name = state.name, value = value, previous = state.value, uri = state.origin }
  execute(client, M.SET_VALUE, argument, function(err, result)
    if err then
      util.notify(('%%%s not saved: %s'):format(state.name, err.message or ''), vim.log.levels.ERROR)
      return done(false)
    end
    if type(result) ~= 'table' or not result.applied then
      util.notify(('%%%s not saved: the edit was not applied'):format(state.name), vim.log.levels.WARN)
      return done(false)
    end
    if api.nvim_buf_is_valid(buf) then
      local now = vim.b[buf].pi_snippets_edit
      now.value = value
      vim.b[buf].pi_snippets_edit = now
      if api.nvim_buf_get_changedtick(buf) == tick then
        vim.bo[buf].modified = false
      end
    end
    local saved = vim.fn.bufnr(path)
    if result.changed and saved ~= -1 and not had_changes and vim.bo[saved].modified then
      api.nvim_buf_call(saved, function()
        vim.cmd('silent keepalt keepjumps write')
      end)
    end
    local where = had_changes and ' (unsaved there, beside your other changes: write it to keep it)' or ''
    util.notify(('saved %%%s in %s%s'):format(state.name, path, where))
    done(true)
  end)
end

--- Opens the answer of `pi-snippets.editSnippet` in its buffer (reused when the
--- snippet is open already and unmodified).
--- @param client vim.lsp.Client
--- @param result table {name, value, uri, source, layer}
--- @param origin string uri of the document the snippet was named in
--- @return integer buf
function M.open(client, result, origin)
  local name = M.SCHEME .. result.name
  local buf = vim.fn.bufnr('^' .. vim.pesc(name) .. '$')
  if buf ~= -1 and vim.bo[buf].modified then
    util.notify(('%%%s is open with unsaved changes'):format(result.name), vim.log.levels.WARN)
    api.nvim_set_current_buf(buf)
    return buf
  end
  if buf == -1 then
    buf = api.nvim_create_buf(true, false)
    api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].swapfile = false
  vim.bo[buf].bufhidden = 'hide'
  vim.b[buf].pi_snippets_edit = {
    client_id = client.id,
    name = result.name,
    value = result.value,
    file = result.uri,
    origin = origin,
  }
  api.nvim_buf_set_lines(buf, 0, -1, false, M.lines_of(result.value))
  vim.bo[buf].modified = false
  api.nvim_clear_autocmds({ group = AUGROUP, buffer = buf })
  api.nvim_create_autocmd('BufWriteCmd', {
    group = AUGROUP,
    buffer = buf,
    callback = function(ev)
      M.write(ev.buf)
    end,
  })
  api.nvim_set_current_buf(buf)
  return buf
end

--- @class pi_snippets.EditOpts
--- @field buf? integer the buffer the snippet is named in (default current)
--- @field name? string the snippet; default: the marker or settings key under the cursor, else a picker
--- @field on_open? fun(buf: integer?)

--- Opens a snippet's value for editing (`:PiSnippetsEdit [name]`).
--- @param opts? pi_snippets.EditOpts
function M.edit(opts)
  opts = opts or {}
  local buf = util.resolve_buf(opts.buf or 0)
  local client = client_for(buf)
  local function opened(b)
    if opts.on_open then
      opts.on_open(b)
    end
  end
  if not client then
    return opened(nil)
  end
  -- From a snippet's own buffer: the document that one was named in.
  local state = vim.b[buf].pi_snippets_edit
  local origin = state and state.origin or vim.uri_from_bufnr(buf)
  local function by_name(name)
    execute(client, M.EDIT, { name = name, uri = origin }, function(err, result)
      if err then
        util.notify(('%s failed: %s'):format(M.EDIT, err.message or ''), vim.log.levels.ERROR)
        return opened(nil)
      end
      opened(M.open(client, result, origin))
    end)
  end
  if opts.name and opts.name ~= '' then
    return by_name((opts.name:gsub('^%%', '')))
  end
  local win = vim.fn.bufwinid(buf)
  local cursor = api.nvim_win_get_cursor(win ~= -1 and win or 0)
  local line = api.nvim_buf_get_lines(buf, cursor[1] - 1, cursor[1], false)[1] or ''
  local position = {
    line = cursor[1] - 1,
    character = vim.str_utfindex(line, client.offset_encoding, cursor[2], false),
  }
  execute(client, M.EDIT, { uri = origin, position = position }, function(err, result)
    if err then
      util.notify(('%s failed: %s'):format(M.EDIT, err.message or ''), vim.log.levels.ERROR)
      return opened(nil)
    end
    if type(result) == 'table' then
      return opened(M.open(client, result, origin))
    end
    -- Nothing under the cursor: pick one of the snippets.
    client:request(method.list, { uri = origin }, function(list_err, listing)
      local names = {}
      for _, s in ipairs(not list_err and type(listing) == 'table' and listing.snippets or {}) do
        names[#names + 1] = s.name
      end
      if #names == 0 then
        util.notify('no snippet to edit', vim.log.levels.WARN)
        return opened(nil)
      end
      vim.ui.select(names, { prompt = 'Edit snippet' }, function(choice)
        if not choice then
          return opened(nil)
        end
        by_name(choice)
      end)
    end, buf)
  end, buf)
end

return M
