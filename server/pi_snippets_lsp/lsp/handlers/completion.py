"""``textDocument/completion``: Pi's fuzzy list of snippets for the ``%`` token before
the cursor (docs/lsp.md, "Completion")."""

from __future__ import annotations

from lsprotocol import types

from pi_snippets_lsp.core.completion import popup
from pi_snippets_lsp.core.documents import Position
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.lsp.translate import TRIGGER_CHARACTERS, JsonText, completion_list


def register(server: SnippetsServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=False),
    )
    async def completion(ls: SnippetsServer, params: types.CompletionParams) -> JsonText | None:
        config = await ls.session.loaded_config_for(params.text_document.uri)
        document = ls.documents.get(params.text_document.uri)
        position = Position(params.position.line, params.position.character)
        if document is None or not document.contains(position):
            return None
        if params.text_document.uri in ls.settings_documents:
            return None  # a settings file is no prompt (docs/lsp.md, "Settings files")
        before, _ = document.text_before(position, ls.encoding)
        listed = popup(before, config)
        if listed is None:
            return None
        return completion_list(listed, position.line, before, ls.encoding, ls.session.features)
