"""``FuzzyIndex`` (one pattern per query over the joined names) against the previous
filter, text by text: the same matches, the same scores to the bit, the same order.

The previous implementation is kept below, unchanged, as the reference: pi-tui 1.1.0's
``fuzzyFilter`` written as a Python loop per text (``test_ranking.py`` pins it to
pi-tui's own numbers).
"""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core import ranking
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


# --------------------------------------------------------------------------- the two scans
#
# A query of three or more characters is scanned one of two ways: by its compiled pattern
# over all the joined names, or through the names that hold each of its characters (a bit
# set per character), followed one by one. A cost estimate picks one; both must give the
# reference's answers. The tests below run with the estimate as it is, and with each way
# forced.

WAYS = ["as-chosen", "pattern", "holders"]


@contextlib.contextmanager
def scanned(way: str) -> Iterator[None]:
    """Force ``way``: a cost per holder of 0 always follows the holders, a huge one never."""
    if way == "as-chosen":
        yield
        return
    cost = 0 if way == "holders" else 10**12
    with mock.patch.object(ranking, "_CANDIDATE_COST", cost):
        yield


def test_forcing_a_way_takes_it() -> None:
    """The forcing above does what the tests rely on: each way is the one that runs."""
    index = FuzzyIndex(["abc", "xabc", "cab"])
    with scanned("holders"):
        assert index._scan_holders(index._joined or "", "abc") is not None
    with scanned("pattern"):
        assert index._scan_holders(index._joined or "", "abc") is None


def test_many_holders_are_left_to_the_pattern() -> None:
    """Names that all hold the query's characters are many candidates: the pattern's one
    scan is quicker than following each, so the holders' way declines."""
    index = FuzzyIndex([f"abc{i}" for i in range(200)])
    assert index._scan_holders(index._joined or "", "abc") is None
    few = FuzzyIndex(["abc"] + [f"x{i}" for i in range(200)])
    assert few._scan_holders(few._joined or "", "abc") == {0: reference_score("abc", "abc")}


def test_a_character_set_has_the_bit_of_each_name_that_holds_it() -> None:
    index = FuzzyIndex(["ab", "b", "", "ba", "Bc"])
    joined = index._joined or ""
    assert index._holding_set(joined, "b") == 0b11011
    assert index._holding_set(joined, "a") == 0b01001
    assert index._holding_set(joined, "c") == 0b10000
    assert index._holding_set(joined, "z") == 0
    assert index._holding == {"b": 0b11011, "a": 0b01001, "c": 0b10000, "z": 0}


def test_the_sets_kept_are_bounded() -> None:
    """A client that queries many characters does not grow the index without bound: the
    first ``_MOST_KEPT_SETS`` characters' sets are kept, later ones made each time."""
    alphabet = [chr(0x4E00 + i) for i in range(ranking._MOST_KEPT_SETS + 10)]
    index = FuzzyIndex(["".join(alphabet[:50]), "".join(alphabet[40:])])
    joined = index._joined or ""
    for char in alphabet:
        index._holding_set(joined, char)
    assert len(index._holding) == ranking._MOST_KEPT_SETS
    assert list(index._holding) == alphabet[: ranking._MOST_KEPT_SETS]
    last = alphabet[-1]
    assert index._holding_set(joined, last) == 0b10
    assert last not in index._holding


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(
    ("texts", "query"),
    [
        pytest.param(["abc", "a-b-c", "cba", "abcabc", "xxabc"], "abc", id="greedy-first"),
        pytest.param(["aXbXc", "ab", "bca"], "abc", id="held-but-out-of-order"),
        pytest.param(["abc", "ab", "abcd"], "abc", id="exact-match-last-text"),
        pytest.param(["zz", "abc"], "abc", id="exact-match-at-the-end"),
        pytest.param(["x_y.z", "x/y z"], "xyz", id="boundaries"),
        pytest.param(["aab", "aba", "aaab"], "aab", id="repeated-characters"),
        pytest.param(["", "abc", ""], "abc", id="empty-names-around"),
    ],
)
def test_each_way_scores_as_the_reference(way: str, texts: list[str], query: str) -> None:
    with scanned(way):
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
    with scanned(way):
        for _ in range(sized(300)):
            names = sorted({random_name(rng) for _ in range(rng.randint(0, 60))})
            for _ in range(10):
                assert_same(names, random_query(rng, names))


@pytest.mark.parametrize("way", WAYS)
def test_the_index_equals_the_previous_filter_on_many_names(way: str) -> None:
    rng = random.Random(4242)
    names = sorted({random_name(rng) for _ in range(3_000)})
    with scanned(way):
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
    with scanned(way):
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


