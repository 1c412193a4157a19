"""The coding agents' own prompt boxes and config files: ``hook`` and ``setup``.

docs/agents.md. ``hook`` answers an agent's prompt hook with the prompt expanded by Pi's
rules; it runs on every prompt, so this layer imports only ``core`` and ``settings``
(and ``tomlkit``, in ``setup`` alone, for Codex's TOML). ``setup`` merges our MCP server
and hook into each agent's own config file.
"""
