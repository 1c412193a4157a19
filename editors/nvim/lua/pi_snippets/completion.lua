--- pi_snippets.completion: the `%` popup in Neovim.
---
--- - Uses Neovim's built-in |vim.lsp.completion| in attached buffers, unless
---   nvim-cmp or blink.cmp is loaded: they list the server's items through
---   their own LSP source, and a second menu would only get in the way.
--- - Finishes accepting an item of ours: the server sends plain text (a snippet
---   engine would re-indent a multi-line value), and the built-in completion
---   inserts only a plain-text item's first word. On CompleteDone the whole
---   `textEdit.newText` replaces that word, byte for byte.
--- - Shows the server's one-line preview (`labelDetails.description`) on the
---   row, where Neovim would show `detail` (what accepting does).

local util = require('pi_snippets.util')

local M = {}

local api = vim.api

--- Buffers where we called vim.lsp.completion.enable(), per client.
--- @type table<integer, table<integer, true>>
local enabled = {}

--- The completion plugin that takes over from the built-in menu, if one is loaded.
--- @return string? name 'nvim-cmp' or 'blink.cmp'
function M.other_engine()
  if package.loaded['cmp'] then
    return 'nvim-cmp'
  end
  if package.loaded['blink.cmp'] then
    return 'blink.cmp'
  end
  return nil
end

--- True when the plugin enabled completion in `buf` for some pi_snippets client.
--- @param buf integer
--- @return boolean
function M.enabled(buf)
  for _, bufs in pairs(enabled) do
    if bufs[buf] then
      return true
    end
  end
  return false
end

--- Whether an LSP item looks like one of ours (the convert hook sees the items
--- of every client of the buffer, without saying whose they are).
--- @param item lsp.CompletionItem
--- @return boolean
local function is_ours(item)
  return type(item.label) == 'string'
    and item.label:sub(1, 1) == '%'
    and item.filterText == item.label
    and type(item.labelDetails) == 'table'
    and type(item.labelDetails.description) == 'string'
end

--- |vim.lsp.completion.enable()| `convert`: our preview in the menu column.
--- @param item lsp.CompletionItem
--- @return table
function M.convert(item)
  if is_ours(item) then
    return { menu = item.labelDetails.description }
  end
  return {}
end

--- With a 'completeopt' lacking noselect/noinsert, Neovim inserts the first
--- match as soon as the popup opens (on `%` with autotrigger). Give the buffer
--- a local value that only shows the menu, unless the user chose one for it.
--- @param buf integer
--- @param opts pi_snippets.Options
local function adjust_completeopt(buf, opts)
  if type(opts.completeopt) ~= 'string' then
    return
  end
  if api.nvim_get_option_value('completeopt', { scope = 'local', buf = buf }) ~= '' then
    return
  end
  local global = vim.split(vim.go.completeopt, ',', { plain = true })
  if vim.list_contains(global, 'noselect') or vim.list_contains(global, 'noinsert') then
    return
  end
  api.nvim_set_option_value('completeopt', opts.completeopt, { scope = 'local', buf = buf })
end

--- Enables the built-in completion for `client` in `buf` (once), unless the
--- options say no or another completion plugin is loaded.
--- @param client vim.lsp.Client
--- @param buf integer
function M.enable(client, buf)
  local opts = util.options()
  if not opts.completion or (enabled[client.id] or {})[buf] or M.other_engine() then
    return
  end
  if not client:supports_method('textDocument/completion', buf) then
    return
  end
  vim.lsp.completion.enable(true, client.id, buf, {
    autotrigger = opts.autotrigger,
    convert = M.convert,
  })
  adjust_completeopt(buf, opts)
  enabled[client.id] = enabled[client.id] or {}
  enabled[client.id][buf] = true
end

--- Disables what `enable` enabled for `client_id` in `buf`.
--- @param client_id integer
--- @param buf integer
function M.disable(client_id, buf)
  local bufs = enabled[client_id]
  if bufs and bufs[buf] then
    bufs[buf] = nil
    if api.nvim_buf_is_valid(buf) then
      pcall(vim.lsp.completion.enable, false, client_id, buf)
    end
  end
end

--- InsertEnter: a completion plugin loaded lazily (lazy.nvim loads nvim-cmp
--- and blink.cmp on InsertEnter, after the client attached) takes over.
--- @param buf integer
function M.on_insert_enter(buf)
  if not M.other_engine() then
    return
  end
  for client_id, bufs in pairs(enabled) do
    if bufs[buf] then
      M.disable(client_id, buf)
    end
  end
end

--- CompleteDone: put the whole text of an accepted item of ours in place.
---
--- Neovim's built-in completion inserts a plain-text item's `newText` only up
--- to its first blank (the item's `word`) and does nothing more on accept. The
--- word sits right before the cursor; it is replaced by the whole `newText`
--- and the cursor goes after it. Only on `accept` (CTRL-Y), as Neovim applies
--- edits only then, and only when the buffer holds the word where expected.
function M.on_complete_done()
  if vim.v.event.reason ~= 'accept' then
    return
  end
  local done = vim.v.completed_item
  local data = type(done) == 'table' and vim.tbl_get(done, 'user_data', 'nvim', 'lsp') or nil
  if type(data) ~= 'table' or type(data.completion_item) ~= 'table' then
    return
  end
  local client = vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= util.name then
    return
  end
  local item = data.completion_item
  local new_text = vim.tbl_get(item, 'textEdit', 'newText')
  local word = done.word
  if
    type(new_text) ~= 'string'
    or type(word) ~= 'string'
    or new_text == word
    or item.insertTextFormat == vim.lsp.protocol.InsertTextFormat.Snippet
  then
    return
  end
  local row, col = unpack(api.nvim_win_get_cursor(0))
  local start = col - #word
  if start < 0 or api.nvim_get_current_line():sub(start + 1, col) ~= word then
    return
  end
  local lines = vim.split(new_text, '\n', { plain = true })
  api.nvim_buf_set_text(0, row - 1, start, row - 1, col, lines)
  local last = #lines == 1 and start + #lines[1] or #lines[#lines]
  api.nvim_win_set_cursor(0, { row + #lines - 1, last })
end

return M
