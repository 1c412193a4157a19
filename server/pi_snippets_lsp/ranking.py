"""Pi's fuzzy filter (pi-tui 1.1.0 ``fuzzyFilter``/``fuzzyMatch``), exactly.

Rules: docs/grammar.md, "Ranking". The editor popup in
Pi orders snippet names with this rule, so we must produce the same order: every
scoring constant and tie-break below mirrors pi-tui, lower score is better, and the
sort is stable (JavaScript's ``Array.prototype.sort`` is, since ES2019).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .grammar import JS_WHITESPACE

T = TypeVar("T")

_WORD_BOUNDARY_BEFORE = frozenset(JS_WHITESPACE + "-_./:")
_TOKEN_SPLIT = re.compile("[" + re.escape(JS_WHITESPACE) + "/]+")
_LETTERS_DIGITS = re.compile(r"([a-z]+)([0-9]+)")
_DIGITS_LETTERS = re.compile(r"([0-9]+)([a-z]+)")


@dataclass(frozen=True, slots=True)
class FuzzyMatch:
    matches: bool
    score: float


_NO_MATCH = FuzzyMatch(matches=False, score=0)


def _js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def _match_query(query: str, text: str) -> FuzzyMatch:
    """Greedy in-order match of ``query`` in ``text`` (both lowercased) with Pi's scoring."""
    if not query:
        return FuzzyMatch(matches=True, score=0)
    if len(query) > len(text):
        return _NO_MATCH
    query_index = 0
    score = 0.0
    last_match = -1
    consecutive = 0
    for i, char in enumerate(text):
        if query_index >= len(query):
            break
        if char != query[query_index]:
            continue
        word_boundary = i == 0 or text[i - 1] in _WORD_BOUNDARY_BEFORE
        if last_match == i - 1:
            consecutive += 1
            score -= consecutive * 5
        else:
            consecutive = 0
            if last_match >= 0:
                score += (i - last_match - 1) * 2
        if word_boundary:
            score -= 10
        score += i * 0.1
        last_match = i
        query_index += 1
    if query_index < len(query):
        return _NO_MATCH
    if query == text:
        score -= 100
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


def fuzzy_filter(items: Sequence[T], query: str, get_text: Callable[[T], str]) -> list[T]:
    """Items whose text matches every whitespace- or slash-separated query token, best first.

    A blank query keeps every item in its given order.
    """
    trimmed = _js_trim(query)
    if not trimmed:
        return list(items)
    tokens = [t for t in _TOKEN_SPLIT.split(trimmed.lower()) if t]
    if not tokens:
        return list(items)
    scored: list[tuple[float, T]] = []
    for item in items:
        text = get_text(item)
        total = 0.0
        for token in tokens:
            match = fuzzy_match(token, text)
            if not match.matches:
                break
            total += match.score
        else:
            scored.append((total, item))
    scored.sort(key=lambda pair: pair[0])
    return [item for _, item in scored]
