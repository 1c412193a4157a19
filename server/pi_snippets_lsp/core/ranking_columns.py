"""Pi's fuzzy filter for a popup, over all texts at once: a best-first search on bit sets.

The texts are kept as columns of bit sets, and the search follows the positions pi-tui's
greedy scan takes.

Rules: docs/grammar.md, "Ranking" (``core.ranking`` states them text by text). A popup
lists the best 20 of thousands of names on every keystroke, and pi-tui scores every name
each time; following each name in Python makes every keystroke's cost grow with the
number of names. Here the texts that take the same positions for a query's
first characters are one state, a bit set (bit k: text k): one integer operation moves
all of them one character on, so the cost follows the number of distinct positions, not
of texts, and the search stops once the list is settled. The scores are pi-tui's to the
bit: each state's score is the same sums in the same order as pi-tui's loop.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import accumulate, groupby, repeat
from math import inf
from operator import and_, itemgetter, or_
from typing import Final, NamedTuple

from pi_snippets_lsp.core.grammar import FUZZY_BOUNDARIES

#: The columns of an index hold at most this many characters (texts times positions);
#: past it, the positions a column holds are fewer and the longer texts are scored one by
#: one (``Columns``).
_MOST_CELLS: Final = 1 << 24  # pragma: no mutate (a memory bound; any value ranks alike)
#: The bit sets kept per index for the characters queries asked for, in bytes; the
#: sets of other characters are made for each query that asks (``Columns.positions``).
_MOST_KEPT_BYTES: Final = 32 << 20  # pragma: no mutate (a memory bound; any value ranks alike)
#: Below every score difference two paths can make (0.1) and far above float rounding:
#: a lower bound minus this is a lower bound still, whatever the order of its sums.
_MARGIN: Final = 1e-6
#: A complete state's fields that are never read (its column and streak), and the variant
#: number of a long text's state (any negative: no variant).
_UNREAD: Final = 0
_LONG: Final = -1
#: Translation tables: a column's bytes to "1" for the characters asked, "0" for others.
_ZEROS: Final = b"0" * 256


def _bits_table(chars: Iterable[str]) -> bytes:
    """A ``bytes.translate`` table: "1" for each of ``chars`` in Latin-1 (a column holds
    no other character), "0" for every other byte."""
    table = bytearray(_ZEROS)
    for char in chars:
        if char <= "\xff":
            table[ord(char)] = ord("1")
    return bytes(table)


_BOUNDARY_BITS: Final = _bits_table(FUZZY_BOUNDARIES)


class Columns:
    """The texts as bit sets: for a character and a position, the texts that hold that
    character there (bit k: text k). pi-tui's greedy scan, for all texts at once.

    Column ``j`` is the ``j``-th character of every text, one byte each (Latin-1; NUL
    past a text's end), in reverse text order, so that its translation to "0"/"1"
    read as a binary number has text k at bit k. A character's sets, one per column,
    are made when a query first asks for it and kept (up to ``_MOST_KEPT_BYTES``).
    Texts longer than the columns (``_MOST_CELLS``) are ``long``: scored one by one.
    """

    __slots__ = (
        "_columns",
        "_kept",
        "_sets",
        "everything",
        "long",
        "long_set",
        "width",
        "word_starts",
    )

    def __init__(self, lowered: Sequence[str], width: int) -> None:
        self.width = width
        #: The texts the columns cannot hold whole (index -> text), and their bit set.
        self.long = {index: text for index, text in enumerate(lowered) if len(text) > width}
        self.long_set = sum(1 << index for index in self.long)
        rows = [text[:width] for text in lowered] if self.long else lowered
        padded = "".join(map(str.ljust, rows, repeat(width), repeat("\0")))
        data = padded.encode("latin-1")
        self._columns = [data[j::width][::-1] for j in range(width)]
        self.everything = (1 << len(lowered)) - 1
        #: Per column: the texts whose character before it is a boundary, so a match
        #: there starts a word (column 0: all).
        self.word_starts = [self.everything]
        self.word_starts += [
            int(column.translate(_BOUNDARY_BITS), 2) for column in self._columns[:-1]
        ]
        self._sets: dict[str, list[int]] = {}
        size = (width * len(lowered) + 7) // 8  # a set's bytes: one bit per text
        self._kept = max(1, _MOST_KEPT_BYTES // size)

    @classmethod
    def of(cls, lowered: Sequence[str]) -> Columns | None:
        """Columns of these texts, or None when a text holds NUL (the padding) or a
        character past Latin-1 (then the index scores text by text)."""
        if not lowered:
            return None
        joined = "".join(lowered)
        if "\0" in joined or (not joined.isascii() and max(joined) > "\xff"):
            return None
        longest = max(map(len, lowered))
        width = min(longest, max(1, _MOST_CELLS // len(lowered)))
        return cls(lowered, width) if width else None

    def positions(self, char: str) -> list[int]:
        """Per column: the bit set of the texts holding ``char`` there."""
        sets = self._sets.get(char)
        if sets is None:
            table = _bits_table(char)
            sets = [int(column.translate(table), 2) for column in self._columns]
            if len(self._sets) < self._kept:
                self._sets[char] = sets
        return sets

    def of_length(self, length: int) -> int:
        """The bit set of the texts exactly ``length`` characters long (1 to ``width``)."""
        ended = self.positions("\0")
        shorter = ended[length - 1]
        return (self.everything if length == self.width else ended[length]) & ~shorter


class Variant(NamedTuple):
    """A query the texts are matched with, what its score adds (the swap's 5), and the
    score of a text that is the query itself (pi-tui's -100 included, not the 5)."""

    query: str
    penalty: int
    exact: float


def holders(columns: Columns, query: str) -> int:
    """The bit set of the texts holding ``query`` in order (within the columns).

    From the last character back: ``after[j]`` is the texts that hold the rest of the
    query from column ``j`` on; a text holds one more character in front from ``j`` when
    it has it at some column ``j' >= j`` and holds the rest from ``j' + 1``.
    """
    # ``after`` is kept from the last column back: its first item is column ``width``
    # (past the last), its last column 0. Every text holds the empty rest from anywhere.
    after = [columns.everything] * (columns.width + 1)
    for char in reversed(query):
        # Per column j, from the last back: the texts with the character there that hold
        # the rest from j + 1, then the union so far (all in C). Past the last column no
        # text holds a character.
        held = map(and_, reversed(columns.positions(char)), after)
        after = [0, *accumulate(held, or_)]
    return after[-1]


def rest_bounds(query: str) -> list[list[float]]:
    """``bounds[k][streak]``: the least the characters ``query[k:]`` can add to a score,
    but for their ``0.1 * i``, after ``k`` characters matched, the last ending a streak of
    ``streak`` (at most ``k``; ``bounds[len(query)]`` is all 0).

    Each next character either extends the streak (``-5`` times its new length, and a
    word start only when the query character before it is a boundary one, ``-10``), or
    comes after a gap at a word start at best (``+2`` for the one skipped, ``-10``).
    """
    length = len(query)
    bounds = [[0.0] * (length + 1) for _ in range(length + 1)]
    for k in range(length - 1, 0, -1):
        word_start = 10 if query[k - 1] in FUZZY_BOUNDARIES else 0
        after = bounds[k + 1]
        for streak in range(k + 1):
            extended = -5 * (streak + 1) - word_start + after[streak + 1]
            bounds[k][streak] = min(extended, 2 - 10 + after[0])
    return bounds


class _Plan(NamedTuple):
    """One variant's search, prepared: its characters' sets, and per number of
    characters matched ``k`` (from 1), the terms of a state's bound: the rest's bonus
    per streak (``rest_bounds``), ``0.1`` per rest character per column of the last, and
    the rest's least ``0.1 * i`` from there, with the swap's 5, less ``_MARGIN``."""

    query: str
    penalty: int
    sets: list[list[int]]
    rest: list[tuple[list[float], float, float]]

    @classmethod
    def of(cls, columns: Columns, variant: Variant) -> _Plan:
        query, penalty, _ = variant
        # The bounds depend only on which query characters are boundaries.
        shape = "".join(["-" if char in FUZZY_BOUNDARIES else "a" for char in query])
        rest = _rest_terms(shape, penalty)
        return cls(query, penalty, [columns.positions(char) for char in query], rest)


@lru_cache(maxsize=256)
def _rest_terms(shape: str, penalty: int) -> list[tuple[list[float], float, float]]:
    """``_Plan.rest`` for a query of this shape (its boundary characters as ``-``)."""
    length = len(shape)
    rest = []
    for k, row in enumerate(rest_bounds(shape)):
        left = length - k
        rest.append((row, 0.1 * left, 0.1 * left * (left + 1) / 2 + penalty - _MARGIN))
    return rest


def best_first(
    columns: Columns, variants: Sequence[Variant], long: Mapping[int, float], limit: int
) -> tuple[list[int], bool]:
    """The best ``limit`` texts for a query (and its swap), and whether more match;
    ``long``: the scores of the texts longer than the columns, scored apart.

    pi-tui's greedy scan for all texts at once: a search state is a set of texts that
    took the same positions for the query's first ``k`` characters (and so have the same
    score so far, to the bit: the same sums in the same order); taking the next
    character splits it by the column each text next holds it in, and by whether that
    column starts a word (``_next_states``). States are taken best bound first (the
    score so far plus the least the rest can add), so the complete states come out in
    score order, and the search stops once ``limit`` texts are out and no state left can
    tie the last of them. Every state holds only texts that match (``holders``): the
    greedy scan never fails a text that holds the query. Equal scores keep text order.
    """
    heap: list[_State] = []
    taken = columns.long_set  # scored apart, and the texts an earlier variant matched
    plans = [_Plan.of(columns, variant) for variant in variants]
    for number, (query, penalty, exact) in enumerate(variants):
        held = holders(columns, query) & ~taken
        if not held:  # a query wider than the columns is held by none (its texts are long)
            continue
        taken |= held
        # The query itself (-100): a text as long as the query that holds it.
        whole = held & columns.of_length(len(query))
        if whole:
            held ^= whole
            final = exact + penalty
            heapq.heappush(heap, (final, number, len(query), _UNREAD, final, _UNREAD, whole))
        if held:  # before the first character: nothing matched, no gap to pay for
            _next_states(columns, plans[number], number, 0, -1, 0.0, 0, held, heap)
    for index, score in long.items():
        heapq.heappush(heap, (score, _LONG, _UNREAD, _UNREAD, score, _UNREAD, 1 << index))
    total = sum(state[6].bit_count() for state in heap)
    lengths = [len(variant.query) for variant in variants]
    finals: list[tuple[float, int]] = []
    found = 0
    last = inf  # the score of the ``limit``-th text, once out
    while heap and heap[0][0] <= last:
        _, number, k, position, score, streak, texts = heapq.heappop(heap)
        if number < 0 or k == lengths[number]:
            finals.append((score, texts))
            found += texts.bit_count()
            if found >= limit and last == inf:
                last = score
        elif last == inf:
            # Once the list is full, a state taken now is bounded at ``last`` at least
            # (states come out in bound order), so its texts score more: only the
            # complete states bounded at ``last`` (ties) are left to take.
            _next_states(columns, plans[number], number, k, position, score, streak, texts, heap)
    return _first_texts(finals, limit), total > limit


#: A search state: (bound, variant number (-1: a long text), characters matched, column
#: of the last, score so far (once complete: the final score), streak, bit set of its
#: texts). States of equal bounds come out in any order: the list does not depend on it
#: (``_first_texts`` merges equal scores).
_State = tuple[float, int, int, int, float, int, int]


def _next_states(
    columns: Columns,
    plan: _Plan,
    number: int,
    k: int,
    position: int,
    score: float,
    streak: int,
    texts: int,
    heap: list[_State],
) -> None:
    """Push the states after character ``k`` of a state's texts: by the first column
    after ``position`` each holds it in, and whether that column starts a word, as
    pi-tui scores it (a streak -5 times its length, else +2 per character skipped after
    a match; a word start -10; +0.1 per column)."""
    sets = plan.sets[k]
    word_starts = columns.word_starts
    penalty = plan.penalty
    gap = 2 if k else 0  # no gap before the first match
    k += 1
    complete = k == len(plan.query)
    push = heapq.heappush
    row, per_column, least = plan.rest[k]
    remaining = texts
    for j in range(position + 1, columns.width):
        hit = remaining & sets[j]
        if not hit:
            continue
        remaining ^= hit
        if j == position + 1:  # the streak goes on (from the start, it begins)
            run = streak + 1
            base = score - run * 5
        else:
            run = 0
            base = score + (j - position - 1) * gap
        starts = hit & word_starts[j]
        others = hit ^ starts
        value = base + j * 0.1
        if complete:  # the final score (the swap's retry adds 5 to its score)
            value += penalty
            bound = 0.0
        else:
            bound = row[run] + per_column * j + least
        if others:
            push(heap, (value + bound, number, k, j, value, run, others))
        if starts:
            value = (base - 10) + j * 0.1
            if complete:
                value += penalty
            push(heap, (value + bound, number, k, j, value, run, starts))
        if not remaining:  # the columns left hold none of them
            break


def _first_texts(finals: list[tuple[float, int]], limit: int) -> list[int]:
    """The first ``limit`` texts of the complete states, by score, equal scores in text
    order (the lowest bits of their merged sets first)."""
    finals.sort()  # by score (equal scores: any order, they are merged)
    indices: list[int] = []
    for _, group in groupby(finals, key=itemgetter(0)):
        texts = 0
        for _, part in group:
            texts |= part
        while texts and len(indices) < limit:
            lowest = texts & -texts
            indices.append(lowest.bit_length() - 1)
            texts ^= lowest
    return indices
