"""The markers of a prompt: where submission would replace something, and with what.

docs/lsp.md, "Markers in the editor"; docs/grammar.md for the rules.

A *marker* here is a span that ``snippets/expand`` would replace: a ``%name`` naming a
configured snippet at a boundary, or an escape ``%%name`` (which becomes the literal
``%name``). Every editor feature that points at markers (hover, definition, semantic
tokens, "Expand snippet markers") takes them from this module, and this module takes
them from expansion's own scan (``expansion.marker_spans``), so what the editor shows
and what submission does agree by construction: ``x%name``, ``%Name`` and unknown names
are not markers, and with no snippet configured nothing is (not even ``%%name``, which
submission then leaves alone).

Only the lines concerned are scanned. That gives the same spans as scanning the whole
text: a marker never spans a line break, and the start of a line is a boundary exactly as
the start of the text is (every LSP line break is JavaScript whitespace).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from pi_snippets_lsp.core.expansion import cut_at
from pi_snippets_lsp.core.expansion import marker_pieces as expansion_pieces
from pi_snippets_lsp.core.expansion import marker_spans as expansion_spans
from pi_snippets_lsp.core.grammar import TRIGGER

_ESCAPE: Final = TRIGGER + TRIGGER
_LINE_BREAKS: Final = "\r\n"


@dataclass(frozen=True, slots=True)
class Marker:
    """``text[start:end]`` (code points): ``%name`` or ``%%name``, and what it becomes."""

    start: int
    end: int
    name: str
    #: ``%%name``: submission sends the literal ``%name``.
    escape: bool
    #: What submission puts in its place: the snippet's text, or ``%name`` for an escape.
    new_text: str

    @property
    def source_text(self) -> str:
        """The marker as typed."""
        return (_ESCAPE if self.escape else TRIGGER) + self.name

    @property
    def changes(self) -> bool:
        """Whether expanding it changes the text (a snippet may be its own marker)."""
        return self.new_text != self.source_text


def markers(
    text: str,
    snippets: Mapping[str, str],
    start: int = 0,  # pragma: no mutate (from 1, a marker at 0 still shares character 1)
    end: int | None = None,
) -> list[Marker]:
    """The markers of ``text`` in ``start``..``end`` (code points), in text order.

    A marker is in a range when they share a character, so a selection that cuts a marker
    takes the whole marker (it is replaced whole or not at all). An empty range is a
    cursor: it is on a marker when it is at its start, inside it, or right after it (where
    the cursor is after typing it). The whole text by default.
    """
    return list(iter_markers(text, snippets, start, end))


def iter_markers(
    text: str,
    snippets: Mapping[str, str],
    start: int = 0,  # pragma: no mutate (from 1, a marker at 0 still shares character 1)
    end: int | None = None,
) -> Iterator[Marker]:
    """:func:`markers`, one at a time: a caller walking a large text keeps no list of
    them, which would make the garbage collector walk it again and again while it grows."""
    for a, b, new_text in _spans(text, snippets, start, end):
        escape = text.startswith(_ESCAPE, a)
        name = text[a + len(_ESCAPE) : b] if escape else text[a + len(TRIGGER) : b]
        yield Marker(a, b, name, escape, new_text)


def marker_pieces(
    text: str, snippets: Mapping[str, str], start: int, end: int | None
) -> Iterator[tuple[list[str], list[str]]]:
    """The whole text cut at :func:`markers` in ``start``..``end`` (0 and None: all of
    it), in windows of ``(between, markers)``: each window's markers as typed, and the
    text around them (one piece more); joined in turn, the pieces are the text. For a
    caller that works on the markers in bulk (semantic tokens). The whole text comes in
    expansion's own windows (``expansion.marker_pieces``); a range is one window."""
    if start == 0 and end is None:
        return expansion_pieces(text, snippets)
    return iter([cut_at(text, _spans(text, snippets, start, end))])


def _spans(
    text: str, snippets: Mapping[str, str], start: int, end: int | None
) -> Iterator[tuple[int, int, str]]:
    """Expansion's own markers (``expansion.marker_spans``) on the lines ``start``..``end``
    touch, those the range takes (see :func:`markers`). With no snippet there is none,
    not even an escape: submission then leaves the text alone (``expansion.expand``)."""
    if not snippets:
        return
    end = len(text) if end is None else end
    first = _line_start(text, start)
    last = _line_end(text, max(start, end))
    cursor = start == end
    for a, b, new_text in expansion_spans(text, snippets, first, last):
        if a <= start <= b if cursor else a < end and b > start:
            yield a, b, new_text


def marker_at(text: str, offset: int, snippets: Mapping[str, str]) -> Marker | None:
    """The marker under a cursor at ``offset`` (see :func:`markers`), or None.

    Two markers never meet (a boundary character separates them), so there is at most one.
    """
    found = markers(text, snippets, offset, offset)
    return found[0] if found else None


def _line_start(text: str, offset: int) -> int:
    offset = max(0, min(offset, len(text)))
    # Searching from None or 1 instead of 0 finds the same line (mutants equivalent).
    lf, cr = text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)  # pragma: no mutate
    return max(lf, cr) + 1


def _line_end(text: str, offset: int) -> int:
    offset = max(0, min(offset, len(text)))
    ends = [i for i in (text.find("\n", offset), text.find("\r", offset)) if i >= 0]
    return min(ends) if ends else len(text)
