"""``textDocument/semanticTokens/full`` and ``/range``: the markers of a prompt
(docs/lsp.md, "Semantic tokens")."""

from __future__ import annotations

from typing import Final

from lsprotocol import types

from pi_snippets_lsp.core.semantic_tokens import TOKEN_MODIFIERS, TOKEN_TYPES, semantic_tokens
from pi_snippets_lsp.lsp.handlers.common import offsets, prompt
from pi_snippets_lsp.lsp.server import SnippetsServer

LEGEND: Final = types.SemanticTokensLegend(
    token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS)
)


def register(server: SnippetsServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    async def tokens_full(
        ls: SnippetsServer, params: types.SemanticTokensParams
    ) -> types.SemanticTokens | None:
        found = await prompt(ls, params.text_document.uri)
        if found is None:
            return None
        document, config = found
        return types.SemanticTokens(data=semantic_tokens(document, config.values, ls.encoding))

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
    async def tokens_range(
        ls: SnippetsServer, params: types.SemanticTokensRangeParams
    ) -> types.SemanticTokens | None:
        found = await prompt(ls, params.text_document.uri)
        if found is None:
            return None
        document, config = found
        start, end = offsets(ls, document, params.range)
        data = semantic_tokens(document, config.values, ls.encoding, start, end)
        return types.SemanticTokens(data=data)
