"""``textDocument/hover`` on a marker: its whole value, where it is defined, or what an
escape leaves (docs/lsp.md, "Hover")."""

from __future__ import annotations

from lsprotocol import types

from pi_snippets_lsp.core.catalog import snippet_named
from pi_snippets_lsp.core.hover import hover_text, layer_of
from pi_snippets_lsp.lsp.handlers.common import prompt_marker
from pi_snippets_lsp.lsp.server import SnippetsServer


def register(server: SnippetsServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SnippetsServer, params: types.HoverParams) -> types.Hover | None:
        found = await prompt_marker(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        _, config, spot = found
        marker = spot.marker
        snippet = snippet_named(config, marker.name)
        layer = layer_of(snippet.source, ls.session.user_file) if snippet else "client"
        markdown = ls.session.features.hover_markdown
        text = hover_text(marker, None if marker.escape else snippet, layer, markdown)
        kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
        line = params.position.line
        return types.Hover(
            contents=types.MarkupContent(kind=kind, value=text),
            range=types.Range(types.Position(line, spot.start), types.Position(line, spot.end)),
        )
