-- :PiSnippetsEdit in a real Neovim: the snippet under the cursor opens in a buffer of its
-- own, unescaped (quotes, backslashes, line breaks, %, non-ASCII); :write puts it back in
-- the settings file, escaped, through the server's edit (the settings buffer written, as it
-- had no unsaved change), and it expands at once; without a marker under the cursor a
-- picker names the snippet; a settings file changed meanwhile refuses the write and the
-- buffer keeps what was typed.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

H.run('edit', function()
  H.setup_rtp()
  local notes = H.capture_notify()
  local old_token = [["Say \"hi\" to C:\\dir,\n100% caf\u00e9 😀"]]
  local settings_text = table.concat({
    '{',
    '  "theme": "😀 中文",',
    '  "piSimpleSnippets": {',
    '    "snippets": {',
    '      "tricky": ' .. old_token .. ',',
    '      "other": "Other"',
    '    }',
    '  }',
    '}',
    '',
  }, '\n')
  local old = 'Say "hi" to C:\\dir,\n100% café 😀'
  local settings = H.agent_dir(nil)
  H.write(settings, settings_text)
  H.enable()
  local project = H.project()
  local client, buf = H.open(project .. '/prompt.md')
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '中文 %tricky and more' })

  local function written()
    local result
    vim.api.nvim_create_autocmd('User', {
      pattern = 'PiSnippetsEditWritten',
      once = true,
      callback = function(ev)
        result = ev.data
      end,
    })
    return function()
      return result
    end
  end

  -- The marker under the cursor opens, unescaped, split at line breaks only.
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %tri' })
  vim.cmd('PiSnippetsEdit')
  H.wait(function()
    return vim.api.nvim_buf_get_name(0) == 'pisnippet://tricky'
  end, 'the snippet buffer')
  local edit_buf = vim.api.nvim_get_current_buf()
  H.eq(vim.api.nvim_buf_get_lines(edit_buf, 0, -1, false), { 'Say "hi" to C:\\dir,', '100% café 😀' }, 'its lines')
  H.eq(table.concat(vim.api.nvim_buf_get_lines(edit_buf, 0, -1, false), '\n'), old, 'the value exactly')
  H.eq(vim.bo[edit_buf].buftype, 'acwrite', 'a buffer :write sends to the server')
  H.ok(not vim.bo[edit_buf].modified, 'unmodified when opened')

  -- :write puts the new text back, escaped, and the settings file is saved.
  local new_lines = { 'New "quoted" \\n stays, C:\\\\x', '  100%% 中文 😀', '\tend', '' }
  local new = table.concat(new_lines, '\n')
  vim.api.nvim_buf_set_lines(edit_buf, 0, -1, false, new_lines)
  local done = written()
  vim.cmd('write')
  H.wait(done, 'the write to be answered')
  H.eq(done().ok, true, 'the write succeeded')
  H.ok(not vim.bo[edit_buf].modified, 'the snippet buffer is saved')
  local new_token = [["New \"quoted\" \\n stays, C:\\\\x\n  100%% 中文 😀\n\tend\n"]]
  H.wait(function()
    return H.read(settings) == settings_text:gsub(vim.pesc(old_token), (new_token:gsub('%%', '%%%%')))
  end, 'the settings file on disk to hold the new token, every other byte kept')
  H.eq(vim.json.decode(H.read(settings)).piSimpleSnippets.snippets.tricky, new, 'JSON.parse reads it exactly')
  H.wait(function()
    local response = client:request_sync('snippets/expand', { text = '%tricky' }, 5000, buf)
    return response and response.result and response.result.text == new
  end, '%tricky to expand to the new text')

  -- Opened again: exactly what was typed.
  vim.cmd('PiSnippetsEdit tricky')
  H.wait(function()
    return table.concat(vim.api.nvim_buf_get_lines(edit_buf, 0, -1, false), '\n') == new
  end, 'the new value when opened again')

  -- Nothing under the cursor: a picker names the snippet.
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %tricky and mo' })
  local offered
  vim.ui.select = function(items, _, on_choice)
    offered = items
    on_choice('other')
  end
  vim.cmd('PiSnippetsEdit')
  H.wait(function()
    return vim.api.nvim_buf_get_name(0) == 'pisnippet://other'
  end, 'the picked snippet to open')
  H.eq(offered, { 'other', 'tricky' }, 'the picker lists the snippets')
  local other_buf = vim.api.nvim_get_current_buf()
  H.eq(vim.api.nvim_buf_get_lines(other_buf, 0, -1, false), { 'Other' }, 'its value')

  -- The settings file changes meanwhile (its buffer, unsaved): the write is refused,
  -- the typed text stays in the snippet buffer, the hand edit in the settings buffer.
  local settings_buf = vim.fn.bufnr(settings)
  H.ok(settings_buf > 0, 'the settings file is in a buffer')
  local lines = vim.api.nvim_buf_get_lines(settings_buf, 0, -1, false)
  for i, line in ipairs(lines) do
    if line:find('"other"', 1, true) then
      lines[i] = '      "other": "Changed by hand"'
    end
  end
  vim.api.nvim_buf_set_lines(settings_buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_lines(other_buf, 0, -1, false, { 'Mine' })
  done = written()
  vim.cmd('write')
  H.wait(done, 'the refused write to be answered')
  H.eq(done().ok, false, 'refused')
  H.ok(vim.bo[other_buf].modified, 'the snippet buffer keeps the typed text, unsaved')
  H.eq(vim.api.nvim_buf_get_lines(other_buf, 0, -1, false), { 'Mine' }, 'the typed text')
  local refused = false
  for _, note in ipairs(notes) do
    if note.msg:find('%other was changed in', 1, true) and note.msg:find('not saved', 1, true) then
      refused = true
    end
  end
  H.ok(refused, 'the user is told why')
  H.ok(
    table.concat(vim.api.nvim_buf_get_lines(settings_buf, 0, -1, false), '\n'):find('Changed by hand', 1, true),
    'the hand edit is kept'
  )

  -- The settings buffer has unsaved changes of its own: the edit goes into that buffer
  -- beside them, and it is not written for the user.
  local disk_before = H.read(settings)
  vim.cmd('PiSnippetsEdit tricky')
  H.wait(function()
    return vim.api.nvim_buf_get_name(0) == 'pisnippet://tricky'
  end, 'tricky to open again')
  vim.api.nvim_buf_set_lines(edit_buf, 0, -1, false, { 'Third text' })
  done = written()
  vim.cmd('write')
  H.wait(done, 'the write beside unsaved changes')
  H.eq(done().ok, true, 'the write succeeded')
  local settings_now = table.concat(vim.api.nvim_buf_get_lines(settings_buf, 0, -1, false), '\n')
  H.ok(settings_now:find('"tricky": "Third text"', 1, true), 'the value edited in the settings buffer')
  H.ok(settings_now:find('Changed by hand', 1, true), 'beside the unsaved hand edit')
  H.ok(vim.bo[settings_buf].modified, 'the settings buffer is left unsaved')
  H.eq(H.read(settings), disk_before, 'the disk is unchanged')
  local told = false
  for _, note in ipairs(notes) do
    if note.msg:find('saved %tricky in', 1, true) and note.msg:find('write it to keep it', 1, true) then
      told = true
    end
  end
  H.ok(told, 'the user is told to write the settings file')
end)
