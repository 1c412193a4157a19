-- A server command that cannot be run is reported once, visibly (vim.notify at
-- WARN), when a buffer pi_snippets would attach to opens; not for other
-- filetypes, and not again for the next buffers. Neovim itself only writes it
-- to its LSP log.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

--- @param notes { msg: string, level: integer? }[]
--- @return { msg: string, level: integer? }[]
local function about_cmd(notes)
  return vim.tbl_filter(function(n)
    return n.msg:find('not executable', 1, true) ~= nil
  end, notes)
end

H.run('missing_cmd', function()
  H.setup_rtp()
  H.agent_dir({ snippets = { sig = 'Best regards' } })
  local notes = H.capture_notify()
  local missing = H.tmpdir() .. '/no-such-pi-snippets-lsp'
  vim.lsp.config('pi_snippets', { cmd = { missing } })
  vim.lsp.enable('pi_snippets')
  local project = H.project()

  -- The first markdown buffer (its FileType is what loads the plugin's config):
  -- the warning names the command and points to the health check.
  vim.cmd.edit(vim.fn.fnameescape(project .. '/prompt.md'))
  H.wait(function()
    return #about_cmd(notes) > 0
  end, 'the missing command warning')
  local note = about_cmd(notes)[1]
  H.eq(note.level, vim.log.levels.WARN, 'shown at WARN')
  H.ok(note.msg:find('^pi%-simple%-snippets: '), 'prefixed like every message: ' .. note.msg)
  H.ok(note.msg:find(missing, 1, true), 'names the command: ' .. note.msg)
  H.ok(note.msg:find(':checkhealth pi_snippets', 1, true), 'points to the health check')
  H.eq(#vim.lsp.get_clients({ name = 'pi_snippets' }), 0, 'no client started')

  -- Once per session: more buffers (and a reopened one) say nothing more.
  vim.cmd.edit(vim.fn.fnameescape(project .. '/notes.txt'))
  vim.cmd.edit(vim.fn.fnameescape(project .. '/other.md'))
  vim.cmd.edit(vim.fn.fnameescape(project .. '/prompt.md'))
  vim.wait(200)
  H.eq(#about_cmd(notes), 1, 'warned once: ' .. vim.inspect(notes))

  -- A fresh editor: a filetype pi_snippets does not handle says nothing; the
  -- first text buffer after it does.
  local c = H.child()
  c:lua([[vim.lsp.config('pi_snippets', { cmd = { ... } })]], { missing })
  c:lua(
    [[vim.lsp.enable('pi_snippets'); vim.cmd.edit(vim.fn.fnameescape(...))]],
    { project .. '/script.lua' }
  )
  c:wait([[return vim.bo.filetype == 'lua' and package.loaded['pi_snippets'] ~= nil]], 'lua buffer')
  vim.uv.sleep(300)
  H.eq(about_cmd(c:lua([[return _G.__notes]])), {}, 'no warning for a lua buffer')
  c:lua([[vim.cmd.edit(vim.fn.fnameescape(...))]], { project .. '/notes.txt' })
  c:wait([[return #_G.__notes > 0]], 'the warning for the text buffer')
  H.eq(#about_cmd(c:lua([[return _G.__notes]])), 1, 'warned for the text buffer')

  -- With a command that runs, nothing is said.
  local ok = H.child()
  ok:open(project .. '/prompt.md')
  H.eq(about_cmd(ok:lua([[return _G.__notes]])), {}, 'no warning with a working command')
end)
