"""The snippets as a Model Context Protocol server (``pi-snippets-lsp mcp``).

docs/mcp.md. ``answers`` holds every answer as a pure function of one generation,
``live`` keeps the generation current as the settings files change, ``jsonrpc`` reads
and writes the lines on stdio, ``protocol`` holds each protocol revision's rules, and
``server`` is the session. Standard library only (no protocol SDK, no pydantic), so the
server answers before agents stop waiting; the LSP server never imports this package.
"""

import sys


def import_asyncio_without_tls() -> None:
    """Import ``asyncio`` as a process that serves only stdio does: without ``ssl``.

    ``asyncio`` imports ``ssl`` (and OpenSSL) only to offer TLS connections, and a
    missing ``ssl`` is a case it handles (TLS is then refused). The MCP server speaks on
    stdin/stdout alone, and agents offer only the servers that answered within a moment
    of their start: it does without. Only that import is made without ``ssl``: a later
    ``import ssl`` in the process works as ever.
    """
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # an import of it fails
    try:
        import asyncio  # noqa: F401, PLC0415
    finally:
        del sys.modules["ssl"]
