--- pi_snippets: Neovim client glue for pi-snippets-lsp.
---
--- The LSP config itself lives in `lsp/pi_snippets.lua`; this module holds the
--- logic: enabling completion, binding the server-reported shortcut, and the
--- `:PiSnippets*` commands. See `:help pi_snippets`.

local M = {}

local api = vim.api

--- LSP config name (and therefore client name).
M.name = 'pi_snippets'

local PREFIX = 'pi-simple-snippets: '
local MAP_DESC = 'pi_snippets: type % and open snippet completion'
local AUGROUP = 'pi_snippets'

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

--- @type pi_snippets.Options
local setup_opts = {}

--- @class pi_snippets.Snippet
--- @field name string
--- @field value string
--- @field preview string
--- @field source string

--- @class pi_snippets.LoadResult
--- @field snippets pi_snippets.Snippet[]
--- @field shortcut string|vim.NIL|nil
--- @field expandOnCompletion boolean
--- @field warnings string[]

--- Last configuration reported by each client (didLoad / list / reload).
--- @type table<integer, pi_snippets.LoadResult>
local loaded = {}

--- Shortcut mapping we own in each buffer.
--- @type table<integer, { lhs: string, client_id: integer, shortcut: string }>
local buf_maps = {}

--- Buffers where we called vim.lsp.completion.enable(), per client.
--- @type table<integer, table<integer, true>>
local completion_bufs = {}

--- Messages already shown once.
--- @type table<string, true>
local warned = {}

--- @return pi_snippets.Options
function M.options()
  local g = vim.g.pi_snippets
  if type(g) ~= 'table' then
    g = {}
  end
  return vim.tbl_extend('force', defaults, g, setup_opts)
end

--- @param buf? integer 0 or nil for the current buffer
--- @return integer
local function resolve_buf(buf)
  if buf == nil or buf == 0 then
    return api.nvim_get_current_buf()
  end
  return buf
end

--- @param msg string
--- @param level? integer
local function notify(msg, level)
  vim.notify(PREFIX .. msg, level or vim.log.levels.INFO)
end

--- @param msg string
local function warn_once(msg)
  if warned[msg] then
    return
  end
  warned[msg] = true
  notify(msg, vim.log.levels.WARN)
end

-- ---------------------------------------------------------------------------
-- Shortcut translation
-- ---------------------------------------------------------------------------

local MODIFIERS = { ctrl = 'C', shift = 'S', alt = 'M', super = 'D' }
local MODIFIER_ORDER = { 'C', 'S', 'M', 'D' }

local NAMED_KEYS = {
  escape = 'Esc',
  esc = 'Esc',
  enter = 'CR',
  ['return'] = 'CR',
  tab = 'Tab',
  space = 'Space',
  backspace = 'BS',
  delete = 'Del',
  insert = 'Insert',
  home = 'Home',
  ['end'] = 'End',
  pageup = 'PageUp',
  pagedown = 'PageDown',
  up = 'Up',
  down = 'Down',
  left = 'Left',
  right = 'Right',
}
for i = 1, 12 do
  NAMED_KEYS['f' .. i] = 'F' .. i
end

-- Printable characters that need a key name inside <...> or in a mapping lhs.
local CHAR_NAMES = { ['<'] = 'lt', ['\\'] = 'Bslash', ['|'] = 'Bar' }

