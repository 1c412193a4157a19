-- The repository as a Neovim plugin. Plugin managers (lazy.nvim, packer, vim-plug, mini.deps,
-- :packadd) clone the repository and run plugin/*.lua at its root; the plugin itself lives in
-- editors/nvim, so this file puts that folder on the runtimepath (its lua/, lsp/ and doc/) and
-- runs its plugin file, which loads once however many ways it is reached. One real file, not
-- symbolic links, so a checkout without symlinks (Windows) works the same.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
local dir = root .. '/editors/nvim'
if not vim.tbl_contains(vim.api.nvim_list_runtime_paths(), dir) then
  vim.opt.runtimepath:prepend(dir)
end
dofile(dir .. '/plugin/pi_snippets.lua')
