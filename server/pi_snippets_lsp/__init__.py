"""pi-snippets-lsp: Pi's ``%name`` prompt snippets for every LSP editor and agent frontend.

The in-process API (``load_config``, ``expand``, ``complete``) is in ``api.py``; the
out-of-process client (``SnippetsClient``) is in ``client.py``. Both are documented in
docs/agent-frontends.md.
"""

__version__ = "0.1.0"

from .api import (
    CompletionItem,
    CompletionResult,
    Config,
    Expansion,
    complete,
    expand,
    load_config,
)
from .client import (
    ServerExitedError,
    SnippetsClient,
    SnippetsClientError,
    SnippetsError,
    SnippetsTimeoutError,
)

__all__ = [
    "CompletionItem",
    "CompletionResult",
    "Config",
    "Expansion",
    "ServerExitedError",
    "SnippetsClient",
    "SnippetsClientError",
    "SnippetsError",
    "SnippetsTimeoutError",
    "__version__",
    "complete",
    "expand",
    "load_config",
]
