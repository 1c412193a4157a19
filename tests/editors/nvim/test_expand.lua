-- :PiSnippetsExpand on the whole buffer and on a line range.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

H.run('expand', function()
  H.setup_rtp()
  local notes = H.capture_notify()
  H.agent_dir({
    snippets = {
      ['use-mcp'] = 'Use your MCP tools',
      sig = 'Best regards\nThe team',
      crlf = 'one\r\ntwo',
    },
  })
  H.enable()
  local _, buf = H.open(H.project() .. '/prompt.md')
  local expanded = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'PiSnippetsExpanded',
    callback = function()
      expanded = expanded + 1
    end,
  })

  local function lines()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end

  -- Whole buffer (the default range).
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {
    'Please %use-mcp.',
    'x%use-mcp stays, %%sig escapes, %unknown stays',
    '%sig',
    'git log --format=%h',
  })
  vim.cmd('PiSnippetsExpand')
  H.wait(function()
    return expanded == 1
  end, 'the whole-buffer expansion')
  H.eq(lines(), {
    'Please Use your MCP tools.',
    'x%use-mcp stays, %sig escapes, %unknown stays',
    'Best regards',
    'The team',
    'git log --format=%h',
  }, 'whole buffer expanded')

  -- A line range: only lines 2-3 change (a CRLF value becomes two lines).
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '%sig', '(%use-mcp)', '%crlf', '%sig' })
  vim.cmd('2,3PiSnippetsExpand')
  H.wait(function()
    return expanded == 2
  end, 'the range expansion')
  H.eq(lines(), { '%sig', '(Use your MCP tools)', 'one', 'two', '%sig' }, 'range expanded')

  -- A Visual line range.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'a', '%use-mcp', 'b' })
  vim.api.nvim_buf_set_mark(buf, '<', 2, 0, {})
  vim.api.nvim_buf_set_mark(buf, '>', 2, 0, {})
  vim.cmd("'<,'>PiSnippetsExpand")
  H.wait(function()
    return expanded == 3
  end, 'the visual-range expansion')
  H.eq(lines(), { 'a', 'Use your MCP tools', 'b' }, 'visual range expanded')

  -- Nothing to expand: the buffer is not touched.
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local n = #notes
  vim.cmd('PiSnippetsExpand')
  H.wait(function()
    for i = n + 1, #notes do
      if notes[i].msg:find('nothing to expand', 1, true) then
        return true
      end
    end
  end, 'the "nothing to expand" report')
  H.eq(vim.api.nvim_buf_get_changedtick(buf), tick, 'buffer untouched')
  H.eq(expanded, 3, 'no PiSnippetsExpanded event')

  -- Undo restores the markers.
  vim.cmd('silent undo')
  H.eq(lines(), { 'a', '%use-mcp', 'b' }, 'undo restores the marker')
end)
