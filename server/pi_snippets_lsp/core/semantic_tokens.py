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
from pi_snippets_lsp.core.line_codec import units_of
from pi_snippets_lsp.core.markers import iter_markers

#: The legend's token types; a token's type is its index here.
TOKEN_TYPES: Final = ("macro", "string")
MARKER_TYPE: Final = TOKEN_TYPES.index("macro")
ESCAPE_TYPE: Final = TOKEN_TYPES.index("string")
TOKEN_MODIFIERS: Final[tuple[str, ...]] = ()


def semantic_tokens(
    document: Document | str,
    snippets: Mapping[str, str],
    encoding: Encoding,
    start: int = 0,  # pragma: no mutate (from 1, a marker at 0 still shares character 1)
    end: int | None = None,
) -> list[int]:
    """The encoded tokens of a document's markers in ``start``..``end`` (code points;
    the whole document by default). ``document`` may be its text (a snapshot taken on
    the event loop, for a worker thread).

    Linear in the text: one walk from the start, carrying the current line and the
    column of the last marker, so each character is looked at a bounded number of times
    whatever the number of markers on a line (looking up each marker's position from the
    start of its line cost a 4 MB line 35 seconds).
    """
    text = document if isinstance(document, str) else document.text
    data: list[int] = []
    line, column, anchor = 0, 0, 0  # ``anchor``: an offset on ``line`` at ``column``
    last_line, last_column = 0, 0
    for marker in iter_markers(text, snippets, start, end):
        breaks = _line_breaks(text, anchor, marker.start)
        if breaks:
            line += breaks
            anchor = max(
                text.rfind("\n", anchor, marker.start), text.rfind("\r", anchor, marker.start)
            )
            anchor, column = anchor + 1, 0
        column += units_of(text[anchor : marker.start], encoding)
        length = marker.end - marker.start
        delta_line = line - last_line
        delta_start = column - last_column if delta_line == 0 else column
        kind = ESCAPE_TYPE if marker.escape else MARKER_TYPE
        data.extend((delta_line, delta_start, length, kind, 0))
        last_line, last_column = line, column
        anchor = marker.start
    return data


def _line_breaks(text: str, start: int, end: int) -> int:
    """LSP line breaks (``\\n``, ``\\r\\n``, ``\\r``) in ``text[start:end]``. A marker never
    holds one, and ``end`` is a marker's ``%``, so no CRLF is cut in two."""
    lf = text.count("\n", start, end)
    cr = text.count("\r", start, end)
    return lf + cr - (text.count("\r\n", start, end) if lf and cr else 0)
