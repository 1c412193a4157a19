"""The snippets as a Model Context Protocol server (``pi-snippets-lsp mcp``).

docs/mcp.md. ``answers`` holds every answer as a pure function of one generation,
``live`` keeps the generation current as the settings files change, ``jsonrpc`` reads
and writes the lines on stdio, ``protocol`` holds each protocol revision's rules, and
``server`` is the session. Standard library only (no protocol SDK, no pydantic), so the
server answers before agents stop waiting; the LSP server never imports this package.
"""
