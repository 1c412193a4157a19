-- textDocument/completion with hand-built params (a Normal-mode cursor cannot
-- sit after the last character), and applying an item's textEdit the way
-- nvim-cmp and blink.cmp apply a plain-text item (vim.lsp.util.apply_text_edits).
local H = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/helpers.lua')

local PLAIN_TEXT = 1 -- lsp.InsertTextFormat.PlainText
local AS_IS = 1 -- lsp.InsertTextMode.asIs

--- @param client vim.lsp.Client
--- @param buf integer
--- @param line integer 0-based
--- @param character integer UTF-16 units
local function complete(client, buf, line, character)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = character },
    context = { triggerKind = 2, triggerCharacter = '%' },
  }
  local resp = client:request_sync('textDocument/completion', params, 5000, buf)
  assert(resp, 'completion request timed out')
  assert(not resp.err, vim.inspect(resp.err))
  return resp.result
end

--- @param result any
--- @return lsp.CompletionItem[]
local function items_of(result)
  if result == nil or result == vim.NIL then
    return {}
  end
  return result.items or result
end

--- Items sorted the way Neovim shows them (by sortText, then label).
local function sorted_labels(result)
  local items = vim.deepcopy(items_of(result))
  table.sort(items, function(a, b)
    return (a.sortText or a.label) < (b.sortText or b.label)
  end)
  return vim.tbl_map(function(i)
    return i.label
  end, items)
end

--- @param items lsp.CompletionItem[]
--- @param label string
--- @return lsp.CompletionItem
local function find(items, label)
  for _, i in ipairs(items) do
    if i.label == label then
      return i
    end
  end
  error('no item ' .. label .. ' in ' .. vim.inspect(items))
end

--- Applies an item's textEdit as a plain text edit.
--- @param buf integer
--- @param item lsp.CompletionItem
--- @param client vim.lsp.Client
local function accept(buf, item, client)
  local te = item.textEdit
  assert(te and te.range, 'item has a textEdit with a range')
  vim.lsp.util.apply_text_edits({ te }, buf, client.offset_encoding)
end

local function set_lines(buf, lines)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
end

H.run('completion', function()
  H.setup_rtp()
  local settings = H.agent_dir({
    snippets = {
      ['use-mcp'] = 'Use your MCP tools to find the information',
      ['use-git'] = 'Use git log to check history',
      sig = 'Best regards',
      env = 'echo $HOME ${1:x} \\ } $0 end',
      multi = 'Line one\r\nLine two\rLine three\n  indented four',
    },
  })
  H.enable()
  local client, buf = H.open(H.project() .. '/prompt.md')

  -- A token in the middle of a line: textEdit runs from % to the cursor.
  set_lines(buf, { 'Please %us now' })
  local result = complete(client, buf, 0, #'Please %us')
  local items = items_of(result)
  local labels = sorted_labels(result)
  H.ok(vim.list_contains(labels, '%use-mcp'), '%use-mcp offered: ' .. vim.inspect(labels))
  H.ok(vim.list_contains(labels, '%use-git'), '%use-git offered')
  H.ok(not vim.list_contains(labels, '%sig'), '%sig filtered out')
  local item = find(items, '%use-mcp')
  H.eq(item.textEdit.range, {
    start = { line = 0, character = #'Please ' },
    ['end'] = { line = 0, character = #'Please %us' },
  }, 'textEdit range from % to the cursor')
  H.eq(item.textEdit.newText, '%use-mcp', 'newText is the marker')
  H.eq(item.insertTextFormat, PLAIN_TEXT, 'plain text, although Neovim advertises snippetSupport')
  H.eq(item.insertTextMode, AS_IS, 'inserted as is')
  H.eq(item.detail, 'Inserts %use-mcp', 'detail says what accepting does')
  H.eq(
    item.labelDetails.description,
    'Use your MCP tools to find the information',
    'the preview on the row'
  )
  H.eq(item.filterText, '%use-mcp', 'filterText')
  H.ok(type(item.sortText) == 'string', 'sortText present')

  -- Accepting keeps the text after the cursor.
  accept(buf, item, client)
  H.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { 'Please %use-mcp now' }, 'marker accepted')

  -- A bare % lists everything in name order (sortText keeps the ranking).
  set_lines(buf, { '%' })
  result = complete(client, buf, 0, 1)
  H.eq(sorted_labels(result), { '%env', '%multi', '%sig', '%use-git', '%use-mcp' }, 'bare % order')

  -- Not a token (no boundary before %): null, other sources untouched.
  set_lines(buf, { 'x%us' })
  result = complete(client, buf, 0, 4)
  H.ok(result == nil or result == vim.NIL, 'x%us gives null, got ' .. vim.inspect(result))

  -- A token without match: empty list, not incomplete.
  set_lines(buf, { 'see %zzz' })
  result = complete(client, buf, 0, #'see %zzz')
  H.eq(#items_of(result), 0, 'no items for %zzz')
  if result and result ~= vim.NIL and result.items then
    H.eq(result.isIncomplete, false, 'isIncomplete false for no match')
  end

  -- expandOnCompletion: the value is inserted; $ and ${1:x} arrive literally.
  H.write_settings(settings, {
    expandOnCompletion = true,
    snippets = {
      env = 'echo $HOME ${1:x} \\ } $0 end',
      multi = 'Line one\r\nLine two\rLine three\n  indented four',
    },
  })
  local reloaded
  require('pi_snippets').reload({
    buf = buf,
    on_done = function(r)
      reloaded = r
    end,
  })
  H.wait(function()
    return reloaded
  end, 'snippets/reload')
  H.eq(reloaded.expandOnCompletion, true, 'expandOnCompletion after reload')

  set_lines(buf, { 'Run %en please' })
  result = complete(client, buf, 0, #'Run %en')
  item = find(items_of(result), '%env')
  H.eq(item.insertTextFormat, PLAIN_TEXT, 'plain text for the value')
  H.eq(item.textEdit.newText, 'echo $HOME ${1:x} \\ } $0 end', 'nothing escaped')
  accept(buf, item, client)
  H.eq(
    vim.api.nvim_buf_get_lines(buf, 0, -1, false),
    { 'Run echo $HOME ${1:x} \\ } $0 end please' },
    'value with $HOME ${1:x} inserted literally'
  )

  set_lines(buf, { 'Pre %mu post' })
  result = complete(client, buf, 0, #'Pre %mu')
  item = find(items_of(result), '%multi')
  accept(buf, item, client)
  H.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), {
    'Pre Line one',
    'Line two',
    'Line three',
    '  indented four post',
  }, 'multi-line value, CRLF and CR become new lines')
end)
