-- :checkhealth pi_snippets
local M = {}

local function ps_options()
  return require('pi_snippets.util').options()
end

function M.check()
  local health = vim.health
  health.start('pi_snippets')
  if vim.fn.has('nvim-0.11') == 1 then
    local v = vim.version()
    health.ok(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch))
  else
    health.error('Neovim 0.11 or newer is required (vim.lsp.config / vim.lsp.enable)')
  end

  local ok, config = pcall(function()
    return vim.lsp.config.pi_snippets
  end)
  local cmd = ok and config and config.cmd
  if type(cmd) == 'table' and type(cmd[1]) == 'string' then
    if not require('pi_snippets.client').missing_command(config) then
      health.ok(('server command %q found: %s'):format(cmd[1], vim.fn.exepath(cmd[1])))
    else
      health.error(
        ('server command %q is not executable'):format(cmd[1]),
        {
          'pipx install pi-snippets-lsp (or uv tool install pi-snippets-lsp)',
          "or vim.lsp.config('pi_snippets', { cmd = { '/path/to/pi-snippets-lsp' } })",
        }
      )
    end
  elseif type(cmd) == 'function' then
    health.info('server command is a function; not checked')
  else
    health.warn('no pi_snippets LSP config found on the runtimepath')
  end

  if vim.lsp.is_enabled and vim.lsp.is_enabled('pi_snippets') then
    health.ok("vim.lsp.enable('pi_snippets') is set")
  else
    health.warn(
      'pi_snippets is not enabled',
      { "add vim.lsp.enable('pi_snippets') to your config" }
    )
  end

  local engine = require('pi_snippets.completion').other_engine()
  if engine then
    health.info(('completion is left to %s (its LSP source lists the snippets)'):format(engine))
  elseif ps_options().completion then
    health.info('completion: the built-in menu (vim.lsp.completion)')
  else
    health.info('completion: off (setup({ completion = false }))')
  end

  local ps = require('pi_snippets')
  local clients = vim.lsp.get_clients({ name = ps.name })
  if #clients == 0 then
    health.info('no pi_snippets client is running')
  end
  for _, client in ipairs(clients) do
    local result = ps.loaded(client.id)
    if not result then
      health.info(('client %d: nothing loaded yet'):format(client.id))
    else
      health.info(
        ('client %d (%s): %d snippets, shortcut %s, expandOnCompletion %s'):format(
          client.id,
          client.root_dir or 'no root',
          #(result.snippets or {}),
          type(result.shortcut) == 'string' and result.shortcut or 'none',
          tostring(result.expandOnCompletion)
        )
      )
      if type(result.shortcut) == 'string' then
        local lhs, err = ps.keys(result.shortcut)
        if lhs then
          health.ok(('shortcut %s is bound as %s'):format(result.shortcut, lhs))
        else
          health.warn(err or 'shortcut cannot be bound')
        end
      end
      for _, w in ipairs(result.warnings or {}) do
        health.warn(w)
      end
    end
  end
end

return M
