-- Shared helpers for the headless Neovim tests of editors/nvim.
-- Loaded with dofile() from each test_*.lua (run as `nvim --headless --clean -l FILE`).

local H = {}

local this = debug.getinfo(1, 'S').source:sub(2)
H.dir = vim.fs.dirname(vim.fs.abspath(this))
H.root = vim.fs.normalize(H.dir .. '/../../..')
H.rtp = H.root .. '/editors/nvim'

--- Server command from the pytest driver (JSON list), else the console script.
--- @return string[]
function H.server_cmd()
  local raw = os.getenv('PI_SNIPPETS_SERVER_CMD')
  if raw and raw ~= '' then
    return vim.json.decode(raw)
  end
  return { 'pi-snippets-lsp' }
end

--- Prepends editors/nvim to the runtimepath and sources plugin/ like startup would.
function H.setup_rtp()
  vim.opt.rtp:prepend(H.rtp)
  vim.cmd.runtime('plugin/pi_snippets.lua')
end

--- @return string a fresh temporary directory
function H.tmpdir()
  local d = vim.fn.tempname()
  vim.fn.mkdir(d, 'p')
  return vim.fs.normalize(vim.uv.fs_realpath(d) or d)
end

--- @param path string
--- @param text string
function H.write(path, text)
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

--- @param path string
--- @return string
function H.read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

--- Creates a temporary PI_CODING_AGENT_DIR holding settings.json with
--- `{ piSimpleSnippets = ns }` and points the environment at it.
--- @param ns table|nil the piSimpleSnippets value (nil: no namespace)
--- @return string settings_path
function H.agent_dir(ns)
  local dir = H.tmpdir()
  vim.env.PI_CODING_AGENT_DIR = dir
  local path = dir .. '/settings.json'
  H.write_settings(path, ns)
  return path
end

--- @param path string
--- @param ns table|nil
function H.write_settings(path, ns)
  local settings = ns and { piSimpleSnippets = ns } or {}
  H.write(path, vim.json.encode(settings))
end

--- A temporary project directory with a .git marker.
--- @return string
function H.project()
  local dir = H.tmpdir()
  vim.fn.mkdir(dir .. '/.git', 'p')
  return dir
end

--- @param cond any
--- @param msg string
function H.ok(cond, msg)
  if not cond then
    error('assertion failed: ' .. msg, 2)
  end
end

--- @param actual any
--- @param expected any
--- @param msg string
function H.eq(actual, expected, msg)
  if not vim.deep_equal(actual, expected) then
    error(
      ('%s\n  expected: %s\n  actual:   %s'):format(
        msg,
        vim.inspect(expected),
        vim.inspect(actual)
      ),
      2
    )
  end
end

--- Waits (processing events) until fn() is truthy.
--- @param fn fun(): any
--- @param msg string
--- @param timeout? integer ms
function H.wait(fn, msg, timeout)
  local ok = vim.wait(timeout or 10000, function()
    return fn() and true or false
  end, 20)
  if not ok then
    error('timed out waiting for ' .. msg, 2)
  end
end

--- Configures and enables pi_snippets with the test server command.
--- @param extra? table merged into vim.lsp.config('pi_snippets', ...)
function H.enable(extra)
  vim.lsp.config('pi_snippets', vim.tbl_extend('force', { cmd = H.server_cmd() }, extra or {}))
  vim.lsp.enable('pi_snippets')
end

