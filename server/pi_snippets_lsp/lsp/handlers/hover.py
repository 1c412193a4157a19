"""``textDocument/hover`` on a marker: its whole value, where it is defined, or what an
escape leaves (docs/lsp.md, "Hover")."""

from __future__ import annotations

from lsprotocol import types

from pi_snippets_lsp.core.hover import hover_text, layer_of
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.handlers.common import prompt_marker, snippet_named
from pi_snippets_lsp.lsp.server import SnippetsServer


def register(server: SnippetsServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SnippetsServer, params: types.HoverParams) -> types.Hover | None:
        found = await prompt_marker(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        document, config, marker = found
        snippet = snippet_named(config, marker.name)
        layer = layer_of(snippet.source, ls.session.user_file) if snippet else "client"
        markdown = ls.session.features.hover_markdown
        text = hover_text(marker, None if marker.escape else snippet, layer, markdown)
        return translate.hover(document, marker, text, markdown, ls.encoding)
