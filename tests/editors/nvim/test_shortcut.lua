-- The shortcut typed as real keys in a child Neovim: in a normal window it
-- inserts % and opens the popup; in a floating window or a prompt buffer the
-- key passes through unchanged.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

H.run('shortcut', function()
  H.agent_dir({
    shortcut = 'ctrl+shift+s',
    snippets = { ['use-mcp'] = 'Use your MCP tools', sig = 'Best regards' },
  })
  local project = H.project()
  local c = H.child()
  c:open(project .. '/prompt.md')
  c:wait([[return require('pi_snippets').bound_key(0) == '<C-S-s>']], 'the shortcut mapping')

  -- Reference: what the key does in a buffer without the mapping.
  c:lua([[
    local buf = vim.api.nvim_create_buf(false, true)
    _G.__plain = buf
    vim.api.nvim_open_win(buf, true, { split = 'below' })
  ]])
  c:input('iab<C-S-s>cd<Esc>')
  local plain = c:wait([[
    local l = vim.api.nvim_buf_get_lines(0, 0, -1, false)[1]
    return l:find('cd', 1, true) and l
  ]], 'typing in the plain buffer')
  c:lua([[vim.cmd.close()]])
  H.ok(not plain:find('%', 1, true), 'no % without the mapping: ' .. plain)
  io.stdout:write('unmapped <C-S-s> typed: ' .. vim.inspect(plain) .. '\n')

  -- Normal window: the shortcut types % and the completion popup opens.
  c:input('iPlease <C-S-s>')
  c:wait([[return vim.fn.pumvisible() == 1]], 'the popup after the shortcut')
  H.eq(c:lua([[return vim.api.nvim_get_current_line()]]), 'Please %', 'the shortcut inserted %')
  H.eq(c:eval([[mode()]]), 'i', 'still in insert mode')
  local words = c:lua([[
    return vim.tbl_map(function(i) return i.abbr end, vim.fn.complete_info({ 'items' }).items)
  ]])
  H.eq(words, { '%sig', '%use-mcp' }, 'popup items in name order')
  -- Filter and accept like a user.
  c:input('us<C-n><C-y>')
  c:wait([[return vim.api.nvim_get_current_line() == 'Please %use-mcp']], 'accepting %use-mcp')
  c:input('<Esc>')

  -- Floating window on the same (attached) buffer: the key passes through.
  c:lua([[
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { '' })
    _G.__float = vim.api.nvim_open_win(0, true, {
      relative = 'editor', row = 1, col = 1, width = 40, height = 3,
    })
  ]])
  H.eq(c:lua([[return vim.api.nvim_win_get_config(0).relative]]), 'editor', 'in the float')
  c:input('iab<C-S-s>cd<Esc>')
  local in_float = c:wait([[
    local l = vim.api.nvim_get_current_line()
    return l:find('cd', 1, true) and l
  ]], 'typing in the float')
  H.eq(in_float, plain, 'the float got the unmapped key, not %')
  H.eq(c:eval('pumvisible()'), 0, 'no popup in the float')
  c:lua([[vim.api.nvim_win_close(_G.__float, true)]])

  -- The same buffer in the normal window still works afterwards.
  c:lua([[vim.api.nvim_buf_set_lines(0, 0, -1, false, { '' })]])
  c:input('i<C-S-s>')
  c:wait([[return vim.fn.pumvisible() == 1]], 'the popup again in the normal window')
  H.eq(c:lua([[return vim.api.nvim_get_current_line()]]), '%', '% again')
  c:input('<C-e><Esc>')

  -- A prompt buffer attached to the server: the key passes through.
  c:lua([[
    local client = vim.lsp.get_clients({ bufnr = 0, name = 'pi_snippets' })[1]
    vim.cmd('botright new')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype = 'prompt'
    vim.fn.prompt_setprompt(buf, '> ')
    vim.lsp.buf_attach_client(buf, client.id)
  ]])
  c:wait(
    [[return require('pi_snippets').bound_key(0) == '<C-S-s>']],
    'mapping in the prompt buffer'
  )
  c:input('iab<C-S-s>cd')
  local prompt_line = c:wait([[
    local l = vim.api.nvim_get_current_line()
    return l:find('cd', 1, true) and l
  ]], 'typing in the prompt buffer')
  H.eq(prompt_line, '> ' .. plain, 'the prompt buffer got the unmapped key')
  H.eq(c:eval('pumvisible()'), 0, 'no popup in the prompt buffer')

  -- With autotrigger off, the shortcut still opens the popup (vim.lsp.completion.get()).
  local c2 = H.child()
  c2:lua([[require('pi_snippets').setup({ autotrigger = false })]])
  c2:open(project .. '/other.md')
  c2:wait(
    [[return require('pi_snippets').bound_key(0) == '<C-S-s>']],
    'the mapping (no autotrigger)'
  )
  H.eq(c2:lua([[return vim.bo.completeopt]]), 'menu,menuone,noselect,popup', "local 'completeopt'")
  c2:input('iSee <C-S-s>')
  c2:wait([[return vim.fn.pumvisible() == 1]], 'the popup without autotrigger')
  H.eq(c2:lua([[return vim.api.nvim_get_current_line()]]), 'See %', 'only % inserted')
  c2:input('<C-n><C-y>')
  c2:wait([[return vim.api.nvim_get_current_line() == 'See %sig']], 'accepting %sig')
end)
