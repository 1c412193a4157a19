-- vim.lsp.enable('pi_snippets') attaches to a markdown buffer, gets the first
-- snippets/didLoad, enables completion and binds the shortcut buffer-locally.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

H.run('attach', function()
  H.setup_rtp()
  H.agent_dir({
    shortcut = 'ctrl+shift+s',
    snippets = { ['use-mcp'] = 'Use your MCP tools to find the information', sig = 'Best regards' },
  })
  local loads = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'PiSnippetsLoaded',
    callback = function(args)
      loads[#loads + 1] = args.data
    end,
  })
  H.enable()
  local project = H.project()
  local client, buf = H.open(project .. '/prompt.md')

  H.eq(vim.bo[buf].filetype, 'markdown', 'filetype')
  H.eq(client.name, 'pi_snippets', 'client name')
  H.eq(client.server_info and client.server_info.name, 'pi-snippets-lsp', 'serverInfo.name')
  H.eq(client.root_dir, project, 'root_dir from the .git marker')
  local caps = client.server_capabilities
  local triggers = vim.tbl_get(caps, 'completionProvider', 'triggerCharacters')
  H.ok(
    triggers and vim.list_contains(triggers, '%'),
    'trigger character %: ' .. vim.inspect(triggers)
  )

  H.wait(function()
    return #loads > 0
  end, 'the snippets/didLoad notification')
  local result = loads[1].result
  H.eq(loads[1].client_id, client.id, 'didLoad client id')
  local names = vim.tbl_map(function(s)
    return s.name
  end, result.snippets)
  table.sort(names)
  H.eq(names, { 'sig', 'use-mcp' }, 'didLoad snippets')
  H.eq(result.shortcut, 'ctrl+shift+s', 'didLoad shortcut')
  H.eq(result.expandOnCompletion, false, 'didLoad expandOnCompletion')
  H.eq(result.warnings, {}, 'no warnings')
  H.eq(loads[1].notice, {
    generation = 1,
    count = 2,
    shortcut = 'ctrl+shift+s',
    expandOnCompletion = false,
    warnings = {},
  }, 'the didLoad notice')
  H.eq(
    client.config.init_options,
    { notifications = { 'snippets/didLoad' } },
    'the client opts in to snippets/didLoad'
  )

  -- Shortcut: buffer-local insert-mode expr mapping.
  local ps = require('pi_snippets')
  H.wait(function()
    return ps.bound_key(buf) == '<C-S-s>'
  end, 'the shortcut to be bound')
  local map = vim.fn.maparg('<C-S-s>', 'i', false, true)
  H.eq(map.buffer, 1, 'mapping is buffer-local')
  H.eq(map.expr, 1, 'mapping is an expr mapping')
  H.eq(vim.fn.maparg('<C-S-s>', 'n'), '', 'no normal-mode mapping')

  -- Completion enabled for this buffer: omnifunc works and the trigger is wired.
  H.eq(vim.bo[buf].omnifunc, 'v:lua.vim.lsp.omnifunc', 'omnifunc set by Neovim')
  H.ok(
    #vim.api.nvim_get_autocmds({
      group = 'nvim.lsp.completion_' .. buf,
      event = 'InsertCharPre',
    }) > 0,
    'autotrigger InsertCharPre autocmd'
  )

  -- :PiSnippetsList shows name + preview (in the message history).
  vim.cmd('messages clear')
  vim.cmd('PiSnippetsList')
  H.wait(function()
    return vim.fn.execute('messages'):find('%use-mcp', 1, true) ~= nil
  end, ':PiSnippetsList output')
  local shown = vim.fn.execute('messages')
  H.ok(shown:find('2 snippets', 1, true), 'count in the list: ' .. shown)
  H.ok(shown:find('<C-S-s>', 1, true), 'shortcut key in the list')
  H.ok(shown:find('%%sig%s+Best regards'), 'name + preview for sig')
  H.ok(shown:find('%%use%-mcp%s+Use your MCP tools to find the information'), 'name + preview')

  -- :checkhealth pi_snippets runs and reports the client.
  vim.cmd('checkhealth pi_snippets')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.ok(report:find('2 snippets', 1, true), 'health report: ' .. report)
  H.ok(not report:find('ERROR', 1, true), 'no health error: ' .. report)
  vim.cmd('bwipeout')
  vim.cmd.buffer(buf)

  -- A buffer of another filetype does not attach and gets no mapping.
  vim.cmd.edit(vim.fn.fnameescape(project .. '/script.py'))
  local other = vim.api.nvim_get_current_buf()
  vim.wait(200)
  H.eq(#vim.lsp.get_clients({ bufnr = other, name = 'pi_snippets' }), 0, 'no client on python')
  H.eq(vim.fn.maparg('<C-S-s>', 'i'), '', 'no mapping in the python buffer')

  -- A text buffer attaches to the same client and gets its own mapping.
  vim.cmd.edit(vim.fn.fnameescape(project .. '/notes.txt'))
  local txt = vim.api.nvim_get_current_buf()
  H.wait(function()
    return ps.bound_key(txt) == '<C-S-s>'
  end, 'the shortcut in the text buffer')
  H.eq(#vim.lsp.get_clients({ name = 'pi_snippets' }), 1, 'one client for the project')

  -- Detach removes the mapping.
  vim.lsp.buf_detach_client(txt, client.id)
  H.wait(function()
    return ps.bound_key(txt) == nil and vim.fn.maparg('<C-S-s>', 'i') == ''
  end, 'the mapping to go away on detach')
  H.eq(ps.bound_key(buf), '<C-S-s>', 'the markdown buffer keeps its mapping')
end)
