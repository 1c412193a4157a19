"""``FuzzyIndex`` (one pattern per query over the joined names) against the previous
filter, text by text: the same matches, the same scores to the bit, the same order.

The previous implementation is kept below, unchanged, as the reference: pi-tui 1.1.0's
``fuzzyFilter`` written as a Python loop per text (``test_ranking.py`` pins it to
pi-tui's own numbers).
"""

from __future__ import annotations

import contextlib
import heapq
import json
import random
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core import ranking, ranking_columns
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.grammar import JS_WHITESPACE
from pi_snippets_lsp.core.ranking import FuzzyIndex, fuzzy_filter
from pi_snippets_lsp.core.snippet import Snippet

from .conftest import RunNode, examples, sized

T = TypeVar("T")

# --------------------------------------------------------------------------- reference

_WORD_BOUNDARY_BEFORE = frozenset(JS_WHITESPACE + "-_./:")
_TOKEN_SPLIT = re.compile("[" + re.escape(JS_WHITESPACE) + "/]+")
_LETTERS_DIGITS = re.compile(r"([a-z]+)([0-9]+)")
_DIGITS_LETTERS = re.compile(r"([0-9]+)([a-z]+)")


def _match_query(query: str, text: str) -> tuple[bool, float]:
    if not query:
        return True, 0
    if len(query) > len(text):
        return False, 0
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
        return False, 0
    if query == text:
        score -= 100
    return True, score


def _fuzzy_match(query: str, text: str) -> tuple[bool, float]:
    query_lower = query.lower()
    text_lower = text.lower()
    primary = _match_query(query_lower, text_lower)
    if primary[0]:
        return primary
    m = _LETTERS_DIGITS.fullmatch(query_lower) or _DIGITS_LETTERS.fullmatch(query_lower)
    if m is None:
        return primary
    retry = _match_query(m.group(2) + m.group(1), text_lower)
    if not retry[0]:
        return primary
    return True, retry[1] + 5


def reference_filter(
    items: Sequence[T], query: str, get_text: Callable[[T], str]
) -> list[tuple[float, T]]:
    """REFERENCE: the previous ``fuzzy_filter``, returning (score, item) pairs in order."""
    trimmed = query.strip(JS_WHITESPACE)
    if not trimmed:
        return [(0.0, item) for item in items]
    tokens = [t for t in _TOKEN_SPLIT.split(trimmed.lower()) if t]
    if not tokens:
        return [(0.0, item) for item in items]
    scored: list[tuple[float, T]] = []
    for item in items:
        text = get_text(item)
        total = 0.0
        for token in tokens:
            matches, score = _fuzzy_match(token, text)
            if not matches:
                break
            total += score
        else:
            scored.append((total, item))
    scored.sort(key=lambda pair: pair[0])
    return scored


def assert_same(texts: list[str], query: str) -> None:
    reference = reference_filter(list(range(len(texts))), query, texts.__getitem__)
    index = FuzzyIndex(texts)
    scores = index.scores(query)
    assert {i: score for score, i in reference} == scores, query
    assert list(scores) == sorted(scores)  # text order
    ranked = index.rank(query)
    assert ranked.indices == [i for _, i in reference], query
    assert ranked.truncated is False  # no limit: nothing left out
    for limit in (0, 1, 3, 20):
        top = index.rank(query, limit)
        assert top.indices == ranked.indices[:limit]
        assert top.truncated == (len(reference) > limit)
    assert fuzzy_filter(texts, query, lambda t: t) == [texts[i] for _, i in reference]


# --------------------------------------------------------------------------- the two ways
#
# A popup's query (one token, a limit) is answered by the best-first search over the
# texts' columns (``ranking_columns.best_first``); texts that cannot be columns (a character past
# Latin-1, a NUL) are scanned one compiled pattern per query (``_scan``), as is any query
# with no limit or several tokens. Columns narrower than the longest text leave the
# longer texts to be scored one by one. The tests below run each way.

WAYS = ["as-chosen", "scan", "narrow-columns"]


