-- Rebinding the shortcut after a reload (:PiSnippetsReload), removing it when
-- the settings drop it, and warning once for a key Neovim cannot express.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

--- @param buf integer
--- @param lhs string
--- @return string rhs description or ''
local function imap_desc(buf, lhs)
  local want = vim.keycode(lhs)
  for _, m in ipairs(vim.api.nvim_buf_get_keymap(buf, 'i')) do
    if vim.keycode(m.lhs) == want then
      return m.desc or '?'
    end
  end
  return ''
end

H.run('reload', function()
  H.setup_rtp()
  local notes = H.capture_notify()
  local snippets = { ['use-mcp'] = 'Use your MCP tools', sig = 'Best regards' }
  local settings = H.agent_dir({ shortcut = 'ctrl+shift+s', snippets = snippets })
  H.enable()
  local project = H.project()
  local _, md = H.open(project .. '/a.md')
  local _, txt = H.open(project .. '/b.txt')
  local ps = require('pi_snippets')
  H.wait(function()
    return ps.bound_key(md) == '<C-S-s>' and ps.bound_key(txt) == '<C-S-s>'
  end, 'the first binding in both buffers')

  local loads = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'PiSnippetsLoaded',
    callback = function()
      loads = loads + 1
    end,
  })

  -- New shortcut: old key unmapped, new key mapped, in every attached buffer.
  H.write_settings(settings, { shortcut = 'alt+x', snippets = snippets })
  vim.cmd('PiSnippetsReload')
  H.wait(function()
    return ps.bound_key(md) == '<M-x>' and ps.bound_key(txt) == '<M-x>'
  end, 'alt+x to be bound')
  for _, buf in ipairs({ md, txt }) do
    H.eq(imap_desc(buf, '<C-S-s>'), '', 'old key unmapped in buffer ' .. buf)
    H.ok(imap_desc(buf, '<M-x>') ~= '', 'new key mapped in buffer ' .. buf)
  end
  H.wait(function()
    return loads > 0
  end, 'snippets/didLoad after the reload')
  H.wait(function()
    for _, n in ipairs(notes) do
      if n.msg:find('reloaded 2 snippets', 1, true) then
        return true
      end
    end
  end, 'the reload report')

  -- Shortcut removed: no mapping left.
  H.write_settings(settings, { snippets = snippets })
  vim.cmd('PiSnippetsReload')
  H.wait(function()
    return ps.bound_key(md) == nil and ps.bound_key(txt) == nil
  end, 'the mapping to be removed')
  H.eq(imap_desc(md, '<M-x>'), '', 'alt+x unmapped')

  -- A key Neovim cannot express: one warning, nothing bound, even after reloads.
  H.write_settings(settings, { shortcut = 'ctrl+clear', snippets = snippets })
  local seen_before = #notes
  for _ = 1, 2 do
    local done = false
    ps.reload({
      on_done = function()
        done = true
      end,
    })
    H.wait(function()
      return done
    end, 'reload with ctrl+clear')
  end
  H.eq(ps.loaded().shortcut, 'ctrl+clear', 'the server accepts ctrl+clear')
  H.eq(ps.bound_key(md), nil, 'ctrl+clear is not bound')
  H.eq(vim.api.nvim_buf_get_keymap(md, 'i'), {}, 'no insert mapping at all')
  local clear_warnings = 0
  for i = seen_before + 1, #notes do
    if notes[i].msg:find('clear', 1, true) and notes[i].level == vim.log.levels.WARN
      and not notes[i].msg:find('reloaded', 1, true) then
      clear_warnings = clear_warnings + 1
    end
  end
  H.eq(clear_warnings, 1, 'exactly one warning for ctrl+clear')

  -- Bindable again after that.
  H.write_settings(settings, { shortcut = 'ctrl+alt+p', snippets = snippets })
  vim.cmd('PiSnippetsReload')
  H.wait(function()
    return ps.bound_key(md) == '<C-M-p>' and ps.bound_key(txt) == '<C-M-p>'
  end, 'ctrl+alt+p to be bound')

  -- Warnings from the server are reported by :PiSnippetsReload.
  H.write_settings(settings, { snippets = { ['Bad Name'] = 'x', sig = 'Best regards' } })
  seen_before = #notes
  vim.cmd('PiSnippetsReload')
  H.wait(function()
    for i = seen_before + 1, #notes do
      if notes[i].msg:find('reloaded 1 snippet', 1, true) then
        return notes[i].level == vim.log.levels.WARN
      end
    end
  end, 'a reload report with warnings')
  H.eq(ps.bound_key(md), nil, 'no shortcut configured any more')

  -- Without a command: the server notices the edited file (didLoad) by itself.
  H.write_settings(settings, { shortcut = 'alt+y', snippets = snippets })
  H.wait(function()
    return ps.bound_key(md) == '<M-y>' and ps.bound_key(txt) == '<M-y>'
  end, 'the rebinding after the server reloads an edited settings file', 15000)
end)
