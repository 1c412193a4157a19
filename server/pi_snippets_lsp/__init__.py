"""pi-snippets-lsp: Pi's ``%name`` prompt snippets for every LSP editor and agent frontend.

The in-process API (``load_config``, ``expand``, ``complete``) is in ``api.py``; the
out-of-process client (``SnippetsClient``) is in the ``client`` package and is imported
only when one of its names is used, so the server process never loads its threads and
sockets. Both are documented in docs/agent-frontends.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pi_snippets_lsp.api import (
    Config,
    Expansion,
    Snippet,
    Suggestion,
    Suggestions,
    complete,
    expand,
    load_config,
)

#: The package version: the one place it is written (pyproject.toml reads it from here).
__version__ = "0.2.0"

if TYPE_CHECKING:
    from pi_snippets_lsp.client import (
        ServerExitedError,
        ServerUnavailableError,
        SnippetsClient,
        SnippetsClientError,
        SnippetsError,
        SnippetsTimeoutError,
    )

_CLIENT_NAMES = frozenset(
    {
        "ServerExitedError",
        "ServerUnavailableError",
        "SnippetsClient",
        "SnippetsClientError",
        "SnippetsError",
        "SnippetsTimeoutError",
    }
)


def __getattr__(name: str) -> Any:
    """Import the client on first use of one of its names."""
    if name in _CLIENT_NAMES:
        return getattr(importlib.import_module(".client", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Config",
    "Expansion",
    "ServerExitedError",
    "ServerUnavailableError",
    "Snippet",
    "SnippetsClient",
    "SnippetsClientError",
    "SnippetsError",
    "SnippetsTimeoutError",
    "Suggestion",
    "Suggestions",
    "__version__",
    "complete",
    "expand",
    "load_config",
]
