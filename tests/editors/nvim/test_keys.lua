-- Shortcut translation (Pi shortcut string -> Neovim key notation) and plugin files.
-- No server needed.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

H.run('keys', function()
  H.setup_rtp()
  local ps = require('pi_snippets')

  local cases = {
    ['ctrl+shift+s'] = '<C-S-s>',
    ['CTRL+SHIFT+S'] = '<C-S-s>',
    ['shift+ctrl+s'] = '<C-S-s>',
    ['alt+x'] = '<M-x>',
    ['super+x'] = '<D-x>',
    ['ctrl+alt+shift+super+k'] = '<C-S-M-D-k>',
    ['ctrl+escape'] = '<C-Esc>',
    ['ctrl+esc'] = '<C-Esc>',
    ['shift+enter'] = '<S-CR>',
    ['alt+return'] = '<M-CR>',
    ['shift+tab'] = '<S-Tab>',
    ['ctrl+space'] = '<C-Space>',
    ['alt+backspace'] = '<M-BS>',
    ['ctrl+delete'] = '<C-Del>',
    ['shift+insert'] = '<S-Insert>',
    ['ctrl+home'] = '<C-Home>',
    ['ctrl+end'] = '<C-End>',
    ['alt+pageup'] = '<M-PageUp>',
    ['alt+pagedown'] = '<M-PageDown>',
    ['ctrl+up'] = '<C-Up>',
    ['ctrl+down'] = '<C-Down>',
    ['ctrl+left'] = '<C-Left>',
    ['ctrl+right'] = '<C-Right>',
    ['ctrl+f1'] = '<C-F1>',
    ['alt+f12'] = '<M-F12>',
    ['ctrl+<'] = '<C-lt>',
    ['ctrl+\\'] = '<C-Bslash>',
    ['alt+|'] = '<M-Bar>',
    ['ctrl+%'] = '<C-%>',
    ['alt++'] = '<M-+>',
    ['ctrl+-'] = '<C-->',
    ['ctrl+>'] = '<C->>',
    ['ctrl+s'] = '<C-s>',
  }
  for shortcut, want in pairs(cases) do
    local lhs, err = ps.keys(shortcut)
    H.eq(lhs, want, 'keys(' .. shortcut .. ') ' .. tostring(err))
    -- Neovim must understand the notation (no literal "<" left over).
    local codes = vim.keycode(lhs)
    H.ok(codes ~= lhs or #lhs == 1, 'Neovim parses ' .. lhs)
  end

  -- Keys Neovim cannot express, or that collapse onto another key: nil + reason.
  for _, shortcut in ipairs({
    'ctrl+clear',
    'shift+a', -- is just "A"
    'ctrl+[', -- is <Esc>
    'ctrl+i', -- is <Tab>
    'ctrl+m', -- is <CR>
    'ctrl+shift+i', -- is <S-Tab>
    'ctrl+foo',
    'hyper+x',
    'ctrl+ctrl+x',
    '',
  }) do
    local lhs, err = ps.keys(shortcut)
    H.eq(lhs, nil, 'keys(' .. shortcut .. ') must not bind')
    H.ok(type(err) == 'string' and err ~= '', 'a reason for ' .. shortcut)
  end

  -- setup() validates its options; vim.g.pi_snippets is read too.
  H.ok(not pcall(ps.setup, { completion = 'yes' }), 'setup rejects a bad type')
  ps.setup({ autotrigger = false })
  H.eq(ps.options().autotrigger, false, 'setup option')
  vim.g.pi_snippets = { shortcut = false }
  H.eq(ps.options().shortcut, false, 'vim.g.pi_snippets option')
  H.eq(ps.options().completion, true, 'default kept')
  ps.setup({})
  vim.g.pi_snippets = nil

  -- The LSP config from the runtimepath.
  local cfg = vim.lsp.config.pi_snippets
  H.eq(cfg.cmd, { 'pi-snippets-lsp' }, 'default cmd')
  -- json/jsonc for Pi's settings files only (root_dir attaches no other JSON buffer).
  H.eq(cfg.filetypes, { 'markdown', 'text', 'gitcommit', 'json', 'jsonc' }, 'default filetypes')
  H.eq(type(cfg.root_dir), 'function', 'root_dir picks the buffers')
  H.eq(type(cfg.commands['pi-snippets.saveSnippet']), 'function', 'save asks for a name')
  H.ok(vim.list_contains(cfg.root_markers, '.pi'), 'root marker .pi')
  H.ok(vim.list_contains(cfg.root_markers, '.git'), 'root marker .git')
  H.eq(type(cfg.handlers['snippets/didLoad']), 'function', 'didLoad handler')

  -- Widening filetypes keeps the rest of the config.
  vim.lsp.config('pi_snippets', { filetypes = { 'markdown', 'mail' } })
  cfg = vim.lsp.config.pi_snippets
  H.eq(cfg.filetypes, { 'markdown', 'mail' }, 'widened filetypes')
  H.eq(type(cfg.handlers['snippets/didLoad']), 'function', 'handler kept after override')

  -- Commands from plugin/.
  for _, name in ipairs({ 'PiSnippetsExpand', 'PiSnippetsList', 'PiSnippetsReload' }) do
    H.eq(vim.fn.exists(':' .. name), 2, ':' .. name .. ' exists')
  end

  -- The help file has tags and no duplicates.
  local docdir = H.tmpdir()
  vim.fn.writefile(vim.fn.readfile(H.rtp .. '/doc/pi_snippets.txt'), docdir .. '/pi_snippets.txt')
  vim.cmd.helptags(vim.fn.fnameescape(docdir))
  local tags = H.read(docdir .. '/tags')
  local want = { 'pi_snippets', ':PiSnippetsExpand', ':PiSnippetsList', ':PiSnippetsReload' }
  for _, tag in ipairs(want) do
    local pat = vim.pesc(tag) .. '\t'
    H.ok(tags:find('\n' .. pat) or tags:find('^' .. pat), 'help tag ' .. tag)
  end
end)
