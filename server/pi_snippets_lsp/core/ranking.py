"""Pi's fuzzy filter (pi-tui 1.1.0 ``fuzzyFilter``/``fuzzyMatch``), exactly.

Rules: docs/grammar.md, "Ranking". The editor popup in
Pi orders snippet names with this rule, so we must produce the same order: every
scoring constant and tie-break below mirrors pi-tui, lower score is better, and the
sort is stable (JavaScript's ``Array.prototype.sort`` is, since ES2019).

``_score_from`` is the rule for one text (pi-tui's greedy scan and scoring, step for
step), ``fuzzy_match`` applies it to one text, and ``FuzzyIndex`` to a whole list, for
the popup on every keystroke. A popup's query (one token, at most 20 items) is answered
by the best-first search of ``core.ranking_columns`` over all texts at once, or, when at
least 20 texts start with it, by bisecting the sorted texts (``_rank_prefix``). Any other
query, and texts that cannot be columns, are scanned: the lowercased texts are joined by
``\n`` once, and one compiled pattern per query token, ``r[^\ne]*+e....*``, finds every
matching text from the position pi-tui's greedy scan picks for its first character
(``_token_pattern``), to be scored by ``_score_from``.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import le
from typing import Final, NamedTuple, TypeVar

from pi_snippets_lsp.core.grammar import FUZZY_BOUNDARIES, JS_WHITESPACE
from pi_snippets_lsp.core.ranking_columns import Columns, Variant, best_first

T = TypeVar("T")

_TOKEN_SPLIT = re.compile("[" + re.escape(JS_WHITESPACE) + "/]+")
_LETTERS_DIGITS = re.compile(r"([a-z]+)([0-9]+)")
_DIGITS_LETTERS = re.compile(r"([0-9]+)([a-z]+)")
_LAST_CHAR: Final = chr(0x10FFFF)
_LINE_BREAK: Final = re.compile("\n")
#: Flag bytes 0 and 1 as the digits "0" and "1", for ``int(..., 2)``.
_BINARY_DIGITS: Final = bytes.maketrans(b"\x00\x01", b"01")


@dataclass(frozen=True, slots=True)
class FuzzyMatch:
    matches: bool
    score: float


_NO_MATCH = FuzzyMatch(matches=False, score=0)


def _js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def _score_from(
    joined: str, query: str, position: int, line_start: int, line_end: int
) -> float | None:
    """pi-tui's score of the text ``joined[line_start:line_end]`` for ``query`` (one or
    more characters), its first character found at ``position`` (the text's first one);
    None when the text does not hold the query in order.

    The greedy scan: each next character is the first after the previous. Each matched
    character at index ``i`` adds ``0.1 * i``, and ``-10`` after a word boundary
    (whitespace, ``-_./:``, or the text's start); one right after the previous extends a
    run (``-5`` times the run's length so far), one after a gap adds 2 per skipped
    character; the whole text equal to the query adds ``-100``. Written step for step as
    pi-tui computes it, so the floats are equal to the bit (the tests keep pi-tui's own
    loop as the reference).
    """
    find = joined.find
    boundary_before = FUZZY_BOUNDARIES
    score = 0.0
    last = -1
    consecutive = 0
    char_index = 1
    length = len(query)
    while True:
        i = position - line_start
        if last == i - 1:
            consecutive += 1
            score -= consecutive * 5
        else:
            consecutive = 0
            if last >= 0:
                score += (i - last - 1) * 2
        if joined[position - 1] in boundary_before:
            score -= 10
        score += i * 0.1
        last = i
        if char_index == length:
            break
        position = find(query[char_index], position + 1, line_end)
        if position == -1:
            return None
        char_index += 1
    if line_end - line_start == length:
        score -= 100
    return score


def _exact_score(query: str) -> float:
    """The score of a text that is the query itself (its -100 included)."""
    score = _score_from("\n" + query, query, 1, 1, len(query) + 1)
    assert score is not None  # a text holds itself
    return score


def _match_query(query: str, text: str) -> FuzzyMatch:
    """Greedy in-order match of ``query`` in ``text`` (both lowercased) with Pi's scoring:
    the text alone, scored by ``_score_from`` as the index scores it among the others."""
    if not query:
        return FuzzyMatch(matches=True, score=0)
    # In "\n" + text, a line of its own as in the index's joined texts.
    position = text.find(query[0]) + 1
    if position == 0:
        return _NO_MATCH
    score = _score_from("\n" + text, query, position, 1, len(text) + 1)
    if score is None:
        return _NO_MATCH
    return FuzzyMatch(matches=True, score=score)


def fuzzy_match(query: str, text: str) -> FuzzyMatch:
    """Score one query token against one text; retry ``ab12`` as ``12ab`` (and back)."""
    query_lower = query.lower()
    text_lower = text.lower()
    primary = _match_query(query_lower, text_lower)
    if primary.matches:
        return primary
    m = _LETTERS_DIGITS.fullmatch(query_lower) or _DIGITS_LETTERS.fullmatch(query_lower)
    if m is None:
        return primary
    swapped = m.group(2) + m.group(1)
    retry = _match_query(swapped, text_lower)
    if not retry.matches:
        return primary
    return FuzzyMatch(matches=True, score=retry.score + 5)


def _swapped(query_lower: str) -> str | None:
    """``ab12`` as ``12ab`` and back, for the retry; None for any other shape."""
    m = _LETTERS_DIGITS.fullmatch(query_lower) or _DIGITS_LETTERS.fullmatch(query_lower)
    return None if m is None else m.group(2) + m.group(1)


def _tokens(query: str) -> list[str]:
    """The query's whitespace- or slash-separated tokens, lowercased (none: blank)."""
    trimmed = _js_trim(query)
    if not trimmed:
        return []
    return [t for t in _TOKEN_SPLIT.split(trimmed.lower()) if t]


def _token_pattern(query: str) -> re.Pattern[str]:
    """``c1[^\nc2]*+c2...[^\ncn]*+cn.*`` for ``query`` = c1 c2 ... cn: it matches a text
    (a line of the joined texts) from the first ``c1`` pi-tui's greedy scan picks, and runs
    to the end of the line.

    Each ``[^\nck]*+`` stops at the first ``ck`` after ``c(k-1)``, as the greedy scan does,
    and never gives characters back: had a later ``ck`` been needed, the first would have
    failed too (what follows a later one is part of what follows the first). For the same
    reason, when the match from a line's first ``c1`` fails, so does one from a later
    ``c1``. ``str.find`` from the match start then finds again each position the scan
    picked. (Possessive classes scan a line in one tight loop, where lazy ``.*?`` would
    test every character against the next step and backtrack on failure.)
    """
    parts = [re.escape(query[0])]
    parts.extend(f"[^\n{re.escape(char)}]*+{re.escape(char)}" for char in query[1:])
    parts.append(".*")
    return re.compile("".join(parts))


#: Answers an index keeps for queries asked again.
_ANSWERS_KEPT: Final = 64  # pragma: no mutate (a cost choice; any size answers alike)
#: One-character answers an index keeps for its whole life (a few dozen are typed).
_MOST_KEPT_SETS: Final = 256


class Ranked(NamedTuple):
    """A query's result: the best item indices in order, and whether more items
    matched than the limit let through (the popup's ``isIncomplete``)."""

    indices: list[int]
    truncated: bool


class FuzzyIndex:
    """Pi's fuzzy filter over one fixed list of texts, prepared once (per generation).

    ``rank`` gives exactly the order of ``fuzzy_filter`` over the same texts.
    """

    __slots__ = (
        "_answers",
        "_columns",
        "_count",
        "_first_keys",
        "_joined",
        "_lowered",
        "_sorted",
        "_starts",
    )

    def __init__(self, texts: Sequence[str]) -> None:
        self._count = len(texts)
        # A text already in lowercase (a generation's names are) is kept, not copied.
        lowered = [text if (low := text.lower()) == text else low for text in texts]
        #: The lowercased texts, each after a "\n" (so the character before a text's
        #: first one is whitespace, a word boundary, as pi-tui's ``i == 0`` is); None
        #: when a text holds a line break itself.
        self._joined: str | None = None
        #: Where each text starts in ``_joined`` (``_line_starts``: made for a first scan).
        self._starts: list[int] | None = None
        #: The lowercased texts when they cannot be joined (scored one by one).
        self._lowered: list[str] = []
        #: The texts as columns of bit sets (``Columns``), made for the first popup
        #: query; False when they cannot be (then ``_scan`` answers).
        self._columns: Columns | bool | None = None
        #: The lowercased texts when they are in order (a generation's names are): the
        #: texts that start with a query are then one run of them (``_rank_prefix``).
        self._sorted: list[str] | None = None
        #: The latest popup answers, by query and limit (``_ANSWERS_KEPT``): a person
        #: types the same few characters after ``%`` again and again.
        self._answers: dict[tuple[str, int], Ranked] = {}
        #: One-character queries' popup answers, kept for the index's life.
        self._first_keys: dict[tuple[str, int], Ranked] = {}
        if all(map(le, lowered, islice(lowered, 1, None))):
            self._sorted = lowered
        if any("\n" in text for text in lowered):
            self._lowered = lowered
            return
        self._joined = "\n" + "\n".join(lowered)

    def __len__(self) -> int:
        return self._count

    def rank(self, query: str, limit: int | None = None) -> Ranked:
        """The indices of the matching texts, best first (at most ``limit``).

        A blank query keeps every text in its given order. A popup's answer (one with a
        ``limit``) is kept for the query asked again: a one-character query's for as long
        as the index lives (the first keystroke after ``%``; at most ``_MOST_KEPT_SETS``
        of them), a longer one's among the latest ``_ANSWERS_KEPT`` (the least recently
        asked dropped first). The caller gets its own list.
        """
        if limit is None:
            return self._rank(query, None)
        key = (query, limit)
        if len(query) == 1:  # kept for the generation: a few dozen, typed most often
            answer = self._first_keys.get(key)
            if answer is None:
                answer = self._rank(query, limit)
                if len(self._first_keys) < _MOST_KEPT_SETS:
                    self._first_keys[key] = answer
            return Ranked(list(answer.indices), answer.truncated)
        answer = self._answers.pop(key, None)
        if answer is None:
            answer = self._rank(query, limit)
            if len(self._answers) >= _ANSWERS_KEPT:
                del self._answers[next(iter(self._answers))]
        self._answers[key] = answer
        return Ranked(list(answer.indices), answer.truncated)

    def _rank(self, query: str, limit: int | None) -> Ranked:
        tokens = _tokens(query)
        if not tokens:
            everything = range(self._count)
            if limit is None:
                return Ranked(list(everything), False)
            return Ranked(list(everything[:limit]), self._count > limit)
        if limit is not None and limit > 0 and len(tokens) == 1:
            ranked = self._rank_prefix(tokens[0], limit)
            if ranked is None:
                ranked = self._rank_best_first(tokens[0], limit)
            if ranked is not None:
                return ranked
        totals = self.scores(query)
        indices = list(totals)
        # Stable, as JavaScript's sort: equal scores keep the texts' order.
        if limit is None:
            return Ranked(sorted(indices, key=totals.__getitem__), False)
        best = heapq.nsmallest(limit, indices, key=totals.__getitem__)
        return Ranked(best, len(indices) > limit)

    def scores(self, query: str) -> dict[int, float]:
        """Index -> total score of every text that matches all of the query's tokens,
        in text order (for a blank query: every text, scored 0)."""
        tokens = _tokens(query)
        if not tokens:
            return dict.fromkeys(range(self._count), 0.0)
        totals = self._token_scores(tokens[0])
        for token in tokens[1:]:
            if not totals:
                break
            scores = self._token_scores(token)
            totals = {
                index: total + scores[index] for index, total in totals.items() if index in scores
            }
        return totals

    def _rank_prefix(self, query: str, limit: int) -> Ranked | None:
        """The best ``limit`` when at least that many texts start with the whole query,
        else None.

        A text that starts with the query scores the best any text can (but an exact
        match, which starts with it too): its first character at index 0, and every
        other in one run from there; a text that does not start with the query breaks
        that run or starts later, and loses at least 2. So all of them score alike,
        tie, and keep their order: the first ``limit`` of them are the list, an exact
        match (the first in order) first. In order, they are one run of texts, found by
        bisection. (A letters/digits swap match scores 5 worse than its direct twin,
        unless it is exact.)
        """
        texts = self._sorted
        if texts is None:
            return None
        swapped = _swapped(query)
        if swapped is not None:
            # A text equal to the swapped query (``ab12`` for ``12ab``) is an exact match
            # too, at +5: it goes before them. Any other swap match scores 5 worse.
            at = bisect_left(texts, swapped)
            if at < len(texts) and texts[at] == swapped:
                return None
        first = bisect_left(texts, query)
        after = query[:-1] + chr(ord(query[-1]) + 1) if query[-1] < _LAST_CHAR else None
        end = len(texts) if after is None else bisect_left(texts, after, first)
        if end - first <= limit:
            return None  # then the others decide ``truncated``: the search counts them
        return Ranked(list(range(first, first + limit)), True)

    def _rank_best_first(self, query: str, limit: int) -> Ranked | None:
        """The best ``limit`` by the search over the columns (``_best_first``); None
        when the texts have no columns."""
        columns = self._columns
        if columns is None:
            lines = [] if self._joined is None else self._joined[1:].split("\n")
            columns = self._columns = Columns.of(lines) or False
        if columns is False or "\0" in query:
            return None
        assert isinstance(columns, Columns)
        variants = [Variant(query, 0, _exact_score(query))]
        swapped = _swapped(query)
        if swapped is not None:
            variants.append(Variant(swapped, 5, _exact_score(swapped)))
        # The texts longer than the columns: scored one by one, the swap retry included.
        long = {}
        for index, text in columns.long.items():
            result = fuzzy_match(query, text)
            if result.matches:
                long[index] = result.score
        return Ranked(*best_first(columns, variants, long, limit))

    def _line_starts(self, joined: str) -> list[int]:
        """Where each text starts in ``joined``, made once."""
        if self._starts is None:
            starts = [1]
            for match in _LINE_BREAK.finditer(joined, 1):
                starts.append(match.end())
            self._starts = starts
        return self._starts

    def _token_scores(self, token: str) -> dict[int, float]:
        """Each matching text's score for one token, in text order."""
        query = token.lower()
        scores = self._scan(query)
        swapped = _swapped(query)
        if swapped is None:
            return scores
        for index, score in self._scan(swapped).items():
            if index not in scores:
                scores[index] = score + 5
        return dict(sorted(scores.items()))  # the retry's matches in their place

    def _scan(self, query: str) -> dict[int, float]:
        """``fuzzy_match``'s score of every text ``query`` matches, in text order: one
        compiled pattern finds them in the joined texts (``_token_pattern``)."""
        joined = self._joined
        scores: dict[int, float] = {}
        if joined is None:  # a text with a line break: no joined form, text by text
            for index, text in enumerate(self._lowered):
                result = _match_query(query, text)
                if result.matches:
                    scores[index] = result.score
            return scores
        starts = self._line_starts(joined)
        index = 0
        for match in _token_pattern(query).finditer(joined):
            position, line_end = match.span()
            index = bisect_right(starts, position, index) - 1
            # The pattern matched: every character is there, so a score is.
            found = _score_from(joined, query, position, starts[index], line_end)
            if found is not None:
                scores[index] = found
        return scores


def fuzzy_filter(items: Sequence[T], query: str, get_text: Callable[[T], str]) -> list[T]:
    """Items whose text matches every whitespace- or slash-separated query token, best first.

    A blank query keeps every item in its given order.
    """
    ranked = FuzzyIndex([get_text(item) for item in items]).rank(query)
    return [items[index] for index in ranked.indices]
