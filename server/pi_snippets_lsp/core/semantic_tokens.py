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
from pi_snippets_lsp.core.grammar import TRIGGER
from pi_snippets_lsp.core.line_codec import units_of
from pi_snippets_lsp.core.markers import marker_spans

_ESCAPE: Final = TRIGGER + TRIGGER
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

    Linear in the text: one walk from the start, carrying the current line (and the
    break that ends it) and the column of the last marker, so each character is looked
    at a bounded number of times whatever the number of markers on a line (looking up each marker's
    position from the start of its line cost a 4 MB line 35 seconds). Markers are taken
    as spans (``markers.marker_spans``): a dense 4 MB prompt holds half a million.
    """
    text = document if isinstance(document, str) else document.text
    # Columns count code points when every character is one unit (the common case).
    same_units = encoding == "utf-32" or text.isascii()
    has_cr = "\r" in text
    data: list[int] = []
    line, column, anchor = 0, 0, 0  # ``anchor``: an offset on ``line`` at ``column``
    last_line, last_column = 0, 0
    line_end = _next_break(text, 0, has_cr)  # the break that ends ``line``
    for start_of, end_of, _ in marker_spans(text, snippets, start, end):
        while start_of > line_end:  # on a later line: past each break to it
            line += 1
            anchor = line_end + (2 if text.startswith("\r\n", line_end) else 1)
            column = 0
            line_end = _next_break(text, anchor, has_cr)
        if same_units:
            column += start_of - anchor
        else:
            column += units_of(text[anchor:start_of], encoding)
        delta_line = line - last_line
        delta_start = column - last_column if delta_line == 0 else column
        kind = ESCAPE_TYPE if text.startswith(_ESCAPE, start_of) else MARKER_TYPE
        data += (delta_line, delta_start, end_of - start_of, kind, 0)
        last_line, last_column = line, column
        anchor = start_of
    return data


def _next_break(text: str, start: int, has_cr: bool) -> int:
    """Where the first LSP line break at or after ``start`` is (``len(text)``: none)."""
    lf = text.find("\n", start)
    if lf < 0:
        lf = len(text)
    if not has_cr:
        return lf
    cr = text.find("\r", start, lf)
    return lf if cr < 0 else cr
