-- The editor features in a real Neovim: K shows the snippet, gra's "Expand snippet
-- markers" edits the buffer, CTRL-] (the LSP tagfunc) jumps to the snippet's key,
-- :PiSnippetsSave and the "Save selection as snippet" action ask for a name and the
-- snippet completes right after (the settings buffer left unsaved), and a bad settings
-- file shows its diagnostic on the right line while other JSON files get no server.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

--- Lines of the first floating window, once one is open.
local function float_lines()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
    end
  end
end

local function close_floats()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      vim.api.nvim_win_close(win, true)
    end
  end
end

--- Whether the server has a snippet named `name` (snippets/list).
local function has_snippet(client, buf, name)
  local response = client:request_sync('snippets/list', vim.empty_dict(), 5000, buf)
  for _, snippet in ipairs(response and response.result and response.result.snippets or {}) do
    if snippet.name == name then
      return true
    end
  end
  return nil
end

--- Completion labels at (row 0-based, col bytes) of buf.
local function labels(client, buf, row, col)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = row, character = col },
  }
  local response = client:request_sync('textDocument/completion', params, 5000, buf)
  local result = response and response.result or {}
  local found = {}
  for _, item in ipairs(result.items or result) do
    found[#found + 1] = item.label
  end
  return found
end

H.run('features', function()
  H.setup_rtp()
  local notes = H.capture_notify()
  local settings_text = table.concat({
    '{',
    '  "theme": "😀 中文",',
    '  "piSimpleSnippets": {',
    '    "snippets": {',
    '      "greet": "Hello `there`\\n# not a heading",',
    '      "sig": "Best regards"',
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
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '中文 %greet and %sig.', 'x%greet %%sig' })

  -- K: vim.lsp.buf.hover() shows the whole value, fenced, and the file it is from.
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %gr' })
  vim.lsp.buf.hover()
  H.wait(float_lines, 'the hover window')
  local shown = table.concat(float_lines(), '\n')
  H.ok(shown:find('Hello `there`', 1, true), 'hover shows the value literally: ' .. shown)
  H.ok(shown:find('# not a heading', 1, true), 'the # line stays text: ' .. shown)
  H.ok(shown:find(settings, 1, true), 'hover names the file: ' .. shown)
  close_floats()

  -- Semantic tokens: the two markers and the escape, nothing else.
  H.wait(function()
    return #vim.lsp.semantic_tokens.get_at_pos(buf, 0, #'中文 %g') > 0
  end, 'a semantic token on %greet')
  H.eq(#vim.lsp.semantic_tokens.get_at_pos(buf, 1, 2), 0, 'x%greet has no token')
  local escape = vim.lsp.semantic_tokens.get_at_pos(buf, 1, #'x%greet %%')
  H.eq(escape[1] and escape[1].type, 'string', 'the escape is a string token')

  -- gra: "Expand snippet markers" on the marker under the cursor.
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %greet and %s' })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title == 'Expand snippet markers'
    end,
  })
  H.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == '中文 %greet and Best regards.'
  end, 'the expansion of %sig to be applied')

  -- CTRL-] through the LSP tagfunc: the key of "greet" in the settings file.
  H.eq(vim.bo[buf].tagfunc, 'v:lua.vim.lsp.tagfunc', 'LSP tagfunc set')
  vim.api.nvim_win_set_cursor(0, { 1, #'中文 %gr' })
  vim.cmd('execute "normal! \\<C-]>"')
  H.eq(vim.fs.normalize(vim.api.nvim_buf_get_name(0)), settings, 'jumped to the settings file')
  H.eq(vim.api.nvim_win_get_cursor(0), { 5, 6 }, 'on the key of "greet"')
  local settings_buf = vim.api.nvim_get_current_buf()

  -- The settings file attached too (for its diagnostics): it is fine, so none.
  H.wait(function()
    return #vim.lsp.get_clients({ bufnr = settings_buf, name = 'pi_snippets' }) == 1
  end, 'pi_snippets to attach to the settings file')
  H.eq(vim.lsp.get_clients({ bufnr = settings_buf })[1].id, client.id, 'the same server')
  vim.cmd('buffer ' .. buf)

  -- :PiSnippetsSave asks for a name (vim.ui.input) and the snippet completes at once.
  local asked = {}
  vim.ui.input = function(opts, on_confirm)
    asked[#asked + 1] = opts.prompt
    on_confirm(#asked == 1 and 'review' or '')
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'Review this diff carefully', '' })
  vim.cmd('1PiSnippetsSave')
  H.wait(function()
    return has_snippet(client, buf, 'review')
  end, '%review to be saved')
  H.eq(#asked, 1, 'asked for the name once')
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '%rev' })
  H.eq(labels(client, buf, 1, 4), { '%review' }, '%rev completes to the saved snippet')
  H.ok(vim.bo[settings_buf].modified, 'the settings buffer is edited')
  H.eq(H.read(settings), settings_text, 'and not saved: the disk is unchanged')

  -- The code action "Save selection as snippet" asks too; empty: a derived name.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'Use your MCP tools', '' })
  vim.lsp.buf.code_action({
    apply = true,
    range = { start = { 1, 0 }, ['end'] = { 1, 18 } },
    filter = function(action)
      return action.title == 'Save selection as snippet'
    end,
  })
  H.wait(function()
    return has_snippet(client, buf, 'use-your-mcp')
  end, '%use-your-mcp to be saved')
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '%use-y' })
  H.eq(labels(client, buf, 1, 6), { '%use-your-mcp' }, 'completes at once')
  H.eq(#asked, 2, 'the action asked for the name')
  local edited = table.concat(vim.api.nvim_buf_get_lines(settings_buf, 0, -1, false), '\n')
  H.ok(
    edited:find('"sig": "Best regards",\n      "review": "Review this diff carefully",', 1, true),
    'saved in the file style: ' .. edited
  )
  H.ok(edited:find('"theme": "😀 中文",', 1, true), 'other keys kept: ' .. edited)

  -- A bad settings file shows its diagnostic on the right line.
  local bad_project = H.project()
  vim.fn.mkdir(bad_project .. '/.pi', 'p')
  local bad = bad_project .. '/.pi/settings.json'
  H.write(bad, '{\n  "piSimpleSnippets": {\n    "snippets": {\n      "Bad Name": "x"\n    }\n  }\n}\n')
  vim.cmd.edit(vim.fn.fnameescape(bad))
  local bad_buf = vim.api.nvim_get_current_buf()
  H.wait(function()
    return #vim.diagnostic.get(bad_buf) > 0
  end, 'the diagnostic of the bad settings file')
  local diagnostic = vim.diagnostic.get(bad_buf)[1]
  H.eq({ diagnostic.lnum, diagnostic.col, diagnostic.end_col }, { 3, 6, 16 }, 'on the bad key')
  H.ok(diagnostic.message:find('"Bad Name" (invalid name)', 1, true), diagnostic.message)
  H.eq(diagnostic.source, 'pi-simple-snippets', 'source')

  -- Any other JSON file: no server at all.
  local other = project .. '/package.json'
  H.write(other, '{"Bad Name": ""}\n')
  vim.cmd.edit(vim.fn.fnameescape(other))
  vim.wait(500)
  H.eq(#vim.lsp.get_clients({ bufnr = 0, name = 'pi_snippets' }), 0, 'no client on package.json')
  for _, note in ipairs(notes) do
    H.ok(note.level ~= vim.log.levels.ERROR, 'no error: ' .. note.msg)
  end
end)
