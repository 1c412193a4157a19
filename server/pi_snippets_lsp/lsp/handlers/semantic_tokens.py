"""``textDocument/semanticTokens/full`` and ``/range``: the markers of a prompt
(docs/lsp.md, "Semantic tokens")."""

from __future__ import annotations

from typing import Any, Final

from lsprotocol import types

from pi_snippets_lsp.core.semantic_tokens import TOKEN_MODIFIERS, TOKEN_TYPES, token_chunks
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
    text): a million integers turned into JSON one by one on the loop would hold every
    other answer meanwhile.

    Chunk by chunk (``token_chunks``: a window of at most 16 Ki characters each, a short
    run of C calls, so the worker thread lets the loop have the GIL in between). No
    spaces: JSON would allow them, but they would be a third of the bytes."""
    parts = [_json_of(chunk) for chunk in token_chunks(text, snippets, encoding, start, end)]
    return JsonText('{"data":[' + ",".join(parts) + "]}")


def _json_of(chunk: list[int]) -> str:
    """A chunk's integers, written as JSON numbers between commas.

    A chunk of one-digit integers (markers a few characters apart: the most tokens a
    text can hold, the costliest answer) is written by one translation of its bytes;
    any other, integer by integer from a table of numerals: tokens are a few integers
    over and over (line deltas, lengths, types, small starts), whose JSON need not be
    made again each time."""
    try:
        digits = bytes(chunk).translate(_DIGIT_OF_BYTE)
    except ValueError:  # an integer over 255
        digits = _NO_DIGIT
    if _NO_DIGIT not in digits:
        written = bytearray(b",") * (2 * len(chunk) - 1)
        written[0::2] = digits
        return written.decode("ascii")
    return ",".join(map(_NUMERALS.__getitem__, chunk))


#: A byte's digit, for the integers 0 to 9; ``_NO_DIGIT`` for any other.
_NO_DIGIT: Final = b"x"
_DIGIT_OF_BYTE: Final = b"0123456789" + _NO_DIGIT * 246


class _Numerals(dict[int, str]):
    """An integer's JSON: the small ones kept, any other made when asked."""

    def __missing__(self, number: int) -> str:
        return str(number)


#: The integers under this many are written from the table (a few hundred KB).
_KEPT_NUMERALS: Final = 4096
_NUMERALS: Final = _Numerals((number, str(number)) for number in range(_KEPT_NUMERALS))