--- Keys that a modified key may collapse into in Neovim (e.g. <C-[> is <Esc>,
--- <C-i> is <Tab>, <S-a> is A). Binding such a key would hijack another key.
--- @param lhs string
--- @param base string the base key name from the shortcut
--- @return string? collided key notation
local function collision(lhs, base)
  local ok, codes = pcall(vim.keycode, lhs)
  if not ok then
    return lhs
  end
  local actual = vim.fn.keytrans(codes)
  if #codes == 1 and codes:byte() >= 0x20 and codes:byte() < 0x7f then
    return actual -- a plain printable character: would steal ordinary typing
  end
  local named = actual:match('^<(.+)>$')
  while named and named:match('^[CSMAD]%-.') do
    named = named:sub(3)
  end
  if named == 'Tab' or named == 'CR' or named == 'Esc' then
    local wanted = NAMED_KEYS[base]
    if wanted ~= named then
      return actual
    end
  end
  return nil
end

--- Translates a Pi shortcut (`ctrl+shift+s`) into Neovim key notation (`<C-S-s>`).
---
--- @param shortcut string
--- @return string? lhs Neovim key notation, or nil when Neovim cannot express it
--- @return string? err why it cannot be bound
function M.keys(shortcut)
  if type(shortcut) ~= 'string' then
    return nil, 'shortcut is not a string'
  end
  local s = vim.trim(shortcut):lower()
  if s == '' then
    return nil, 'empty shortcut'
  end
  local mods_str, key
  if s == '+' then
    mods_str, key = '', '+'
  elseif s:sub(-2) == '++' then
    mods_str, key = s:sub(1, -3), '+'
  else
    mods_str, key = s:match('^(.*)%+([^+]+)$')
    if not key then
      mods_str, key = '', s
    end
  end

  local seen = {} --- @type table<string, true>
  if mods_str ~= '' then
    for _, part in ipairs(vim.split(mods_str, '+', { plain = true })) do
      local m = MODIFIERS[part]
      if not m then
        return nil, ('unknown modifier %q in %q'):format(part, shortcut)
      end
      if seen[m] then
        return nil, ('duplicate modifier %q in %q'):format(part, shortcut)
      end
      seen[m] = true
    end
  end

  local name --- @type string
  if NAMED_KEYS[key] then
    name = NAMED_KEYS[key]
  elseif #key == 1 and key:byte() >= 0x21 and key:byte() <= 0x7e then
    name = CHAR_NAMES[key] or key
  else
    return nil, ('Neovim has no key for %q (shortcut %q)'):format(key, shortcut)
  end

  local mods = {} --- @type string[]
  for _, m in ipairs(MODIFIER_ORDER) do
    if seen[m] then
      mods[#mods + 1] = m
    end
  end

  local lhs --- @type string
  if #mods == 0 then
    if NAMED_KEYS[key] or CHAR_NAMES[key] then
      lhs = '<' .. name .. '>'
    else
      lhs = key
    end
  else
    lhs = '<' .. table.concat(mods, '-') .. '-' .. name .. '>'
  end

  local other = collision(lhs, key)
  if other then
    return nil,
      ('shortcut %q is the same key as %s in Neovim; not bound'):format(shortcut, other)
  end
  return lhs
end

-- ---------------------------------------------------------------------------
-- Shortcut binding
-- ---------------------------------------------------------------------------

--- The description of the buffer-local insert-mode map on `lhs`, or nil when none.
--- @param buf integer
--- @param lhs string
--- @return string|false|nil
local function insert_map_desc(buf, lhs)
  local want = vim.keycode(lhs)
  for _, m in ipairs(api.nvim_buf_get_keymap(buf, 'i')) do
    if vim.keycode(m.lhs) == want then
      return m.desc or false
    end
  end
  return nil
end

--- @param buf integer
--- @param lhs string
--- @return boolean
local function is_our_map(buf, lhs)
  return insert_map_desc(buf, lhs) == MAP_DESC
end

--- @param buf integer
--- @param lhs string
--- @return boolean
local function has_foreign_map(buf, lhs)
  local desc = insert_map_desc(buf, lhs)
  return desc ~= nil and desc ~= MAP_DESC
end

--- @param buf integer
local function unbind(buf)
  local cur = buf_maps[buf]
  if not cur then
    return
  end
  buf_maps[buf] = nil
  if api.nvim_buf_is_valid(buf) and is_our_map(buf, cur.lhs) then
    pcall(vim.keymap.del, 'i', cur.lhs, { buffer = buf })
  end
end

--- True when the shortcut may act: a normal (non-floating) window, not a
--- prompt buffer, not the command-line window, buffer attached to pi_snippets.
--- @return boolean
local function shortcut_may_act()
  if api.nvim_win_get_config(0).relative ~= '' then
    return false
  end
  if vim.bo.buftype == 'prompt' then
    return false
  end
  if vim.fn.getcmdwintype() ~= '' then
    return false
  end
  local mode = api.nvim_get_mode().mode
  if mode:sub(1, 1) ~= 'i' and mode:sub(1, 1) ~= 'R' then
    return false
  end
  return #vim.lsp.get_clients({ bufnr = 0, name = M.name }) > 0
end

--- The expr-mapping body: `%` when the shortcut may act, else the key itself.
--- @param lhs string
--- @return string
local function on_shortcut(lhs)
  if not shortcut_may_act() then
    return lhs -- pass the key through unchanged (the mapping is noremap)
  end
  local buf = api.nvim_get_current_buf()
  local opts = M.options()
  local ours = false
  for id in pairs(completion_bufs) do
    if completion_bufs[id][buf] then
      ours = true
    end
  end
  if ours and not opts.autotrigger then
    -- No InsertCharPre trigger: ask for completion once `%` is in the buffer.
    vim.schedule(function()
      if api.nvim_get_current_buf() == buf and api.nvim_get_mode().mode:sub(1, 1) == 'i' then
        vim.lsp.completion.get()
      end
    end)
  end
  -- Typed like a key: InsertCharPre (autotrigger, other completion plugins) sees it.
  return '%'
end

--- Binds (or unbinds) the shortcut for one buffer.
--- @param buf integer
--- @param client_id integer
--- @param shortcut string|vim.NIL|nil
local function bind(buf, client_id, shortcut)
  if not api.nvim_buf_is_valid(buf) then
    buf_maps[buf] = nil
    return
  end
  local lhs --- @type string?
  if type(shortcut) == 'string' and shortcut ~= '' and M.options().shortcut ~= false then
    local err
    lhs, err = M.keys(shortcut)
    if not lhs then
      warn_once(err or ('cannot bind shortcut %q'):format(shortcut))
    end
  end
  local cur = buf_maps[buf]
  if cur and lhs and cur.lhs == lhs and is_our_map(buf, lhs) then
    cur.client_id = client_id
    cur.shortcut = shortcut --[[@as string]]
    return
  end
  unbind(buf)
  if not lhs then
    return
  end
  if has_foreign_map(buf, lhs) then
    warn_once(
      ('buffer %d already has an insert-mode mapping for %s; shortcut not bound'):format(buf, lhs)
    )
    return
  end
  vim.keymap.set('i', lhs, function()
    return on_shortcut(lhs)
  end, { buffer = buf, expr = true, desc = MAP_DESC })
  buf_maps[buf] = { lhs = lhs, client_id = client_id, shortcut = shortcut --[[@as string]] }
end

--- The key currently bound in a buffer (Neovim notation), or nil.
--- @param buf? integer
--- @return string?
function M.bound_key(buf)
  buf = resolve_buf(buf or 0)
  local cur = buf_maps[buf]
  if cur and is_our_map(buf, cur.lhs) then
    return cur.lhs
  end
  return nil
end

-- ---------------------------------------------------------------------------
-- Client state
-- ---------------------------------------------------------------------------

--- @param client_id integer
--- @param result pi_snippets.LoadResult
--- @param bufs? integer[] buffers to rebind (default: all attached to the client)
local function remember(client_id, result, bufs)
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
      bind(buf, client_id, result.shortcut)
    end
  end
end

--- Last configuration reported by a client (the shape of `snippets/list`).
--- @param client_id? integer default: the first pi_snippets client of the current buffer
--- @return pi_snippets.LoadResult?
function M.loaded(client_id)
  if not client_id then
    local c = vim.lsp.get_clients({ bufnr = 0, name = M.name })[1]
      or vim.lsp.get_clients({ name = M.name })[1]
    client_id = c and c.id
  end
  return client_id and loaded[client_id] or nil
end

--- Handler for the server notification `snippets/didLoad`.
--- @param err lsp.ResponseError?
--- @param result pi_snippets.LoadResult
--- @param ctx lsp.HandlerContext
function M._on_did_load(err, result, ctx)
  if err or type(result) ~= 'table' then
    return
  end
  remember(ctx.client_id, result)
  api.nvim_exec_autocmds('User', {
    pattern = 'PiSnippetsLoaded',
    modeline = false,
    data = { client_id = ctx.client_id, result = result },
  })
end

--- With a 'completeopt' lacking noselect/noinsert, Neovim inserts the first
--- match as soon as the popup opens (on `%` with autotrigger). Give the buffer
--- a local value that only shows the menu, unless the user chose one for it.
--- @param buf integer
--- @param opts pi_snippets.Options
local function adjust_completeopt(buf, opts)
  if type(opts.completeopt) ~= 'string' then
    return
  end
  if api.nvim_get_option_value('completeopt', { scope = 'local', buf = buf }) ~= '' then
    return
  end
  local global = vim.split(vim.go.completeopt, ',', { plain = true })
  if vim.list_contains(global, 'noselect') or vim.list_contains(global, 'noinsert') then
    return
  end
  api.nvim_set_option_value('completeopt', opts.completeopt, { scope = 'local', buf = buf })
end

--- @param client vim.lsp.Client
--- @param buf integer
local function enable_completion(client, buf)
  local opts = M.options()
  if not opts.completion or (completion_bufs[client.id] or {})[buf] then
    return
  end
  if not client:supports_method('textDocument/completion', buf) then
    return
  end
  vim.lsp.completion.enable(true, client.id, buf, { autotrigger = opts.autotrigger })
  adjust_completeopt(buf, opts)
  completion_bufs[client.id] = completion_bufs[client.id] or {}
  completion_bufs[client.id][buf] = true
end

--- @param client vim.lsp.Client
--- @param buf integer
function M._on_attach(client, buf)
  enable_completion(client, buf)
  local known = loaded[client.id]
  if known then
    bind(buf, client.id, known.shortcut)
  end
  client:request('snippets/list', { uri = vim.uri_from_bufnr(buf) }, function(err, result)
    if err then
      warn_once(('snippets/list failed: %s'):format(err.message or vim.inspect(err)))
      return
    end
    remember(client.id, result, { buf })
  end, buf)
end

--- @param client_id integer
--- @param buf integer
function M._on_detach(client_id, buf)
  local cur = buf_maps[buf]
  if cur and cur.client_id == client_id then
    unbind(buf)
  end
  local bufs = completion_bufs[client_id]
  if bufs and bufs[buf] then
    bufs[buf] = nil
    if api.nvim_buf_is_valid(buf) then
      pcall(vim.lsp.completion.enable, false, client_id, buf)
    end
  end
end

local installed = false

--- Installs the LspAttach/LspDetach autocmds (idempotent).
function M._install()
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
      if client and client.name == M.name then
        M._on_attach(client, args.buf)
      end
    end,
  })
  api.nvim_create_autocmd('LspDetach', {
    group = group,
    desc = 'pi_snippets: remove shortcut',
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == M.name then
        M._on_detach(client.id, args.buf)
      elseif not client then
        M._on_detach(args.data.client_id, args.buf)
      end
    end,
  })
