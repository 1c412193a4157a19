"""pi-snippets-lsp: Pi's ``%name`` prompt snippets for every LSP editor and agent frontend.

The in-process API (``load_config``, ``expand``, ``complete``) is in ``api.py``; the
out-of-process client (``SnippetsClient``) is in the ``client`` package. Each is
imported when one of its names is first used, so a process loads only what it uses: the
server never loads the client's threads and sockets, and ``pi-snippets-lsp expand`` (which
runs this package's ``__main__``) not the completion model. Both are documented in
docs/agent-frontends.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pi_snippets_lsp.wire.version import VERSION

#: The package version (written once, in ``wire.version``).
__version__ = VERSION

if TYPE_CHECKING:
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


_API_NAMES = frozenset(
    {
        "Config",
        "Expansion",
        "Snippet",
        "Suggestion",
        "Suggestions",
        "complete",
        "expand",
        "load_config",
    }
)


def __getattr__(name: str) -> Any:
    """Import the API or the client on first use of one of its names."""
    if name in _API_NAMES:
        return getattr(importlib.import_module(".api", __name__), name)
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