@contextlib.contextmanager
def ranked_by(way: str) -> Iterator[None]:
    """Force ``way``: no columns at all, or columns 3 characters wide."""
    if way == "as-chosen":
        yield
    elif way == "scan":
        with mock.patch.object(ranking_columns.Columns, "of", return_value=None):
            yield
    else:
        with mock.patch.object(ranking_columns, "_MOST_CELLS", 3):
            yield


@pytest.mark.parametrize(
    ("way", "columns"),
    [("as-chosen", True), ("scan", False), ("narrow-columns", True)],
)
def test_forcing_a_way_takes_it(way: str, columns: bool) -> None:
    """The forcing above does what the tests rely on: each way is the one that runs."""
    index = FuzzyIndex(["abc", "xabc", "cab"])
    with ranked_by(way):
        index.rank("ab", 2)
        assert isinstance(index._columns, ranking_columns.Columns) is columns
        if way == "narrow-columns":
            assert isinstance(index._columns, ranking_columns.Columns)
            assert index._columns.width == 1
            assert list(index._columns.long) == [0, 1, 2]


def test_a_column_has_the_bit_of_each_text_holding_the_character_there() -> None:
    columns = ranking_columns.Columns.of(["ab", "b", "", "ba", "bc"])
    assert columns is not None
    assert columns.width == 2
    assert columns.positions("b") == [0b11010, 0b00001]
    assert columns.positions("a") == [0b00001, 0b01000]
    assert columns.positions("c") == [0, 0b10000]
    assert columns.positions("z") == [0, 0]
    assert columns.positions("b") is columns.positions("b")  # kept
    assert columns.everything == 0b11111
    # Column 1 starts a word after a separator; column 0 always does.
    dotted = ranking_columns.Columns.of(["a.b", "ab", "-ab", "a b"])
    assert dotted is not None
    assert dotted.word_starts == [0b1111, 0b0100, 0b1001]
    assert [dotted.of_length(n) for n in (1, 2, 3)] == [0, 0b0010, 0b1101]


@pytest.mark.parametrize(
    "texts",
    [
        pytest.param(["ab", "caf\u00e9"], id="latin-1-is-held"),
        pytest.param(["ab", "\u00ff"], id="the-last-latin-1-character"),
    ],
)
def test_latin_1_texts_have_columns(texts: list[str]) -> None:
    assert ranking_columns.Columns.of(texts) is not None


@pytest.mark.parametrize(
    "texts",
    [
        pytest.param(["ab", "a\u0100"], id="past-latin-1"),
        pytest.param(["ab", "a\x00b"], id="a-nul-the-padding"),
        pytest.param(["", ""], id="nothing-to-hold"),
        pytest.param([], id="no-texts"),
    ],
)
def test_texts_without_columns_are_scanned(texts: list[str]) -> None:
    assert ranking_columns.Columns.of(texts) is None
    index = FuzzyIndex(texts)
    ranked = index.rank("a", 20)
    assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, "a", 20)
    assert index._columns is False


@pytest.mark.parametrize(
    ("texts", "most_bytes", "kept"),
    [
        # 4 columns of 160 bits: a character's sets take 80 bytes.
        pytest.param([f"t{i:03d}" for i in range(160)], 240, "t01", id="three-fit"),
        pytest.param([f"t{i:03d}" for i in range(160)], 239, "t0", id="two-fit"),
        pytest.param([f"t{i:03d}" for i in range(161)], 240, "t0", id="a-bit-more-than-80"),
        pytest.param([f"t{i:03d}" for i in range(160)], 1, "t", id="the-first-always"),
    ],
)
def test_the_sets_kept_are_bounded(texts: list[str], most_bytes: int, kept: str) -> None:
    """A client that asks for many characters does not grow the index without bound:
    the sets of the first characters asked for are kept, as many as ``_MOST_KEPT_BYTES``
    holds (a set: one bit per text and column); later ones are made each time."""
    with mock.patch.object(ranking_columns, "_MOST_KEPT_BYTES", most_bytes):
        columns = ranking_columns.Columns.of(texts)
    assert columns is not None
    for char in "t0123":
        columns.positions(char)
    assert "".join(columns._sets) == kept
    assert columns.positions("3") == columns.positions("3")
    assert "3" not in columns._sets


