"""``textDocument/semanticTokens/full`` and ``/range``: the markers of a prompt
(docs/lsp.md, "Semantic tokens")."""

from __future__ import annotations

from typing import Any, Final

from lsprotocol import types

from pi_snippets_lsp.core.semantic_tokens import TOKEN_MODIFIERS, TOKEN_TYPES, semantic_tokens
from pi_snippets_lsp.lsp.handlers.common import offsets, prompt
from pi_snippets_lsp.lsp.offload import off_loop
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.lsp.translate import JsonText

LEGEND: Final = types.SemanticTokensLegend(
    token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS)
)


def register(server: SnippetsServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    async def tokens_full(
        ls: SnippetsServer, params: types.SemanticTokensParams
    ) -> JsonText | None:
        found = await prompt(ls, params.text_document.uri)
        if found is None:
            return None
        document, config = found
        text = document.text  # a snapshot: the document may change while a thread works
        return await off_loop(ls, len(text), tokens_json, text, config.values, ls.encoding)

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
    async def tokens_range(
        ls: SnippetsServer, params: types.SemanticTokensRangeParams
    ) -> JsonText | None:
        found = await prompt(ls, params.text_document.uri)
        if found is None:
            return None
        document, config = found
        start, end = offsets(ls, document, params.range)
        text = document.text
        return await off_loop(
            ls, len(text), tokens_json, text, config.values, ls.encoding, start, end
        )


def tokens_json(
    text: str, snippets: Any, encoding: Any, start: int = 0, end: int | None = None
) -> JsonText:
    """``SemanticTokens`` encoded where they are computed (a worker thread, for a large
    text): a million integers turned into JSON one by one on the loop took a second."""
    data = semantic_tokens(text, snippets, encoding, start, end)
    # In slices: one C call over all of them would hold the GIL (and the loop) that long.
    # A list's own ``str`` writes its integers faster than joining them one by one; its
    # spaces go (JSON would allow them, but they are a third of the bytes).
    step = 16384
    parts = [str(data[i : i + step])[1:-1].replace(" ", "") for i in range(0, len(data), step)]
    return JsonText('{"data":[' + ",".join(parts) + "]}")
