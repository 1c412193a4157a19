"""Pi's fuzzy filter (pi-tui 1.1.0 ``fuzzyFilter``/``fuzzyMatch``), exactly.

Rules: docs/grammar.md, "Ranking". The editor popup in
Pi orders snippet names with this rule, so we must produce the same order: every
scoring constant and tie-break below mirrors pi-tui, lower score is better, and the
sort is stable (JavaScript's ``Array.prototype.sort`` is, since ES2019).

``_score_from`` is the rule for one text (pi-tui's greedy scan and scoring, step for
step), ``fuzzy_match`` applies it to one text, and ``FuzzyIndex`` to a whole list at
once, for the popup on every keystroke: the lowercased texts are joined by ``\n`` once,
and one compiled pattern per query token, ``r[^\ne]*+e....*``, finds every matching text
from the position pi-tui's greedy scan picks for its first character, so only the
matching texts are scored (``_token_pattern``). Compiling that pattern is a good part of
a new query's cost, so a query compiles one, and a query of three or more characters
whose characters few texts hold all of compiles none: those texts (a bit set per
character, ``FuzzyIndex._holding``) are followed one by one with ``str.find``, the
greedy scan itself. Both ways score with ``_score_from``.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from operator import le
from typing import Final, NamedTuple, TypeVar

from pi_snippets_lsp.core.grammar import JS_WHITESPACE

T = TypeVar("T")

_WORD_BOUNDARY_BEFORE = frozenset(JS_WHITESPACE + "-_./:")
_TOKEN_SPLIT = re.compile("[" + re.escape(JS_WHITESPACE) + "/]+")
_LETTERS_DIGITS = re.compile(r"([a-z]+)([0-9]+)")
_DIGITS_LETTERS = re.compile(r"([0-9]+)([a-z]+)")
_LAST_CHAR: Final = chr(0x10FFFF)
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
    boundary_before = _WORD_BOUNDARY_BEFORE
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


#: The longest query texts starting with its first character are scored to settle a
#: list: past two characters, texts that start with the whole query are found directly
#: (``_rank_prefix``), and the others seldom beat ``_best_after_start``. Any value gives
#: the same order: the fast path only ever answers when it is sure.
_MOST_SETTLED: Final = 2  # pragma: no mutate (a cost choice; any value ranks alike)


def _best_after_start(query: str) -> float:
    """No text whose first character is not the query's first scores below this.

    Its first match is at index 1 or later (at best ``-10 + 0.1``: a word boundary), so
    it has no run before it and no exact match. Each later query character ``k`` (from 2,
    found at index ``k`` or later) adds at least ``0.1 * k`` and the better of:
    extending the run (``-5`` per character of the run, at most ``k - 1``; a word
    boundary ``-10`` only when the query character before it is itself one, the text
    holding that character there), or a gap after which it sits at a word boundary
    (``+2`` at least, ``-10``).
    """
    best = -10 + 0.1
    for k in range(2, len(query) + 1):
        run = -5 * (k - 1) - (10 if query[k - 2] in _WORD_BOUNDARY_BEFORE else 0)
        best += 0.1 * k + min(run, 2 - 10)
    return best


#: How a scan is chosen for a query of three or more characters: following each text that
#: holds all its characters costs about this many characters of the joined texts scanned
#: by the compiled pattern, and compiling that pattern about ``_COMPILE_COST`` more.
#: Measured on the bench's names (CPython 3.11); either way gives the same scores (the
#: tests compare both), so the figures only choose the quicker.
_CANDIDATE_COST: Final = 340  # pragma: no mutate (a cost estimate; both ways score alike)
_COMPILE_COST: Final = 12_000  # pragma: no mutate (a cost estimate; both ways score alike)
#: Answers an index keeps for queries asked again.
_ANSWERS_KEPT: Final = 64  # pragma: no mutate (a cost choice; any size answers alike)
#: The characters whose bit sets an index keeps (the characters queries have asked for
#: first); the sets of others are made for each query that asks. A set is one bit per
#: text, so the bound keeps a large generation's sets to a few MB.
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
        "_count",
        "_first_keys",
        "_holding",
        "_joined",
        "_lowered",
        "_sorted",
        "_starting",
        "_starts",
    )

    def __init__(self, texts: Sequence[str]) -> None:
        self._count = len(texts)
        lowered = [text.lower() for text in texts]
        #: The lowercased texts, each after a "\n" (so the character before a text's
        #: first one is whitespace, a word boundary, as pi-tui's ``i == 0`` is); None
        #: when a text holds a line break itself.
        self._joined: str | None = None
        #: Where each text starts in ``_joined``.
        self._starts: list[int] = []
        #: The lowercased texts when they cannot be joined (scored one by one).
        self._lowered: list[str] = []
        #: Character -> where the texts that start with it start in ``_joined`` (filled
        #: when a query first asks).
        self._starting: dict[str, list[int]] = {}
        #: Character -> the bit set of the texts that hold it (bit k: text k), for the
        #: characters queries asked for (at most ``_MOST_KEPT_SETS``).
        self._holding: dict[str, int] = {}
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
        position = 1
        for text in lowered:
            self._starts.append(position)
            position += len(text) + 1

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
            return self._rank(query, limit)
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
                self._answers.pop(next(iter(self._answers), key), None)
        self._answers[key] = answer
        return Ranked(list(answer.indices), answer.truncated)

    def _rank(self, query: str, limit: int | None) -> Ranked:
        tokens = _tokens(query)
        if not tokens:
            everything = range(self._count)
            if limit is None:
                return Ranked(list(everything), False)
            return Ranked(list(everything[:limit]), self._count > limit)
        if limit is not None and len(tokens) == 1:
            ranked = self._rank_prefix(tokens[0], limit)
            if ranked is None:
                ranked = self._rank_from_starts(tokens[0], limit)
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
        other in one run from there, as ``_best_after_start`` counts them; a text that
        does not start with the query breaks that run or starts later, and loses at
        least 2. So all of them score alike, tie, and keep their order: the first
        ``limit`` of them are the list, an exact match (the first in order) first. In
        order, they are one run of texts, found by bisection. (A letters/digits swap
        match scores 5 worse than its direct twin, unless it is exact.)
        """
        texts = self._sorted
        if texts is None or limit <= 0:
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
        if end - first < limit:
            return None
        best = list(range(first, first + limit))
        if end - first > limit:
            return Ranked(best, True)
        # Exactly ``limit`` start with it: are there others that match?
        joined = self._joined
        if joined is None or swapped is not None:
            return None  # pragma: no mutate (then counted the long way: same answer)
        return Ranked(best, _token_pattern(query).subn("", joined)[1] > limit)

    def _rank_from_starts(self, query: str, limit: int) -> Ranked | None:
        """The best ``limit`` when texts that start with the query's first character
        settle it, else None.

        A popup shows 20 of thousands of matches, and a short query is typed first:
        when at least ``limit`` texts start with its first character and the
        ``limit``-th best of them beats ``_best_after_start``, no other text can enter
        the list, so the others are never scored. A query compiles one pattern here
        (the texts that start with its first character); the others are looked for
        only when exactly ``limit`` texts start that way, to tell ``truncated``.
        """
        joined = self._joined
        if joined is None or limit <= 0 or _swapped(query) is not None:
            return None
        if len(query) > _MOST_SETTLED:
            return None  # cannot settle: not worth a scan
        if len(self._starting_with(joined, query[0])) < limit:
            return None  # too few start with it
        starting = self._scan(query, at_start=True)
        if len(starting) < limit:
            return None
        best = heapq.nsmallest(limit, starting, key=starting.__getitem__)
        # A margin far above float rounding and far below any score difference (0.1).
        if starting[best[-1]] >= _best_after_start(query) - 1e-6:
            return None
        if len(starting) > limit:
            return Ranked(best, True)
        return Ranked(best, _token_pattern(query).subn("", joined)[1] > limit)

    def _starting_with(self, joined: str, char: str) -> list[int]:
        """Where the texts whose first character is ``char`` start in ``joined``."""
        positions = self._starting.get(char)
        if positions is None:
            line_start = re.compile("\n" + re.escape(char))
            positions = [match.start() + 1 for match in line_start.finditer(joined)]
            self._starting[char] = positions
        return positions

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

    def _scan(self, query: str, *, at_start: bool = False) -> dict[int, float]:
        """``fuzzy_match``'s score of every text ``query`` matches, in text order
        (``at_start``: of the texts that start with its first character; the pattern is
        then tried at each of their starts, which costs no second pattern)."""
        joined = self._joined
        if joined is None:  # a text with a line break: no joined form, text by text
            scores: dict[int, float] = {}
            for index, text in enumerate(self._lowered):
                result = _match_query(query, text)
                if result.matches:
                    scores[index] = result.score
            return scores
        matches: Iterable[re.Match[str] | None]
        if at_start:
            pattern = _token_pattern(query)
            positions = self._starting_with(joined, query[0])
            matches = map(pattern.match, repeat(joined), positions)
        else:
            # One and two characters have quicker loops below (and many holders).
            if len(query) > 2:  # pragma: no mutate (a cost choice; any length scores alike)
                held = self._scan_holders(joined, query)  # pragma: no mutate (either way)
                if held is not None:
                    return held
            matches = _token_pattern(query).finditer(joined)
        starts = self._starts
        boundary_before = _WORD_BOUNDARY_BEFORE
        find = joined.find
        scores = {}
        index = 0
        if len(query) == 1:
            # The common first keystroke, and the one that matches the most texts:
            # ``_score_from`` for one character, unrolled (same operations, same floats).
            for match in matches:
                if match is None:
                    continue
                position, line_end = match.span()
                index = bisect_right(starts, position, index) - 1
                i = position - starts[index]
                if i == 0:
                    score = -15.0
                elif joined[position - 1] in boundary_before:
                    score = -10.0 + i * 0.1
                else:
                    score = i * 0.1
                if line_end - position == 1 and i == 0:
                    score -= 100
                scores[index] = score
            return scores
        if len(query) == 2:
            # The second keystroke, unrolled the same way.
            second_char = query[1]
            for match in matches:
                if match is None:
                    continue
                first, line_end = match.span()
                second = find(second_char, first + 1)
                index = bisect_right(starts, first, index) - 1
                line_start = starts[index]
                i = first - line_start
                j = second - line_start
                if i == 0:
                    score = -15.0  # a run of 1 (-5) at a boundary (-10)
                    if j == 1:
                        score -= 10  # a run of 2
                    else:
                        score += (j - 1) * 2
                else:
                    score = -10.0 + i * 0.1 if joined[first - 1] in boundary_before else i * 0.1
                    if j == i + 1:
                        score -= 5
                    else:
                        score += (j - i - 1) * 2
                if joined[second - 1] in boundary_before:
                    score -= 10
                score += j * 0.1
                if line_end - line_start == 2:
                    score -= 100
                scores[index] = score
            return scores
        for match in matches:
            if match is None:
                continue
            position, line_end = match.span()
            index = bisect_right(starts, position, index) - 1
            # The pattern matched: every character is there, so a score is.
            found = _score_from(joined, query, position, starts[index], line_end)
            if found is not None:
                scores[index] = found
        return scores

    def _scan_holders(self, joined: str, query: str) -> dict[int, float] | None:
        """``_scan``'s answer for ``query`` (three or more characters) from the texts
        that hold each of its characters, followed one by one; None when they are so
        many that the compiled pattern scans quicker (``_CANDIDATE_COST``).

        A query of a few characters is held by few texts whole, so the greedy scan
        through those few costs less than compiling the query's pattern.
        """
        holders = -1
        for char in set(query):
            holders &= self._holding_set(joined, char)
        cost = holders.bit_count() * _CANDIDATE_COST  # pragma: no mutate (a cost estimate)
        if cost >= len(joined) + _COMPILE_COST:  # pragma: no mutate (a cost estimate)
            return None
        # Bit k is the k-th binary digit from the right.
        bits = format(holders, "b")[::-1]
        starts = self._starts
        last = len(starts) - 1
        find = joined.find
        first = query[0]
        scores: dict[int, float] = {}
        index = bits.find("1")
        while index >= 0:
            line_start = starts[index]
            line_end = starts[index + 1] - 1 if index < last else len(joined)
            position = find(first, line_start)  # the text holds it
            score = _score_from(joined, query, position, line_start, line_end)
            if score is not None:
                scores[index] = score
            index = bits.find("1", index + 1)
        return scores

    def _holding_set(self, joined: str, char: str) -> int:
        """The bit set of the texts that hold ``char`` (bit k: text k)."""
        holding = self._holding.get(char)
        if holding is None:
            texts = joined[1:].split("\n")
            flags = bytes([char in text for text in texts])
            holding = int(flags[::-1].translate(_BINARY_DIGITS), 2)
            if len(self._holding) < _MOST_KEPT_SETS:
                self._holding[char] = holding
        return holding


def fuzzy_filter(items: Sequence[T], query: str, get_text: Callable[[T], str]) -> list[T]:
    """Items whose text matches every whitespace- or slash-separated query token, best first.

    A blank query keeps every item in its given order.
    """
    ranked = FuzzyIndex([get_text(item) for item in items]).rank(query)
    return [items[index] for index in ranked.indices]