def test_texts_already_lowercase_are_kept_not_copied() -> None:
    """A generation's names are lowercase: the index holds them, not a copy of each."""
    texts = ["ab", "b-c", "c\u00e9"]
    index = FuzzyIndex([*texts, "Dx"])
    assert index._sorted is not None
    assert all(kept is text for kept, text in zip(index._sorted, texts, strict=False))
    assert index._sorted[3] == "dx"


def test_the_line_starts_are_made_once_for_a_scan() -> None:
    index = FuzzyIndex(["ab", "", "xab"])
    assert index._starts is None  # a popup's query needs none
    index.rank("ab", 2)
    assert index._starts is None
    assert index.rank("a b") == ranking.Ranked([0, 2], False)  # two tokens: scanned
    assert index._starts == [1, 4, 5]
    starts = index._starts
    index.rank("x b")
    assert index._starts is starts


def test_a_query_with_a_nul_is_scanned() -> None:
    texts = ["a", "ab"]
    assert FuzzyIndex(texts).rank("a\x00", 20) == ranking.Ranked([], False)


@pytest.mark.parametrize(
    ("texts", "query", "expected"),
    [
        pytest.param(["\u00ff", "a\u00ff"], "\u00ff", [0, 1], id="the-last-latin-1-character"),
        pytest.param(["a?", "ab"], "a\u0100", [], id="a-character-past-latin-1"),
        pytest.param(["caf\u00e9", "cafe"], "f\u00e9", [0], id="an-accent"),
    ],
)
def test_any_query_character_over_latin_1_columns(
    texts: list[str], query: str, expected: list[int]
) -> None:
    index = FuzzyIndex(texts)
    assert index.rank(query, 20) == ranking.Ranked(expected, False)
    assert isinstance(index._columns, ranking_columns.Columns)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(
    ("texts", "query"),
    [
        pytest.param(["abc", "a-b-c", "cba", "abcabc", "xxabc"], "abc", id="greedy-first"),
        pytest.param(["ba-b", "-axb", "xa-b"], "ab", id="equal-scores-of-two-paths"),
        pytest.param(["b-a1", "1ab", "ab1", "a1b", "b1"], "1ab", id="a-swap-and-its-exact-twin"),
        pytest.param(["ab", "ab", "xab", "ab"], "ab", id="the-exact-text-twice"),
        # Both exact (-139.7), the swap's 5 worse: the query's own twin comes first.
        pytest.param(["ab1", "1ab"], "1ab", id="the-swaps-exact-twin-comes-after"),
        pytest.param(["aXbXc", "ab", "bca"], "abc", id="held-but-out-of-order"),
        pytest.param(["abc", "ab", "abcd"], "abc", id="exact-match-last-text"),
        pytest.param(["zz", "abc"], "abc", id="exact-match-at-the-end"),
        pytest.param(["x_y.z", "x/y z"], "xyz", id="boundaries"),
        pytest.param(["aab", "aba", "aaab"], "aab", id="repeated-characters"),
        pytest.param(["", "abc", ""], "abc", id="empty-names-around"),
    ],
)
def test_each_way_scores_as_the_reference(way: str, texts: list[str], query: str) -> None:
    with ranked_by(way):
        assert_same(texts, query)


# --------------------------------------------------------------------------- random

NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789._-"


def random_name(rng: random.Random) -> str:
    return "".join(rng.choices("abcdeklmn0123-._", k=rng.randint(1, 14)))


def random_query(rng: random.Random, names: list[str]) -> str:
    roll = rng.random()
    if roll < 0.4 and names:
        name = rng.choice(names)
        picks = sorted(rng.sample(range(len(name)), k=rng.randint(1, min(len(name), 5))))
        return "".join(name[i] for i in picks)
    if roll < 0.6:
        letters = "".join(rng.choices("abcde", k=rng.randint(1, 3)))
        digits = "".join(rng.choices("0123", k=rng.randint(1, 2)))
        return rng.choice([letters + digits, digits + letters])  # the swap retry
    if roll < 0.75:
        return " ".join(random_name(rng)[:3] for _ in range(rng.randint(2, 3)))
    return "".join(rng.choices(NAME_CHARS + "A /\t", k=rng.randint(0, 5)))


