-- Managing snippets in a real Neovim: a typo's hint and its quick fix, vim.lsp.buf.rename
-- (prepareRename, then the edit of the settings file and of every marker, the settings
-- buffer left unsaved), references (the key and the uses) and workspace symbols (Pi's
-- ranking, the preview beside the name).
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

H.run('manage', function()
  H.setup_rtp()
  local notes = H.capture_notify()
  local settings_text = table.concat({
    '{',
    '  "theme": "😀 中文",',
    '  "piSimpleSnippets": {',
    '    "snippets": {',
    '      "review": "Review this change",',
    '      "rebase": "Rebase it on main"',
    '    }',
    '  }',
    '}',
    '',
  }, '\n')
  local settings = H.agent_dir(nil)
  H.write(settings, settings_text)
  H.enable()
  local project = H.project()
  local client, buf = H.open(project .. '/prompt.md')
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {
    '中文 %review and (%review).',
    'x%review %%review %reveiw',
  })

  -- The typo gets one Hint, on its span, naming the snippet.
  H.wait(function()
    return #vim.diagnostic.get(buf) == 1
  end, 'the hint of %reveiw')
  local hint = vim.diagnostic.get(buf)[1]
  H.eq(hint.severity, vim.diagnostic.severity.HINT, 'severity Hint')
  H.eq(
    { hint.lnum, hint.col, hint.end_col },
    { 1, #'x%review %%review ', #'x%review %%review %reveiw' },
    'on %reveiw'
  )
  H.eq(hint.message, 'unknown snippet %reveiw; did you mean %review?', 'the message')

  -- Its quick fix.
  vim.api.nvim_win_set_cursor(0, { 2, #'x%review %%review %rev' })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.kind == 'quickfix'
    end,
  })
  H.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == 'x%review %%review %review'
  end, 'the quick fix to be applied')
  H.wait(function()
    return #vim.diagnostic.get(buf) == 0
  end, 'the hint to go')

  -- References: the key first, then every use (not x%review, not the escape).
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %rev' })
  local refs
  vim.lsp.buf.references({ includeDeclaration = true }, {
    on_list = function(list)
      refs = list.items
    end,
  })
  H.wait(function()
    return refs
  end, 'the references')
  local where = {}
  for _, item in ipairs(refs) do
    local file = vim.fs.normalize(item.filename) == settings and 'settings' or 'prompt'
    where[#where + 1] = { file, item.lnum, item.col }
  end
  H.eq(where, {
    { 'settings', 5, 7 },
    { 'prompt', 1, #'中文 ' + 1 },
    { 'prompt', 1, #'中文 %review and (' + 1 },
    { 'prompt', 2, #'x%review %%review ' + 1 },
  }, 'the key and the three uses')

  -- Workspace symbols: Pi's ranking of "re", the preview beside the name.
  local symbols
  vim.lsp.buf.workspace_symbol('re', {
    on_list = function(list)
      symbols = list.items
    end,
  })
  H.wait(function()
    return symbols
  end, 'the workspace symbols')
  local texts = {}
  for _, item in ipairs(symbols) do
    texts[#texts + 1] = item.text
  end
  H.eq(texts, { '[Key] %rebase', '[Key] %review' }, 'both snippets, in Pi\'s order')
  H.eq(vim.fs.normalize(symbols[2].filename), settings, 'in the settings file')
  H.eq(symbols[2].lnum, 5, 'on the line of the key of review')

  -- Rename from a marker: the key and every use, through vim.lsp.buf.rename.
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %review and (%re' })
  vim.lsp.buf.rename('code-review')
  H.wait(function()
    local first = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
    return first == '中文 %code-review and (%code-review).'
  end, 'the markers to be renamed')
  H.eq(
    vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1],
    'x%review %%review %code-review',
    'x%review and the escape left alone'
  )
  local settings_buf = vim.fn.bufnr(settings)
  H.ok(settings_buf > 0, 'the settings file is loaded in a buffer')
  local lines = vim.api.nvim_buf_get_lines(settings_buf, 0, -1, false)
  local edited = table.concat(lines, '\n') .. '\n'
  H.eq(edited, settings_text:gsub('"review":', '"code-review":'), 'the key renamed, nothing else')
  H.ok(vim.bo[settings_buf].modified, 'the settings buffer is edited')
  H.eq(H.read(settings), settings_text, 'and not saved: the disk is unchanged')

  -- Saving it makes the new name live.
  vim.api.nvim_buf_call(settings_buf, function()
    vim.cmd('silent write')
  end)
  H.wait(function()
    local response = client:request_sync('snippets/expand', { text = '%code-review' }, 5000, buf)
    return response and response.result and response.result.text == 'Review this change'
  end, '%code-review to expand after the save')

  -- A bad new name is refused with the reason.
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %co' })
  vim.lsp.buf.rename('rebase')
  H.wait(function()
    for _, note in ipairs(notes) do
      if note.msg:find('a snippet named "rebase" already exists', 1, true) then
        return true
      end
    end
  end, 'the refusal of a taken name')
  H.eq(
    vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1],
    '中文 %code-review and (%code-review).',
    'nothing renamed'
  )
end)
