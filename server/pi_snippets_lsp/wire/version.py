"""The package version: the one place it is written (pyproject.toml reads it from here).

It lives in ``wire`` because it crosses connections: the LSP server's ``serverInfo``, the
MCP server's ``serverInfo`` and the client's ``clientInfo`` all carry it.
"""

from typing import Final

VERSION: Final = "0.2.0"