@pytest.mark.parametrize("way", WAYS)
def test_the_index_equals_the_previous_filter_on_random_names_and_queries(way: str) -> None:
    rng = random.Random(31337)
    with ranked_by(way):
        for _ in range(sized(300)):
            names = sorted({random_name(rng) for _ in range(rng.randint(0, 60))})
            for _ in range(10):
                assert_same(names, random_query(rng, names))


@pytest.mark.parametrize("way", WAYS)
def test_the_index_equals_the_previous_filter_on_many_names(way: str) -> None:
    rng = random.Random(4242)
    names = sorted({random_name(rng) for _ in range(3_000)})
    with ranked_by(way):
        for _ in range(sized(200)):
            assert_same(names, random_query(rng, names))


TEXT_CHARS = st.sampled_from(
    [*"abAB12 -_./:/\t", "\u3000", "İ", "ß", "é", "\n", "\r", "\\", "]", "^"]
)
TEXTS = st.lists(TEXT_CHARS, max_size=10).map("".join)


@pytest.mark.parametrize("way", WAYS)
@settings(max_examples=examples(500))
@given(texts=st.lists(TEXTS, max_size=8), query=TEXTS)
def test_the_index_equals_the_previous_filter_on_any_text(
    way: str, texts: list[str], query: str
) -> None:
    """Any texts (uppercase, separators, case-folding surprises, line breaks: the index
    then falls back to text by text) and any query."""
    with ranked_by(way):
        assert_same(texts, query)


@pytest.mark.parametrize(
    ("texts", "query"),
    [
        pytest.param(["ab", "a-b", "xab", "ab"], "ab", id="duplicates-and-exact"),
        pytest.param(["aab", "aba", "baa"], "aa", id="repeated-character"),
        pytest.param(["a\nb", "ab"], "ab", id="line-break-in-a-text"),
        pytest.param(["İx", "ix"], "i", id="lowercasing-lengthens"),
        pytest.param(["mcp2", "2mcp", "mcp"], "mcp2", id="swap"),
        pytest.param(["x-ya", "ya"], "y a", id="two-tokens"),
        pytest.param(["", "a"], "a", id="empty-text"),
        pytest.param(["a]b", "a^b", "a\\b"], "]", id="class-metacharacters"),
        pytest.param(
            [f"{w}-{n}" for n in range(40) for w in ("ab", "xa", "b-a")],
            "a",
            id="many-texts-start-with-the-query-the-rest-is-only-counted",
        ),
        pytest.param([f"ab{n}" for n in range(25)] + ["b-ab"], "ab", id="a-run-at-the-start"),
    ],
)
def test_edge_cases(texts: list[str], query: str) -> None:
    assert_same(texts, query)


# --------------------------------------------------------------------------- generation


def test_a_generation_builds_its_name_index_once() -> None:
    config = Config(
        snippets=(
            Snippet(name="alpha", value="A", source=""),
            Snippet(name="beta", value="B", source=""),
        )
    )
    index = config.name_index
    assert config.name_index is index
    assert len(index) == 2
    assert index.rank("b").indices == [1]


# --------------------------------------------------------------------------- truncated


@pytest.mark.parametrize(
    ("others", "truncated"),
    [
        pytest.param([], False, id="exactly-the-limit-start-with-it-and-nothing-else-matches"),
        pytest.param(["b-x"], True, id="exactly-the-limit-start-with-it-and-one-more-matches"),
        pytest.param(["bbb"], False, id="exactly-the-limit-start-with-it-and-others-do-not-match"),
        pytest.param(["x-late"], True, id="one-more-starts-with-it"),
    ],
)
def test_truncated_says_whether_more_matched_than_listed(
    others: list[str], truncated: bool
) -> None:
    """``isIncomplete`` rests on this: the popup lists 20 and must say whether more
    matched, also when exactly 20 texts start with the query's character."""
    texts = [f"x{i:02d}" for i in range(20)] + others
    ranked = FuzzyIndex(texts).rank("x", 20)
    assert len(ranked.indices) == 20
    assert ranked.truncated is truncated
    reference = reference_filter(list(range(len(texts))), "x", texts.__getitem__)
    assert ranked.indices == [i for _, i in reference][:20]


