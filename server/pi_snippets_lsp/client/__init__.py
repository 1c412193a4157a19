"""The out-of-process client: talk to ``pi-snippets-lsp`` over stdio or TCP.

For agent frontends that prefer process isolation (docs/agent-frontends.md)::

    from pi_snippets_lsp.client import SnippetsClient

    with SnippetsClient.start(settings="examples/settings.json") as client:
        text, changed = client.expand("%use-mcp, please")
        popup = client.complete("see %us")

``transport`` is JSON-RPC over a byte stream (threads, ids, answers to the server's
requests); ``snippets_client`` is the snippet API on top. The server never imports this
package.
"""

from __future__ import annotations

from pi_snippets_lsp.client.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SERVER_NOT_INITIALIZED,
    ServerExitedError,
    ServerUnavailableError,
    SnippetsClientError,
    SnippetsError,
    SnippetsTimeoutError,
)
from pi_snippets_lsp.client.snippets_client import DEFAULT_TIMEOUT, ShowMessage, SnippetsClient
from pi_snippets_lsp.wire.messages import ExpandResult, SnippetsListing

__all__ = [
    "DEFAULT_TIMEOUT",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "SERVER_NOT_INITIALIZED",
    "ExpandResult",
    "ServerExitedError",
    "ServerUnavailableError",
    "ShowMessage",
    "SnippetsClient",
    "SnippetsClientError",
    "SnippetsError",
    "SnippetsListing",
    "SnippetsTimeoutError",
]
