"""Did you mean: the known snippet names a mistyped one is a typo of.

docs/lsp.md, "Unknown markers: did you mean". Pi's own ranking (``core.ranking``) is a
subsequence match: ``reveiw`` holds no ``review`` in order, so it finds nothing for the
most common typo there is, two letters swapped. This rule finds it.

The rule: a name is a typo of a known one when their optimal-string-alignment
(restricted Damerau-Levenshtein) distance is at most the *allowance* of the typed
name's length: one edit for a name of up to four characters, two beyond. An edit is
inserting, deleting or replacing one character, or swapping two adjacent ones (a
transposition counts one). The allowance grows with the length so a short name is not
"close" to everything: with two edits, ``ab`` would be a typo of every name of up to
four characters. A name equal to a known one is no typo (it is that name).

The candidates come closest first; among equally close ones, in the order of the names
given (a generation's names are sorted). The cost is linear in the number of names:
names whose length differs by more than the allowance are skipped before any distance
is computed (a distance is at least the difference of the lengths), and a distance is
abandoned as soon as a whole row of its table exceeds the allowance.

The unknown markers of a text (:func:`unknown_markers`) are the ``%name`` at a
boundary that submission leaves as typed because no snippet has the name: expansion's
own candidates (``grammar.MARKER_CANDIDATE_RE`` and ``is_boundary_before``), so text
Pi leaves alone for another reason (``x%name``, ``--format=%h``, ``100%``, an escape
``%%name``) is never one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from pi_snippets_lsp.core.grammar import MARKER_CANDIDATE_RE, is_boundary_before

#: Names of up to this many characters allow one edit; longer ones two.
SHORT_NAME: Final = 4


def allowance(length: int) -> int:
    """The edits a typed name of ``length`` characters may be away from a known one."""
    return 1 if length <= SHORT_NAME else 2


def osa_distance(a: str, b: str, bound: int) -> int:
    """The optimal-string-alignment distance of ``a`` and ``b`` when it is at most
    ``bound``; ``bound + 1`` when it is more (the computation stops at the first row
    whose every cell exceeds ``bound``: no later row can come back under it)."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    over = bound + 1
    before: list[int] = []  # pragma: no mutate (read from the second row on, once set)
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i]
        char = a[i - 1]
        for j in range(1, len(b) + 1):
            cost = previous[j - 1] + (char != b[j - 1])
            cost = min(cost, previous[j] + 1, current[j - 1] + 1)
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == b[j - 1]:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        if min(current) > bound:
            return over
        before, previous = previous, current
    return min(previous[-1], over)


class TypoIndex:
    """Known names grouped by length, to ask for the typos of many names (a document's
    unknown markers) without looking at the names of other lengths each time."""

    __slots__ = ("_by_length", "_known")

    def __init__(self, names: Iterable[str]) -> None:
        self._by_length: dict[int, list[tuple[int, str]]] = {}
        self._known: set[str] = set()
        for order, name in enumerate(names):
            if name in self._known:
                continue
            self._known.add(name)
            self._by_length.setdefault(len(name), []).append((order, name))

    def candidates(self, name: str, limit: int | None = None) -> list[str]:
        """The known names ``name`` is a typo of, closest first (ties in the names'
        order), at most ``limit`` of them; none for a known or empty name."""
        if not name or name in self._known:
            return []
        bound = allowance(len(name))
        found: list[tuple[int, int, str]] = []
        # Only the lengths within reach; any wider range finds the same names (the distance
        # checks the lengths itself), at the cost of comparing more of them.
        reach = range(len(name) - bound, len(name) + bound + 1)  # pragma: no mutate
        for length in reach:
            for order, known in self._by_length.get(length, ()):
                distance = osa_distance(name, known, bound)
                if distance <= bound:
                    found.append((distance, order, known))
        found.sort()
        return [known for _, _, known in found[: None if limit is None else max(limit, 0)]]


def typo_candidates(names: Iterable[str], name: str, limit: int | None = None) -> list[str]:
    """The names of ``names`` that ``name`` is a typo of (see the module's rule), closest
    first, at most ``limit``: ``typo_candidates(["review", "rebase"], "reveiw")`` is
    ``["review"]``."""
    return TypoIndex(names).candidates(name, limit)


@dataclass(frozen=True, slots=True)
class UnknownMarker:
    """``text[start:end]`` is ``%name``, which no snippet has, and ``suggestion`` is the
    closest known name it is a typo of."""

    start: int
    end: int
    name: str
    suggestion: str


def unknown_markers(
    text: str, snippets: Mapping[str, str], index: TypoIndex
) -> Iterator[UnknownMarker]:
    """The markers of ``text`` that name no snippet of ``snippets`` but are a typo of one
    (``index``: the same names), in text order. One pass over the text; each distinct
    unknown name is looked up once."""
    if not snippets:
        return
    asked: dict[str, str | None] = {}
    for match in MARKER_CANDIDATE_RE.finditer(text):
        escape, name = match.groups()
        if escape or name in snippets:
            continue
        start, end = match.span()
        if not is_boundary_before(text, start):
            continue
        if name not in asked:
            found = index.candidates(name, 1)
            asked[name] = found[0] if found else None
        suggestion = asked[name]
        if suggestion is not None:
            yield UnknownMarker(start, end, name, suggestion)
