"""The snippets as a Model Context Protocol server (``pi-snippets-lsp mcp``).

docs/mcp.md. ``answers`` holds every answer as a pure function of one generation (no
SDK), ``live`` keeps the generation current as the settings files change (no SDK), and
``server`` wires both to the official ``mcp`` SDK (the optional extra
``pi-snippets-lsp[mcp]``). Nothing outside this package imports the SDK, and the LSP
server never imports this package.
"""
