--- pi_snippets: Neovim client glue for pi-snippets-lsp; the public Lua API.
---
--- The LSP config lives in `lsp/pi_snippets.lua`, the user commands in
--- `plugin/pi_snippets.lua`. The logic is split by concern:
---   pi_snippets.keys      shortcut translation and the Insert-mode mapping
---   pi_snippets.commands  :PiSnippetsExpand / List / Reload
---   pi_snippets.features  Pi's settings files, :PiSnippetsSave, the server's
---                         expand and save commands
---   pi_snippets.edit      :PiSnippetsEdit, a snippet's text in a buffer
---   pi_snippets.client    attach/detach, snippets/didLoad, the server
---                         command check
---   pi_snippets.completion  the built-in menu (or none under nvim-cmp /
---                         blink.cmp), finishing an accepted multi-line item
---   pi_snippets.util      client name, options, messages
---   pi_snippets.health    :checkhealth pi_snippets
--- See `:help pi_snippets`.

local util = require('pi_snippets.util')
local keys = require('pi_snippets.keys')
local client = require('pi_snippets.client')
local commands = require('pi_snippets.commands')

local M = {}

--- LSP config name (and therefore client name).
M.name = util.name

--- The options in force: defaults, then `vim.g.pi_snippets`, then setup().
M.options = util.options

--- Translates a Pi shortcut (`ctrl+shift+s`) into Neovim key notation (`<C-S-s>`);
--- nil and the reason when Neovim cannot bind it.
M.keys = keys.translate

--- The key currently bound in a buffer (Neovim notation), or nil.
M.bound_key = keys.bound_key

--- Last configuration reported by a client (the shape of `snippets/list`).
M.loaded = client.loaded

M.expand = commands.expand
M.list = commands.list
M.reload = commands.reload

--- Opens a snippet's text in a buffer of its own; `:write` saves it back
--- (pi_snippets.edit). Loaded on first use.
--- @param opts? pi_snippets.EditOpts
function M.edit(opts)
  require('pi_snippets.edit').edit(opts)
end

-- Used by lsp/pi_snippets.lua; not part of the public API.
M._install = client.install
M._on_did_load = client.on_did_load
M._on_attach = client.on_attach
M._on_detach = client.on_detach

--- Optional configuration.
--- @param opts? pi_snippets.Options
function M.setup(opts)
  opts = opts or {}
  vim.validate('opts', opts, 'table')
  vim.validate('opts.completion', opts.completion, 'boolean', true)
  vim.validate('opts.autotrigger', opts.autotrigger, 'boolean', true)
  vim.validate('opts.shortcut', opts.shortcut, 'boolean', true)
  vim.validate('opts.completeopt', opts.completeopt, { 'string', 'boolean' }, true)
  util.set_options(opts)
  client.install()
  client.apply_options()
end

return M