def test_a_blank_query_is_truncated_only_past_the_limit() -> None:
    index = FuzzyIndex([f"s{i}" for i in range(21)])
    assert index.rank("", 21).truncated is False
    assert index.rank("", 20).truncated is True
    assert index.rank(" ").truncated is False


# --------------------------------------------------------------------------- best first
#
# The search takes states best bound first: a bound (``ranking_columns.rest_bounds``)
# must never exceed what the rest of a query can add (else a better text could be left
# out), and should be the least that can be reached (else the search goes further than
# it needs).


def reference_path(text: str, query: str) -> list[tuple[int, float, int]] | None:
    """pi-tui's greedy scan, step by step: after each query character, its position,
    the score so far and the streak."""
    steps = []
    score, last, streak, position = 0.0, -1, 0, 0
    for char in query:
        i = text.find(char, position)
        if i < 0:
            return None
        if last == i - 1:
            streak += 1
            score -= streak * 5
        else:
            streak = 0
            if last >= 0:
                score += (i - last - 1) * 2
        if i == 0 or text[i - 1] in _WORD_BOUNDARY_BEFORE:
            score -= 10
        score += i * 0.1
        last, position = i, i + 1
        steps.append((i, score, streak))
    return steps


@settings(max_examples=examples(300))
@given(
    text=st.text(alphabet="ab-_. c", min_size=1, max_size=12),
    query=st.text(alphabet="ab-_.c", min_size=1, max_size=5),
)
def test_no_text_beats_the_bound_of_its_rest(text: str, query: str) -> None:
    steps = reference_path(text, query)
    if steps is None:
        return
    final = steps[-1][1]
    bounds = ranking_columns.rest_bounds(query)
    for k, (i, score, streak) in enumerate(steps, start=1):
        left = len(query) - k
        rest = bounds[k][streak] + 0.1 * (left * i + left * (left + 1) / 2)
        assert score + rest <= final + 1e-9, (text, query, k)


@pytest.mark.parametrize(
    ("query", "k", "streak", "bound"),
    [
        pytest.param("ab", 2, 0, 0.0, id="nothing-left"),
        pytest.param("ab", 1, 0, -8.0, id="a-gap-to-a-word-start-beats-a-streak-of-1"),
        pytest.param("ab", 1, 1, -10.0, id="a-streak-of-2"),
        pytest.param("-b", 1, 0, -15.0, id="a-streak-after-a-separator-starts-a-word"),
        pytest.param("abc", 1, 0, -16.0, id="two-gaps-to-word-starts"),
        pytest.param("abc", 1, 1, -25.0, id="a-long-streak"),
        pytest.param("abc", 2, 2, -15.0, id="a-streak-of-3-at-the-end"),
        pytest.param("abc", 2, 0, -8.0, id="after-a-gap"),
    ],
)
def test_the_bound_of_the_rest_is_reached(query: str, k: int, streak: int, bound: float) -> None:
    assert ranking_columns.rest_bounds(query)[k][streak] == bound


def test_queries_of_boundary_characters_over_names_full_of_them() -> None:
    """A query character that is a boundary makes a streak after it a word start (-10
    more): the bounds must count it, or a state holding the best names comes out after
    the list is full. Small lists over names of ``ab-x``, queries of ``ab-``."""
    rng = random.Random(7)
    for _ in range(sized(300)):
        size = rng.randint(5, 60)
        texts = sorted({"".join(rng.choices("ab-x", k=rng.randint(1, 8))) for _ in range(size)})
        query = "".join(rng.choices("ab-", k=rng.randint(2, 4)))
        for limit in (1, 2, 3):
            ranked = FuzzyIndex(texts).rank(query, limit)
            assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, query, limit)


def test_equal_scores_of_different_states_keep_text_order() -> None:
    """``ba-b`` and ``-axb`` both score -7.6 for ``ab``, by different paths (the word
    start on ``b``, or on ``a``): one list in text order, whichever state comes first."""
    texts = ["ba-b", "-axb", "xa-b", "ab"]
    assert FuzzyIndex(texts).rank("ab", 20) == ranking.Ranked([3, 0, 1, 2], False)
    assert FuzzyIndex(texts).rank("ab", 3) == ranking.Ranked([3, 0, 1], True)
    # The list is full at ``-axb`` (the word start on ``a`` is taken first); ``ba-b``
    # ties it and comes before it.
    assert FuzzyIndex(texts).rank("ab", 2) == ranking.Ranked([3, 0], True)


