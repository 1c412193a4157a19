-- Neovim 0.11+ LSP config for pi-snippets-lsp (`%name` prompt snippets).
--
-- Enable it with `vim.lsp.enable('pi_snippets')`. Override any field with
-- `vim.lsp.config('pi_snippets', { ... })`, e.g. to widen the filetypes:
--
--   vim.lsp.config('pi_snippets', { filetypes = { 'markdown', 'text', 'gitcommit', 'mail' } })
--
-- See `:help pi_snippets`.

-- The module installs the LspAttach/LspDetach autocmds that bind the shortcut
-- and enable completion. It runs here because this file is always evaluated
-- before a `pi_snippets` client can start.
require('pi_snippets')._install()
local method = require('pi_snippets.protocol').method

---@type vim.lsp.Config
return {
  cmd = { 'pi-snippets-lsp' },
  -- json/jsonc: only Pi's settings files attach (root_dir below), for their diagnostics.
  filetypes = { 'markdown', 'text', 'gitcommit', 'json', 'jsonc' },
  -- A prompt's root is the nearest folder holding one of these (read by root_dir).
  root_markers = { '.pi', '.git' },
  -- The server sends its own notification only to clients that ask for it.
  init_options = { notifications = { method.didLoad } },
  root_dir = function(buf, on_dir)
    require('pi_snippets.features').root_dir(buf, on_dir)
  end,
  -- The "Save selection as snippet" action asks for the name first.
  commands = {
    ['pi-snippets.saveSnippet'] = function(command, ctx)
      require('pi_snippets.features').save_from_action(command, ctx)
    end,
  },
  handlers = {
    [method.didLoad] = function(err, result, ctx)
      return require('pi_snippets')._on_did_load(err, result, ctx)
    end,
  },
}