--- Opens `path` and waits for the pi_snippets client to attach and report its
--- first load.
--- @param path string
--- @return vim.lsp.Client client, integer buf
function H.open(path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local client --- @type vim.lsp.Client?
  H.wait(function()
    client = vim.lsp.get_clients({ bufnr = buf, name = 'pi_snippets' })[1]
    return client and client.initialized
  end, 'pi_snippets to attach to ' .. path)
  assert(client)
  H.wait(function()
    return require('pi_snippets').loaded(client.id) ~= nil
  end, 'the first snippets/didLoad or snippets/list')
  return client, buf
end

--- Captures vim.notify messages.
--- @return { msg: string, level: integer? }[]
function H.capture_notify()
  local seen = {}
  vim.notify = function(msg, level)
    seen[#seen + 1] = { msg = msg, level = level }
    io.stdout:write(('[notify %s] %s\n'):format(tostring(level), msg))
  end
  return seen
end

--- Stops every client and waits a little for the servers to exit.
function H.stop_all()
  local clients = vim.lsp.get_clients()
  for _, c in ipairs(clients) do
    c:stop()
  end
  vim.wait(3000, function()
    for _, c in ipairs(clients) do
      if not c:is_stopped() then
        return false
      end
    end
    return true
  end, 20)
end

--- Runs the test body; exits 0 on success, 1 with a traceback on failure.
--- @param name string
--- @param fn fun()
function H.run(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  pcall(H.stop_all)
  for _, c in ipairs(H.children) do
    pcall(vim.fn.jobstop, c.ch)
  end
  if ok then
    io.stdout:write(('ok: %s\n'):format(name))
    os.exit(0)
  else
    io.stdout:write(('FAIL: %s\n%s\n'):format(name, tostring(err)))
    os.exit(1)
  end
end

-- ---------------------------------------------------------------------------
-- Child Neovim (typed keys are only processed by a running editor).
-- ---------------------------------------------------------------------------

--- @class pi_snippets_test.Child
--- @field ch integer
local Child = {}
Child.__index = Child

--- @type pi_snippets_test.Child[]
H.children = {}

--- Starts `nvim --embed --headless --clean` with the plugin on its runtimepath.
--- @return pi_snippets_test.Child
function H.child()
  local ch = vim.fn.jobstart({ vim.v.progpath, '--embed', '--headless', '--clean' }, { rpc = true })
  assert(ch > 0, 'could not start child nvim')
  local c = setmetatable({ ch = ch }, Child)
  H.children[#H.children + 1] = c
  c:lua(
    [[
      local rtp, cmd = ...
      vim.opt.rtp:prepend(rtp)
      vim.cmd.runtime('plugin/pi_snippets.lua')
      _G.__notes = {}
      vim.notify = function(msg, level)
        table.insert(_G.__notes, { msg = msg, level = level })
      end
      vim.lsp.config('pi_snippets', { cmd = cmd })
    ]],
    { H.rtp, H.server_cmd() }
  )
  return c
end

--- @param code string
--- @param args? any[]
--- @return any
function Child:lua(code, args)
  return vim.rpcrequest(self.ch, 'nvim_exec_lua', code, args or {})
end

--- @param keys string
function Child:input(keys)
  vim.rpcrequest(self.ch, 'nvim_input', keys)
end

--- @param expr string
--- @return any
function Child:eval(expr)
  return vim.rpcrequest(self.ch, 'nvim_eval', expr)
end

--- Polls the child until `code` (Lua returning a value) is truthy.
--- @param code string
--- @param msg string
--- @param timeout? integer ms
--- @return any the truthy value
function Child:wait(code, msg, timeout)
  local deadline = vim.uv.now() + (timeout or 10000)
  while true do
    local v = self:lua(code)
    if v and v ~= vim.NIL then
      return v
    end
    if vim.uv.now() > deadline then
      error('timed out waiting in child for ' .. msg, 2)
    end
    vim.uv.sleep(20)
    vim.uv.update_time()
  end
end

--- Current buffer lines of the child.
--- @return string[]
function Child:lines()
  return self:lua('return vim.api.nvim_buf_get_lines(0, 0, -1, false)')
end

--- Opens `path` in the child with pi_snippets enabled; waits for attach + load.
--- @param path string
--- @return integer client_id
function Child:open(path)
  self:lua(
    [[
      vim.lsp.enable('pi_snippets')
      vim.cmd.edit(vim.fn.fnameescape(...))
    ]],
    { path }
  )
  return self:wait(
    [[
      local c = vim.lsp.get_clients({ bufnr = 0, name = 'pi_snippets' })[1]
      return c and c.initialized and require('pi_snippets').loaded(c.id) and c.id
    ]],
    'pi_snippets to attach in the child'
  )
end

return H