def test_a_state_is_bounded_by_its_score_and_the_least_its_rest_can_add() -> None:
    """``xy-abc`` for ``abc`` (as a swap's variant, 5 worse): after ``a`` at column 3 (a
    word start, -9.7), ``b`` extends the streak (-5, +0.4: -14.3), and ``c`` can add no
    less than a streak of 2 (-10) at column 5 (+0.5); the complete state carries its
    final score, the swap's 5 added."""
    columns = ranking_columns.Columns.of(["xy-abc"])
    assert columns is not None
    plan = ranking_columns._Plan.of(columns, ranking_columns.Variant("abc", 5, 0.0))
    heap: list[ranking_columns._State] = []
    step = ranking_columns._next_states
    step(columns, plan, 1, 1, 3, -9.7, 0, 0b1, heap)
    ((bound, number, k, position, score, streak, texts),) = heap
    assert (number, k, position, score, streak, texts) == (1, 2, 4, -9.7 - 5 + 0.4, 1, 1)
    assert bound == pytest.approx(-14.3 - 10 + 0.5 + 5 - 1e-6, abs=1e-9)
    heap.clear()
    step(columns, plan, 1, 2, 4, score, 1, 0b1, heap)
    ((bound, _, k, position, final, streak, _),) = heap
    assert (k, position, streak) == (3, 5, 2)
    assert bound == final == (score - 10) + 5 * 0.1 + 5
    assert final - 5 == pytest.approx(reference_score("xy-abc", "abc"))


def reference_score(text: str, query: str) -> float:
    ((score, _),) = reference_filter([text], query, str)
    return score


def test_the_search_stops_once_the_list_is_settled() -> None:
    """Twenty texts start a word with the query; a thousand others hold it late: the
    search takes the twenty and the few states that bound the rest, not a thousand."""
    texts = [f"{'z' * (i % 7 + 8)}ab{i}" for i in range(1000)] + [f"x-ab{i}" for i in range(20)]
    reference = ranked_by_reference(texts, "ab", 20)
    with mock.patch("heapq.heappop", wraps=heapq.heappop) as popped:
        ranked = FuzzyIndex(texts).rank("ab", 20)
    assert (ranked.indices, ranked.truncated) == reference
    assert popped.call_count <= 4


def test_the_search_counts_the_texts_of_every_state_out() -> None:
    """The list fills from several states (ten names per word-start position of ``ab``):
    the search stops when their texts together reach the limit."""
    texts = [f"{'x' * width}-ab{i}" for width in range(1, 3) for i in range(10)]
    texts += [f"{'z' * (i % 7 + 8)}ab{i}" for i in range(1000)]
    reference = ranked_by_reference(texts, "ab", 20)
    with mock.patch("heapq.heappop", wraps=heapq.heappop) as popped:
        ranked = FuzzyIndex(texts).rank("ab", 20)
    assert (ranked.indices, ranked.truncated) == reference
    assert popped.call_count <= 6


def test_the_columns_are_made_once() -> None:
    index = FuzzyIndex(["ab", "b-a", "xab"])
    index.rank("ab", 2)
    columns = index._columns
    assert isinstance(columns, ranking_columns.Columns)
    index.rank("ba", 2)
    assert index._columns is columns


def test_a_long_text_enters_the_list_by_its_score() -> None:
    """Texts longer than the columns are scored one by one, and take their place."""
    texts = ["xxxxab", "ab", "x-ab", "zzzzzzzzab"]
    with mock.patch.object(ranking_columns, "_MOST_CELLS", 4 * 5):
        index = FuzzyIndex(texts)
        ranked = index.rank("ab", 3)
        assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, "ab", 3)
        assert isinstance(index._columns, ranking_columns.Columns)
        assert index._columns.long == {0: "xxxxab", 3: "zzzzzzzzab"}
        assert index.rank("xxab", 1) == ranking.Ranked([0], False)
        assert index.rank("zab", 2) == ranking.Ranked([3], False)
        assert index.rank("b1", 2) == ranking.Ranked([], False)


