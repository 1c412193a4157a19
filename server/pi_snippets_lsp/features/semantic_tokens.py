"""Semantic tokens: every marker that will expand, and every escape; nothing else.

docs/lsp.md, "Semantic tokens". The token types are standard ones, so default color
themes color them without any configuration: ``macro`` for a marker (it is replaced by
its definition when the prompt is sent), ``string`` for an escape (it is sent as a
literal). A ``%name`` that will not expand (unknown, glued to a word, uppercase) gets no
token, so the user sees while typing which markers will expand.

The data is LSP's relative encoding: five integers per token (line delta, start delta
on the same line or start on a new line, length, type index, modifier bits), positions
in the negotiated encoding. A marker never spans lines, and it is ASCII (``%`` and a
name, docs/grammar.md), so its length is its number of characters in every encoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pi_snippets_lsp.core.documents import Document, Encoding
from pi_snippets_lsp.core.markers import markers

#: The legend's token types; a token's type is its index here.
TOKEN_TYPES: Final = ("macro", "string")
MARKER_TYPE: Final = TOKEN_TYPES.index("macro")
ESCAPE_TYPE: Final = TOKEN_TYPES.index("string")
TOKEN_MODIFIERS: Final[tuple[str, ...]] = ()


def semantic_tokens(
    document: Document,
    snippets: Mapping[str, str],
    encoding: Encoding,
    start: int = 0,  # pragma: no mutate (from 1, a marker at 0 still shares character 1)
    end: int | None = None,
) -> list[int]:
    """The encoded tokens of ``document``'s markers in ``start``..``end`` (code points;
    the whole document by default)."""
    data: list[int] = []
    line, column = 0, 0
    text = document.text
    for marker in markers(text, snippets, start, end):
        position = document.position_at(marker.start, encoding)
        delta_line = position.line - line
        delta_start = position.character - column if delta_line == 0 else position.character
        length = marker.end - marker.start
        kind = ESCAPE_TYPE if marker.escape else MARKER_TYPE
        data.extend((delta_line, delta_start, length, kind, 0))
        line, column = position.line, position.character
    return data
