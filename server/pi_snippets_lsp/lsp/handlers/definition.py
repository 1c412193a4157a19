"""``textDocument/definition`` on a marker: the snippet's key in the settings file that
won the merge (docs/lsp.md, "Definition"); client-layer snippets have none."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from pi_snippets_lsp.core.catalog import snippet_named
from pi_snippets_lsp.core.hover import layer_of
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.handlers.common import prompt_marker, settings_document
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.settings.files import SettingsFileError
from pi_snippets_lsp.settings.locate import snippet_key_span


def register(server: SnippetsServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(
        ls: SnippetsServer, params: types.DefinitionParams
    ) -> types.Location | None:
        found = await prompt_marker(ls, params.text_document.uri, params.position)
        if found is None or found[2].marker.escape:
            return None
        snippet = snippet_named(found[1], found[2].marker.name)
        if snippet is None or layer_of(snippet.source, ls.session.user_file) == "client":
            return None
        try:
            target, _ = await settings_document(ls, Path(snippet.source))
        except SettingsFileError:  # swapped for a FIFO, grown too large, ...: no target
            return None
        span = snippet_key_span(target.text, snippet.name) if target else None
        if target is None or span is None:
            return None
        return types.Location(uri=target.uri, range=translate.lsp_range(target, *span, ls.encoding))