# --------------------------------------------------------------------------- the fast path
#
# A popup lists 20 names; when at least 20 names start with the query's first character
# and the 20th best of them beats the best score any other name could reach
# (``_best_after_start``), the list is settled by those names alone. These tests state
# that bound and that the fast path answers exactly when it may.


@pytest.mark.parametrize("length", [1, 2, 3, 4, 6, 9])
def test_the_bound_is_reached_by_a_best_possible_name_not_starting_with_the_query(
    length: int,
) -> None:
    """The best a name not starting with the query's first character can do: a word
    boundary before each query character, all of them in one run from index 1. A query
    of boundary characters after a space (``---`` in `` ---``) reaches it exactly."""
    from pi_snippets_lsp.core.ranking import _best_after_start  # noqa: PLC0415

    query = "-" * length
    assert reference_score(" " + query, query) == pytest.approx(_best_after_start(query))


def reference_score(text: str, query: str) -> float:
    scores = reference_filter([text], query, lambda t: t)
    assert scores, (text, query)
    return scores[0][0]


@settings(max_examples=examples(200), deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab-_. c", min_size=1, max_size=6), min_size=1, max_size=30),
    query=st.text(alphabet="ab-_.c", min_size=1, max_size=4),
)
def test_no_name_that_does_not_start_with_the_query_beats_the_bound(
    texts: list[str], query: str
) -> None:
    from pi_snippets_lsp.core.ranking import _best_after_start  # noqa: PLC0415

    for score, index in reference_filter(list(range(len(texts))), query, texts.__getitem__):
        if not texts[index].lower().startswith(query[0].lower()):
            assert score >= _best_after_start(query) - 1e-9, (texts[index], query)


@pytest.mark.parametrize("starting", [20, 21, 40])
def test_names_starting_with_the_query_settle_the_list_alone(starting: int) -> None:
    """At least 20 names starting with ``x`` settle a 20-item list for ``x``: the fast
    path answers, and its answer is the full ranking's."""
    texts = [f"y-x{i}" for i in range(30)] + [f"x{i:02d}" for i in range(starting)]
    index = FuzzyIndex(texts)
    settled = index._rank_from_starts("x", 20)
    assert settled is not None
    full = index.rank("x")
    assert settled.indices == full.indices[:20]
    assert settled.truncated


@pytest.mark.parametrize(
    ("texts", "query", "limit"),
    [
        pytest.param([f"x{i}" for i in range(19)], "x", 20, id="too-few-start-with-it"),
        pytest.param([f"x{i}" for i in range(30)], "x", 0, id="no-limit-to-fill"),
        pytest.param([f"xa{i}" for i in range(30)], "x1", 20, id="a-letters-digits-swap"),
        pytest.param(
            [f"x{'z' * 9}a{i}" for i in range(30)] + ["-xa"], "xa", 20, id="others-could-beat-them"
        ),
    ],
)
def test_the_fast_path_declines_when_it_may_not_settle_the_list(
    texts: list[str], query: str, limit: int
) -> None:
    assert FuzzyIndex(texts)._rank_from_starts(query, limit) is None


def test_the_fast_path_weighs_every_name_starting_with_the_character() -> None:
    """A name that starts with the query's first character but does not match does not
    end the pass: the best name may come after it."""
    texts = [f"xa{i:02d}" for i in range(20)] + ["xz", "xa"]
    settled = FuzzyIndex(texts)._rank_from_starts("xa", 20)
    reference = reference_filter(list(range(len(texts))), "xa", texts.__getitem__)
    assert settled is not None
    assert settled.indices == [i for _, i in reference][:20]
    assert settled.indices[0] == 21  # the exact match
    assert settled.truncated


def test_the_names_starting_with_a_character_are_found_once_and_exactly() -> None:
    index = FuzzyIndex(["ab", "ba", "abc", "c"])
    joined = "\nab\nba\nabc\nc"
    assert index._starting_with(joined, "a") == [1, 7]
    assert index._starting_with(joined, "a") is index._starting_with(joined, "a")
    assert index._starting_with(joined, "c") == [11]
    assert index._starting_with(joined, "z") == []


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
        pytest.param(sorted([*(f"ab{i}" for i in range(5)), "xab"]), "ab", 5, id="exact-count"),
        pytest.param(sorted([*(f"ab{i}" for i in range(5)), "xyz"]), "ab", 5, id="count-none"),
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
        pytest.param([f"ab{i}" for i in range(9, 0, -1)], "ab", 3, id="texts-out-of-order"),
        pytest.param(sorted(f"ab{i}" for i in range(9)), "ab", 0, id="no-limit-to-fill"),
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
