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

from collections.abc import Iterator, Mapping
from itertools import compress, count, repeat
from operator import add, contains, getitem, itemgetter, or_, sub
from typing import Final

from pi_snippets_lsp.core.documents import Document, Encoding
from pi_snippets_lsp.core.grammar import TRIGGER
from pi_snippets_lsp.core.line_codec import units_of_each
from pi_snippets_lsp.core.markers import marker_pieces

_ESCAPE: Final = TRIGGER + TRIGGER
#: The legend's token types; a token's type is its index here.
TOKEN_TYPES: Final = ("macro", "string")
MARKER_TYPE: Final = TOKEN_TYPES.index("macro")
ESCAPE_TYPE: Final = TOKEN_TYPES.index("string")
TOKEN_MODIFIERS: Final[tuple[str, ...]] = ()
#: A token's type by whether it is an escape.
_TYPE_OF_ESCAPE: Final = (MARKER_TYPE, ESCAPE_TYPE)


def semantic_tokens(
    document: Document | str,
    snippets: Mapping[str, str],
    encoding: Encoding,
    start: int = 0,  # pragma: no mutate (from 1, a marker at 0 still shares character 1)
    end: int | None = None,
) -> list[int]:
    """The encoded tokens of a document's markers in ``start``..``end`` (code points;
    the whole document by default). ``document`` may be its text (a snapshot taken on
    the event loop, for a worker thread)."""
    data: list[int] = []
    for chunk in token_chunks(document, snippets, encoding, start, end):
        data += chunk
    return data


def token_chunks(
    document: Document | str,
    snippets: Mapping[str, str],
    encoding: Encoding,
    start: int,
    end: int | None,
) -> Iterator[list[int]]:
    """:func:`semantic_tokens` of ``start``..``end`` (0 and None: the whole document) in
    chunks, a window of the text at a time (joined in turn, they are its list): a caller
    writing them out keeps no list of them all.

    Linear in the text, and in bulk: the text comes cut at its markers
    (``markers.marker_pieces``: a dense 4 MB prompt holds half a million), and each
    window's integers come from lists of lengths, not from a Python step per marker. A
    token's start is relative to the token before on its line: that token's length (a
    marker is ASCII: as many units as characters) plus the units of the text between
    them. After a line break it is the units of the text after the last break. Units are
    counted with the document's encoding, piece by piece (``line_codec.units_of_each``),
    except in a window of ASCII text, where each character is one unit in every encoding.
    """
    text = document if isinstance(document, str) else document.text
    # Where the previous window left off: lines since the last token's line, and the
    # units since the last token's start (on its line) or since the current line's start.
    lines, column = 0, 0
    for between, markers in marker_pieces(text, snippets, start, end):
        window = "".join(between)
        # None: every character of the window is one unit.
        counted = None if encoding == "utf-32" or window.isascii() else encoding
        lengths = list(map(len, markers))
        # The start of the token after each piece, were there no line break in it.
        previous = [column]
        previous += lengths
        starts = list(map(add, previous, _units(between, counted)))
        line_deltas = [0] * len(between)
        line_deltas[0] = lines
        cr = "\r" in window
        if cr or "\n" in window:
            broken = list(compress(count(), _holding_breaks(between, cr)))
            pieces = list(map(getitem, repeat(between), broken))
            breaks, after = _line_breaks(pieces, cr)
            for index, more, units in zip(broken, breaks, _units(after, counted), strict=True):
                line_deltas[index] += more
                starts[index] = units
        lines, column = line_deltas[-1], starts[-1]
        if markers:
            del line_deltas[-1], starts[-1]
            chunk = [0] * (5 * len(markers))  # the modifiers stay 0: there are none
            chunk[0::5] = line_deltas
            chunk[1::5] = starts
            chunk[2::5] = lengths
            if _ESCAPE in "".join(markers):
                escapes = map(contains, markers, repeat(_ESCAPE))
                chunk[3::5] = map(getitem, repeat(_TYPE_OF_ESCAPE), escapes)
            else:
                chunk[3::5] = repeat(MARKER_TYPE, len(markers))
            yield chunk


def _units(pieces: list[str], encoding: Encoding | None) -> list[int]:
    """Each piece's length in code units of ``encoding`` (None: in characters)."""
    return list(map(len, pieces)) if encoding is None else units_of_each(pieces, encoding)


def _holding_breaks(pieces: list[str], cr: bool) -> Iterator[bool]:
    """Whether each piece holds an LSP line break (a CR can be one only when ``cr``)."""
    found = map(contains, pieces, repeat("\n"))
    return map(or_, found, map(contains, pieces, repeat("\r"))) if cr else found


def _line_breaks(pieces: list[str], cr: bool) -> tuple[Iterator[int], list[str]]:
    """The LSP line breaks (LF, CR, CRLF) in each piece, and its text after the last
    one; without ``cr``, no piece holds a CR."""
    breaks = map(str.count, pieces, repeat("\n"))
    after = map(itemgetter(2), map(str.rpartition, pieces, repeat("\n")))
    if cr:
        lone = map(
            sub, map(str.count, pieces, repeat("\r")), map(str.count, pieces, repeat("\r\n"))
        )
        breaks = map(add, breaks, lone)
        after = map(itemgetter(2), map(str.rpartition, after, repeat("\r")))
    return breaks, list(after)
