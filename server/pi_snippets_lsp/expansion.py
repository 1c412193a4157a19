"""One left-to-right expansion pass over a whole prompt.

Rules: docs/grammar.md, "Expansion: one pass, no re-scan". Values are inserted literally and
never re-scanned, so a value that mentions another marker stays text; unknown markers
stay exactly as typed; ``%%name`` at a boundary yields the literal ``%name``.

The pass is linear in the text and bounded in memory whatever the number of markers:
candidates are found by ``MARKER_CANDIDATE_RE`` (a literal ``%`` search) and confirmed
by ``is_boundary_before`` only there; the output is joined in chunks sized to the text,
so the pieces alive at once stay a fraction of it; and what changed
(``Expansion.replacements``) is not stored per marker but produced again on demand by
the same scan.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, overload

from pi_snippets_lsp.core.grammar import (
    COMMON_SEPARATORS,
    MARKER_CANDIDATE_RE,
    TRIGGER,
    is_boundary_before,
)

#: Output pieces are joined into a chunk once there is one per this many characters of
#: the text (each kept slice of the text is an object of its own, some 50 bytes): memory
#: stays a small multiple of the text, while a prompt with few markers is joined once.
_CHARS_PER_PIECE: Final = 64


@dataclass(frozen=True, slots=True)
class Replacement:
    """One marker that changed: ``text[start:end]`` (code points) became ``new_text``."""

    start: int
    end: int
    new_text: str


def _markers(text: str, snippets: Mapping[str, str]) -> Iterator[tuple[int, int, str]]:
    """Every marker of ``text`` that expands, left to right: (start, end, new text).

    ``start`` is the marker's ``%``; the boundary, the wrappers and the trailing
    punctuation are kept as typed, so only ``%name`` or ``%%name`` is replaced. The same
    steps as ``expand``'s loop, which is written out for speed.
    """
    for match in MARKER_CANDIDATE_RE.finditer(text):
        escape, name = match.groups()
        if escape:
            new_text = TRIGGER + name
        else:
            value = snippets.get(name)
            if value is None:
                continue
            new_text = value
        start = match.start()
        if not start or is_boundary_before(text, start):
            yield start, match.end(), new_text


class Replacements(Sequence[Replacement]):
    """What one pass replaced, in text order, produced on demand.

    Storing a ``Replacement`` per marker would cost some 50 bytes each, far more than a
    marker's own characters; instead the scan runs again over the original text and the
    mapping ``expand`` was given (a generation's values never change). Compares equal to
    any sequence of the same replacements, a tuple included.
    """

    __slots__ = ("_count", "_items", "_snippets", "_text")

    def __init__(self, text: str, snippets: Mapping[str, str], count: int) -> None:
        self._text = text
        self._snippets = snippets
        self._count = count
        self._items: tuple[Replacement, ...] | None = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Replacement]:
        if self._items is not None:
            yield from self._items
            return
        seen = 0
        for start, end, new_text in _markers(self._text, self._snippets):
            seen += 1
            yield Replacement(start, end, new_text)
        if seen != self._count:
            raise RuntimeError("the snippets mapping changed after expand(); cannot replay it")

    @overload
    def __getitem__(self, index: int) -> Replacement: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Replacement]: ...
    def __getitem__(self, index: int | slice) -> Replacement | Sequence[Replacement]:
        if self._items is None:
            self._items = tuple(self)
        return self._items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Replacements | tuple | list):
            return list(self) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Replacements({list(self)!r})"


@dataclass(frozen=True, slots=True)
class Expansion:
    """The result of one pass: the new text, whether it changed, and what changed."""

    text: str
    changed: bool
    replacements: Sequence[Replacement] = ()


def expand(text: str, snippets: Mapping[str, str]) -> Expansion:
    """Expand every ``%name`` marker of ``text`` with ``snippets`` (name -> value).

    With nothing configured the text is returned unchanged, ``%%name`` included, as the
    original extension does: it has no work to do and touches nothing.
    """
    if not snippets or TRIGGER not in text:
        return Expansion(text=text, changed=False)

    get = snippets.get
    chunk = max(256, len(text) // _CHARS_PER_PIECE)
    chunks: list[str] = []
    pieces: list[str] = []
    last = 0
    count = 0
    # ``_markers`` inlined: this loop runs once per candidate ``%``, and a prompt dense
    # with ``%`` has one every few characters. The name is looked up before the boundary
    # is checked: most candidates of such a prompt are unknown names.
    for match in MARKER_CANDIDATE_RE.finditer(text):
        escape, name = match.groups()
        if escape:
            new_text = TRIGGER + name
        else:
            value = get(name)
            if value is None:
                continue
            new_text = value
        start = match.start()
        if (
            start
            and text[start - 1] not in COMMON_SEPARATORS  # pragma: no mutate (fast path)
            and not is_boundary_before(text, start)
        ):
            continue
        pieces += (text[last:start], new_text)
        last = match.end()
        count += 1
        if len(pieces) >= chunk:
            chunks.append("".join(pieces))
            pieces.clear()

    if not count:
        return Expansion(text=text, changed=False)
    pieces.append(text[last:])
    if chunks:
        chunks.append("".join(pieces))
        pieces = chunks
    expanded = "".join(pieces)
    del pieces, chunks
    return Expansion(
        text=expanded,
        changed=expanded != text,
        replacements=Replacements(text, snippets, count),
    )
