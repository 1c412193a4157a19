-- pi_snippets: user commands for pi-snippets-lsp. What they do lives in
-- lua/pi_snippets/commands.lua, loaded on first use. See :help pi_snippets.
if vim.g.loaded_pi_snippets then
  return
end
vim.g.loaded_pi_snippets = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify('pi-simple-snippets: pi_snippets needs Neovim 0.11 or newer', vim.log.levels.WARN)
  return
end

local command = vim.api.nvim_create_user_command

command('PiSnippetsExpand', function(o)
  require('pi_snippets').expand({ line1 = o.line1, line2 = o.line2 })
end, { range = '%', bar = true, desc = 'Expand %name snippet markers in the buffer or range' })

command('PiSnippetsSave', function(o)
  local features = require('pi_snippets.features')
  local text = features.selected_text(0, o.line1, o.line2)
  features.save({ text = text, name = o.args ~= '' and o.args or nil })
end, {
  range = true,
  nargs = '?',
  bar = true,
  desc = 'Save the selected lines (or the current line) as a %name snippet',
})

command('PiSnippetsEdit', function(o)
  require('pi_snippets.edit').edit({ name = o.args ~= '' and o.args or nil })
end, {
  nargs = '?',
  bar = true,
  desc = "Edit a snippet's text in a buffer; :write saves it to its settings file",
})

command('PiSnippetsList', function()
  require('pi_snippets').list()
end, { bar = true, desc = 'List the %name snippets pi-snippets-lsp has loaded' })

command('PiSnippetsReload', function()
  require('pi_snippets').reload()
end, { bar = true, desc = 'Make pi-snippets-lsp re-read its settings' })
