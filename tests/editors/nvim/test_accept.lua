-- Accepting items for real in a child Neovim (autotrigger popup, CTRL-N CTRL-Y),
-- so Neovim's own vim.lsp.completion / vim.snippet.expand apply the textEdit.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

--- Types `keys` in Insert mode, waits for the popup, selects the first item
--- and accepts it.
--- @param c pi_snippets_test.Child
--- @param keys string
local function type_and_accept(c, keys)
  c:input(keys)
  c:wait([[return vim.fn.pumvisible() == 1]], 'the popup after ' .. keys)
  c:input('<C-n><C-y>')
end

H.run('accept', function()
  local settings = H.agent_dir({
    snippets = {
      ['use-mcp'] = 'Use your MCP tools to find the information',
      env = 'echo $HOME ${1:x} \\ } $0 end',
      multi = 'Line one\r\nLine two\rLine three\n  indented four',
    },
  })
  local project = H.project()
  local c = H.child()
  c:open(project .. '/prompt.md')

  -- Marker; text after the cursor stays, cursor lands after the insertion.
  c:lua([[vim.api.nvim_buf_set_lines(0, 0, -1, false, { ' tail' })]])
  type_and_accept(c, 'iPlease %use')
  c:wait([[return vim.api.nvim_get_current_line() == 'Please %use-mcp tail']], 'marker accepted')
  c:input('.<Esc>')
  c:wait(
    [[return vim.api.nvim_get_current_line() == 'Please %use-mcp. tail']],
    'cursor after marker'
  )

  -- expandOnCompletion: switch it on and reload.
  H.write_settings(settings, {
    expandOnCompletion = true,
    snippets = {
      ['use-mcp'] = 'Use your MCP tools to find the information',
      env = 'echo $HOME ${1:x} \\ } $0 end',
      multi = 'Line one\r\nLine two\rLine three\n  indented four',
    },
  })
  c:lua([[vim.cmd('PiSnippetsReload')]])
  c:wait([[
    local r = require('pi_snippets').loaded()
    return r and r.expandOnCompletion == true
  ]], 'expandOnCompletion after :PiSnippetsReload')

  -- A value with $HOME ${1:x} \ } $0 arrives literally (no placeholders).
  c:lua([[vim.api.nvim_buf_set_lines(0, 0, -1, false, { '' })]])
  type_and_accept(c, 'iRun %env')
  c:wait(
    [[return vim.api.nvim_get_current_line() == 'Run echo $HOME ${1:x} \\ } $0 end']],
    'literal value accepted'
  )
  c:input('!<Esc>')
  c:wait(
    [[return vim.api.nvim_get_current_line() == 'Run echo $HOME ${1:x} \\ } $0 end!']],
    'cursor after the literal value'
  )
  H.eq(c:lua([[return vim.snippet.active()]]), false, 'no snippet session (no placeholders)')

  -- Multi-line value: CRLF and CR become new lines; cursor after the last line.
  c:lua([[vim.api.nvim_buf_set_lines(0, 0, -1, false, { '' })]])
  type_and_accept(c, 'iPre %multi')
  c:wait([[return #vim.api.nvim_buf_get_lines(0, 0, -1, false) == 4]], 'four lines')
  c:input('!<Esc>')
  c:wait([[return vim.api.nvim_buf_get_lines(0, -2, -1, false)[1]:sub(-1) == '!']], 'typed after')
  H.eq(c:lines(), {
    'Pre Line one',
    'Line two',
    'Line three',
    '  indented four!',
  }, 'multi-line value inserted across lines')
end)