@pytest.mark.parametrize("query", ["b1", "1b", "ab", "b", "zab"])
def test_long_texts_and_the_swap(query: str) -> None:
    """A long text matching the query takes the query's score, not its swap's; one
    matching only the swap takes the swap's, 5 worse."""
    texts = ["b-1zzzzz1b", "1xxxxxxxb", "b1", "1-b", "zzzzzzzzab"]
    with mock.patch.object(ranking_columns, "_MOST_CELLS", 5 * 4):
        index = FuzzyIndex(texts)
        ranked = index.rank(query, 3)
        assert isinstance(index._columns, ranking_columns.Columns)
        assert list(index._columns.long) == [0, 1, 4]
    assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, query, 3)


def test_the_order_is_pi_tuis_own_in_javascript(node: RunNode) -> None:
    """The whole order of every query, against pi-tui's ``fuzzyFilter`` run by Node
    (tests/unit/js/reference.mjs, the bench's reference too): names that share words and
    letters, as real snippet libraries do, and queries of every shape (one to four
    characters, a letters/digits swap, two tokens, upper case)."""
    rng = random.Random(2024)
    words = ["review", "code", "tests", "commit", "diff", "plan", "fix", "mcp", "use", "v2"]
    items = sorted(
        {
            rng.choice("-._").join(rng.choices(words, k=rng.randint(1, 3)))
            + rng.choice(["", "", "2", "-10"])
            for _ in range(600)
        }
    )
    letters = "abcdefimnoprstuvx0123456789-."
    queries = ["r", "x", "2", "re", "rv", "co", "mcp", "ts", "rvw", "cmt", "pln2", "2pln"]
    queries += ["".join(rng.choices(letters, k=rng.randint(1, 4))) for _ in range(120)]
    queries += ["use mcp", "diff/code", "Review", " fix  "]
    payload = json.dumps({"ranking": {"items": items, "queries": queries}})
    expected = json.loads(node("reference.mjs", stdin=payload))["ranking"]
    ours = [fuzzy_filter(items, query, lambda text: text) for query in queries]
    differing = [q for q, a, b in zip(queries, ours, expected, strict=True) if a != b]
    assert differing == []
    assert sum(len(order) > 20 for order in expected) > 20  # long lists were compared


# --------------------------------------------------------------------------- prefixes
#
# Texts in order (a generation's names are sorted) that start with the whole query score
# the best any text can, all alike: when at least ``limit`` of them do, they are the list,
# found by bisection (``_rank_prefix``).


def ranked_by_reference(texts: list[str], query: str, limit: int) -> tuple[list[int], bool]:
    reference = reference_filter(list(range(len(texts))), query, texts.__getitem__)
    return [i for _, i in reference][:limit], len(reference) > limit


@pytest.mark.parametrize(
    ("texts", "query", "limit"),
    [
        pytest.param(sorted(f"ab{i:02d}" for i in range(30)), "ab", 20, id="more-than-the-limit"),
        pytest.param(sorted(["ab", *(f"ab-{i:02d}" for i in range(25))]), "ab", 20, id="exact"),
        pytest.param(sorted(f"a-b{i}" for i in range(9)), "a-b", 3, id="boundary-characters"),
        pytest.param(sorted(["ab1x", "ab1y", "ab1z", "b1a"]), "ab1", 2, id="swap-shaped"),
    ],
)
def test_texts_starting_with_the_query_are_the_list(
    texts: list[str], query: str, limit: int
) -> None:
    ranked = FuzzyIndex(texts)._rank_prefix(query, limit)
    assert ranked is not None
    assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, query, limit)


@pytest.mark.parametrize(
    ("texts", "query", "limit"),
    [
        pytest.param(sorted(f"ab{i}" for i in range(4)), "ab", 5, id="too-few"),
        pytest.param(sorted([*(f"ab{i}" for i in range(5)), "xab"]), "ab", 5, id="exactly-enough"),
        pytest.param([f"ab{i}" for i in range(9, 0, -1)], "ab", 3, id="texts-out-of-order"),
        # "1ab" swapped is "ab1", which a text is exactly: it goes first, at -119.
        pytest.param(sorted(["1ab", "1abx", "1aby", "ab1"]), "1ab", 2, id="an-exact-swap-twin"),
        pytest.param(sorted([*(f"ab{i}" for i in range(5)), "x\nab"]), "ab", 5, id="line-break"),
    ],
)
def test_the_prefix_path_declines_when_it_may_not_answer(
    texts: list[str], query: str, limit: int
) -> None:
    assert FuzzyIndex(texts)._rank_prefix(query, limit) is None
    ranked = FuzzyIndex(texts).rank(query, limit)
    assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, query, limit)