end

--- Optional configuration.
--- @param opts? pi_snippets.Options
function M.setup(opts)
  opts = opts or {}
  vim.validate('opts', opts, 'table')
  vim.validate('opts.completion', opts.completion, 'boolean', true)
  vim.validate('opts.autotrigger', opts.autotrigger, 'boolean', true)
  vim.validate('opts.shortcut', opts.shortcut, 'boolean', true)
  vim.validate('opts.completeopt', opts.completeopt, { 'string', 'boolean' }, true)
  setup_opts = vim.deepcopy(opts)
  M._install()
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    local result = loaded[client.id]
    for buf in pairs(client.attached_buffers) do
      enable_completion(client, buf)
      bind(buf, client.id, result and result.shortcut)
    end
  end
end

-- ---------------------------------------------------------------------------
-- Commands
-- ---------------------------------------------------------------------------

--- @param buf integer
--- @return vim.lsp.Client?
local function pick_client(buf)
  local client = vim.lsp.get_clients({ bufnr = buf, name = M.name })[1]
    or vim.lsp.get_clients({ name = M.name })[1]
  if not client then
    notify(
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

--- Expands `%name` markers in a buffer (or a line range) in place, through
--- the server's `snippets/expand`. The lines are replaced only when the server
--- reports a change and the buffer was not edited meanwhile.
--- @param opts? pi_snippets.ExpandOpts
function M.expand(opts)
  opts = opts or {}
  local buf = resolve_buf(opts.buf or 0)
  local line1 = opts.line1 or 1
  local line2 = opts.line2 or api.nvim_buf_line_count(buf)
  local client = pick_client(buf)
  if not client then
    return
  end
  local lines = api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  local tick = api.nvim_buf_get_changedtick(buf)
  local params = { text = table.concat(lines, '\n'), uri = vim.uri_from_bufnr(buf) }
  client:request('snippets/expand', params, function(err, result)
    local function done(changed)
      if opts.on_done then
        opts.on_done(changed)
      end
    end
    if err then
      notify(('snippets/expand failed: %s'):format(err.message or ''), vim.log.levels.ERROR)
      return done(false)
    end
    if type(result) ~= 'table' or not result.changed then
      notify('nothing to expand')
      return done(false)
    end
    if not api.nvim_buf_is_valid(buf) or api.nvim_buf_get_changedtick(buf) ~= tick then
      notify('buffer changed during expansion; nothing replaced', vim.log.levels.WARN)
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

--- @param result pi_snippets.LoadResult
--- @return string
local function shortcut_summary(result)
  if type(result.shortcut) ~= 'string' then
    return 'no shortcut'
  end
  local lhs = M.keys(result.shortcut)
  return ('shortcut %s%s'):format(result.shortcut, lhs and (' = ' .. lhs) or ' (not bindable)')
end

--- Shows the snippets (name and preview) the server has loaded.
--- @param opts? { buf?: integer }
function M.list(opts)
  opts = opts or {}
  local buf = resolve_buf(opts.buf or 0)
  local client = pick_client(buf)
  if not client then
    return
  end
  client:request('snippets/list', { uri = vim.uri_from_bufnr(buf) }, function(err, result)
    if err then
      notify(('snippets/list failed: %s'):format(err.message or ''), vim.log.levels.ERROR)
      return
    end
    local snippets = result.snippets or {}
    local chunks = {
      {
        ('%s%d snippet%s, %s, expandOnCompletion %s\n'):format(
          PREFIX,
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
--- @param opts? { buf?: integer, on_done?: fun(result: pi_snippets.LoadResult?) }
function M.reload(opts)
  opts = opts or {}
  local buf = resolve_buf(opts.buf or 0)
  local client = pick_client(buf)
  if not client then
    return
  end
  client:request('snippets/reload', vim.empty_dict(), function(err, result)
    if err then
      notify(('snippets/reload failed: %s'):format(err.message or ''), vim.log.levels.ERROR)
      if opts.on_done then
        opts.on_done(nil)
      end
      return
    end
    remember(client.id, result)
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
    notify(msg, #warnings > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
    if opts.on_done then
      opts.on_done(result)
    end
  end, buf)
end

return M
