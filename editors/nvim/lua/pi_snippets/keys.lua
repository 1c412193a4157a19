--- pi_snippets.keys: the shortcut. Translates Pi's shortcut notation
--- (`ctrl+shift+s`) into Neovim key notation (`<C-S-s>`) and owns the
--- buffer-local Insert-mode mapping that types `%` when the key is pressed.

local util = require('pi_snippets.util')

local M = {}

local api = vim.api

--- Description of our mappings: how a mapping is recognised as ours.
local MAP_DESC = 'pi_snippets: type % and open snippet completion'

--- Shortcut mapping we own in each buffer.
--- @type table<integer, { lhs: string, client_id: integer, shortcut: string }>
local buf_maps = {}

-- ---------------------------------------------------------------------------
-- Translation
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
function M.translate(shortcut)
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
-- Binding
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

--- Removes our mapping from a buffer. With `client_id`, only when that client
--- made it: another pi_snippets client attached to the buffer keeps its key.
--- @param buf integer
--- @param client_id? integer
function M.unbind(buf, client_id)
  local cur = buf_maps[buf]
  if not cur or (client_id and cur.client_id ~= client_id) then
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
  return #vim.lsp.get_clients({ bufnr = 0, name = util.name }) > 0
end

--- The expr-mapping body: `%` when the shortcut may act, else the key itself.
--- @param lhs string
--- @return string
local function on_shortcut(lhs)
  if not shortcut_may_act() then
    return lhs -- pass the key through unchanged (the mapping is noremap)
  end
  local buf = api.nvim_get_current_buf()
  -- Required here, not at the top: the client glue requires this module.
  local ours = require('pi_snippets.client').completion_enabled(buf)
  if ours and not util.options().autotrigger then
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

--- Binds (or unbinds) the shortcut for one buffer. A shortcut Neovim cannot
--- bind, or a key the buffer already maps, is reported once and left unbound.
--- @param buf integer
--- @param client_id integer
--- @param shortcut string|vim.NIL|nil
function M.bind(buf, client_id, shortcut)
  if not api.nvim_buf_is_valid(buf) then
    buf_maps[buf] = nil
    return
  end
  local lhs --- @type string?
  if type(shortcut) == 'string' and shortcut ~= '' and util.options().shortcut ~= false then
    local err
    lhs, err = M.translate(shortcut)
    if not lhs then
      util.warn_once(err or ('cannot bind shortcut %q'):format(shortcut))
    end
  end
  local cur = buf_maps[buf]
  if cur and lhs and cur.lhs == lhs and is_our_map(buf, lhs) then
    cur.client_id = client_id
    cur.shortcut = shortcut --[[@as string]]
    return
  end
  M.unbind(buf)
  if not lhs then
    return
  end
  if has_foreign_map(buf, lhs) then
    util.warn_once(
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
  buf = util.resolve_buf(buf or 0)
  local cur = buf_maps[buf]
  if cur and is_our_map(buf, cur.lhs) then
    return cur.lhs
  end
  return nil
end

return M
