-- Exactly what was configured arrives (docs/lsp.md, "The insert policy"): a
-- multi-line value with $HOME, a backtick, a tab and a } accepted with real
-- keys in a child Neovim through the built-in completion and this plugin,
-- on an indented list line and at the end of a file without a final newline.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

local VALUE = 'Review $HOME:\n\tuse `x` }\n  end ${1:y}'

--- Types `keys` in Insert mode, waits for the popup, accepts the first item.
--- @param c pi_snippets_test.Child
--- @param keys string
--- @return table[] the popup's items, as Neovim shows them
local function type_and_accept(c, keys)
  c:input(keys)
  c:wait([[return vim.fn.pumvisible() == 1]], 'the popup after ' .. keys)
  local items = c:lua([[return vim.fn.complete_info({ 'items' }).items]])
  c:input('<C-n><C-y>')
  return items
end

H.run('fidelity', function()
  H.agent_dir({ expandOnCompletion = true, snippets = { rev = VALUE, other = 'x' } })
  local project = H.project()
  local c = H.child()
  c:open(project .. '/list.md')
  -- Settings that make a re-indenting insert visible: indent kept from the list
  -- line, tabs expanded to spaces.
  c:lua([[vim.bo.expandtab = true; vim.bo.shiftwidth = 2; vim.bo.autoindent = true]])

  -- An indented Markdown list item.
  local items = type_and_accept(c, 'i  - %rev')
  H.eq(items[1].abbr, '%rev', 'the row shows the label')
  H.eq(items[1].menu, 'Review $HOME: use `x` } end ${1:y}', 'and the one-line preview')
  H.eq(items[1].info, '```text\n' .. VALUE .. '\n```', 'the documentation: the value, literally')
  c:wait([[return #vim.api.nvim_buf_get_lines(0, 0, -1, false) == 3]], 'three lines')
  c:input('!<Esc>')
  c:wait([[return vim.api.nvim_get_current_line():sub(-1) == '!']], 'typing after the text')
  H.eq(c:lines(), {
    '  - Review $HOME:',
    '\tuse `x` }',
    '  end ${1:y}!',
  }, 'the list item holds exactly the configured text, cursor after it')
  H.eq(c:lua([[return vim.snippet.active()]]), false, 'no snippet session')

  -- The last line of a file without a final newline.
  local path = project .. '/noeol.md'
  H.write(path, 'intro\nsee ')
  c:lua([[vim.cmd.edit(vim.fn.fnameescape(...))]], { path })
  c:wait([[
    local client = vim.lsp.get_clients({ bufnr = 0, name = 'pi_snippets' })[1]
    return client and require('pi_snippets.completion').enabled(vim.api.nvim_get_current_buf())
  ]], 'the client in the second buffer')
  H.eq(c:lua([[return vim.bo.eol]]), false, 'the file has no final newline')
  type_and_accept(c, 'G$a%re')
  c:wait([[return #vim.api.nvim_buf_get_lines(0, 0, -1, false) == 4]], 'four lines')
  c:input('<Esc>')
  c:lua([[vim.bo.fixeol = false; vim.cmd.write()]])
  H.eq(H.read(path), 'intro\nsee ' .. VALUE, 'the file holds exactly the configured text')
end)
