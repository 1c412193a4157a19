-- Positions after multi-byte text, in the encoding Neovim negotiated (it
-- offers utf-8 first): the hand-built request and real typing + accepting.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

H.run('encoding', function()
  H.setup_rtp()
  H.agent_dir({ snippets = { sig = 'Best regards', ['use-mcp'] = 'Use your MCP tools' } })
  H.enable()
  local project = H.project()
  local client, buf = H.open(project .. '/prompt.md')
  local enc = client.offset_encoding

  for _, prefix in ipairs({ 'é ', '日本語 ', 'a 😀 ', '，' }) do
    local line = prefix .. '%si'
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { line .. ' after' })
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = 0, character = vim.str_utfindex(line, enc, #line) },
    }
    local resp = assert(client:request_sync('textDocument/completion', params, 5000, buf))
    H.ok(not resp.err, vim.inspect(resp.err))
    local items = resp.result and (resp.result.items or resp.result) or {}
    H.eq(#items, 1, 'one item after ' .. prefix)
    H.eq(items[1].textEdit.range, {
      start = { line = 0, character = vim.str_utfindex(line, enc, #prefix) },
      ['end'] = { line = 0, character = vim.str_utfindex(line, enc, #line) },
    }, ('textEdit range (%s) after %q'):format(enc, prefix))
  end

  -- Real typing in a child: the accepted marker replaces exactly the token.
  local c = H.child()
  c:open(project .. '/typed.md')
  c:input('ia 😀 日本 %si')
  c:wait([[return vim.fn.pumvisible() == 1]], 'the popup after an emoji')
  c:input('<C-n><C-y><Esc>')
  c:wait([[return vim.api.nvim_get_current_line():find('sig', 1, true) ~= nil]], 'accepted')
  local got = c:lua([[return vim.api.nvim_get_current_line()]])
  H.eq(got, 'a 😀 日本 %sig', 'marker after emoji')
end)
