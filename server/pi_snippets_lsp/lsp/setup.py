"""The composition root: a server with every handler module registered.

The server (``lsp.server``) knows no handler; each module of ``lsp.handlers`` registers
its own methods with ``register(server)``. The order matters only for ``initialize``,
which must be first: its handler fills the session before pygls answers.
"""

from __future__ import annotations

from typing import Final

from pi_snippets_lsp.lsp.handlers import (
    code_actions,
    completion,
    definition,
    edit_snippet,
    hover,
    lifecycle,
    manage,
    save_snippet,
    semantic_tokens,
    settings_documents,
    snippets,
    typo_hints,
    workspace,
)
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.lsp.session import ServerFlags

HANDLERS: Final = (
    lifecycle,
    workspace,
    completion,
    snippets,
    hover,
    definition,
    semantic_tokens,
    code_actions,
    save_snippet,
    settings_documents,
    manage,
    edit_snippet,
    typo_hints,
)


def create_server(flags: ServerFlags | None = None) -> SnippetsServer:
    """A server of one session with every handler registered."""
    server = SnippetsServer(flags)
    for handlers in HANDLERS:
        handlers.register(server)
    return server
