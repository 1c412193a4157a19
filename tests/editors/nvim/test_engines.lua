-- With nvim-cmp or blink.cmp loaded, the plugin leaves the popup to them (no
-- second menu): the built-in completion is not enabled on attach, and is
-- turned off at InsertEnter when the plugin is loaded lazily after attaching.
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

--- @param buf integer
--- @return boolean
local function builtin_active(buf)
  local ok, autocmds = pcall(vim.api.nvim_get_autocmds, {
    group = 'nvim.lsp.completion_' .. buf,
    event = 'InsertCharPre',
  })
  return ok and #autocmds > 0
end

H.run('engines', function()
  H.setup_rtp()
  H.agent_dir({ snippets = { sig = 'Best regards' } })
  H.enable()
  local project = H.project()
  local completion = require('pi_snippets.completion')

  -- nvim-cmp already loaded when the client attaches.
  package.loaded['cmp'] = {}
  local _, with_cmp = H.open(project .. '/a.md')
  H.eq(completion.other_engine(), 'nvim-cmp', 'nvim-cmp detected')
  H.eq(completion.enabled(with_cmp), false, 'no built-in completion under nvim-cmp')
  H.eq(builtin_active(with_cmp), false, 'no autotrigger under nvim-cmp')
  package.loaded['cmp'] = nil

  -- No completion plugin: the built-in menu.
  local _, plain = H.open(project .. '/b.md')
  H.eq(completion.enabled(plain), true, 'built-in completion without a plugin')
  H.eq(builtin_active(plain), true, 'autotrigger on')

  -- blink.cmp loaded lazily (lazy.nvim does it on InsertEnter): ours goes away.
  package.loaded['blink.cmp'] = {}
  vim.api.nvim_exec_autocmds('InsertEnter', { buffer = plain })
  H.eq(completion.other_engine(), 'blink.cmp', 'blink.cmp detected')
  H.eq(completion.enabled(plain), false, 'built-in completion turned off')
  H.eq(builtin_active(plain), false, 'autotrigger off')
end)