def test_a_query_ending_in_the_last_character() -> None:
    last = chr(0x10FFFF)
    texts = sorted(["a" + last + str(i) for i in range(4)] + ["b"])
    ranked = FuzzyIndex(texts)._rank_prefix("a" + last, 2)
    assert ranked is not None
    assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, "a" + last, 2)


@settings(max_examples=examples(300))
@given(
    texts=st.lists(st.text(alphabet="ab-_.c1", min_size=1, max_size=6), max_size=40).map(sorted),
    query=st.text(alphabet="ab-_.c1", min_size=1, max_size=4),
    limit=st.integers(1, 6),
)
def test_the_prefix_path_answers_as_the_reference(texts: list[str], query: str, limit: int) -> None:
    ranked = FuzzyIndex(texts)._rank_prefix(query, limit)
    if ranked is not None:
        assert (ranked.indices, ranked.truncated) == ranked_by_reference(texts, query, limit)


# --------------------------------------------------------------------------- answers kept


def test_a_query_asked_again_is_answered_from_the_kept_answer() -> None:
    names = sorted(f"name-{i}" for i in range(50))
    index = FuzzyIndex(names)
    first = index.rank("na", 20)
    with mock.patch.object(FuzzyIndex, "_rank", side_effect=AssertionError("ranked again")):
        again = index.rank("na", 20)
    assert again == first
    assert again.indices is not first.indices, "each caller gets its own list"
    again.indices.clear()
    assert index.rank("na", 20) == first, "a caller's change reaches no later answer"


def test_the_answers_kept_are_bounded_and_the_least_recently_asked_go_first() -> None:
    names = sorted(f"name-{i}" for i in range(50))
    index = FuzzyIndex(names)
    kept = ranking._ANSWERS_KEPT
    queries = [f"n{i}" for i in range(kept)]  # two characters: one-character ones stay
    for query in queries:
        index.rank(query, 5)
    index.rank(queries[0], 5)  # asked again: now the most recent
    index.rank("new", 5)  # one too many: the least recently asked goes
    assert len(index._answers) == kept
    assert (queries[0], 5) in index._answers
    assert (queries[1], 5) not in index._answers
    assert ("new", 5) in index._answers


def test_a_whole_ranking_is_not_kept() -> None:
    index = FuzzyIndex(["a", "ab", "b"])
    assert index.rank("a").indices == [0, 1]
    assert index.rank("ab").indices == [1]
    assert index._answers == {} and index._first_keys == {}
    assert index.rank("a", 1) == ranking.Ranked([0], True)
    assert index.rank("ab", 2) == ranking.Ranked([1], False)
    assert set(index._first_keys) == {("a", 1)}
    assert set(index._answers) == {("ab", 2)}


def test_one_character_answers_stay_whatever_else_is_asked() -> None:
    names = sorted(f"name-{i}" for i in range(50))
    index = FuzzyIndex(names)
    first = index.rank("n", 20)
    for i in range(ranking._ANSWERS_KEPT + 5):
        index.rank(f"n{i}", 20)
    assert ("n", 20) in index._first_keys
    with mock.patch.object(FuzzyIndex, "_rank", side_effect=AssertionError("ranked again")):
        again = index.rank("n", 20)
    assert again == first and again.indices is not first.indices
    assert ("n", 20) not in index._answers


def test_the_one_character_answers_kept_are_bounded() -> None:
    alphabet = [chr(0x4E00 + i) for i in range(ranking._MOST_KEPT_SETS + 3)]
    index = FuzzyIndex(alphabet)
    for char in alphabet:
        assert index.rank(char, 1).indices == [alphabet.index(char)]
    assert len(index._first_keys) == ranking._MOST_KEPT_SETS
