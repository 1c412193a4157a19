"""Did you mean (docs/lsp.md, "Unknown markers: did you mean"): the typo rule, and the
unknown markers of a prompt, held to the grammar: a hint sits only where Pi would expand
the suggested name had it been typed right, never on text Pi leaves alone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.closest import (
    SHORT_NAME,
    TypoIndex,
    UnknownMarker,
    allowance,
    osa_distance,
    typo_candidates,
    unknown_markers,
)
from pi_snippets_lsp.core.grammar import is_valid_name
from pi_snippets_lsp.core.markers import markers

from .conftest import examples

NAMES = ["commit", "rebase", "review", "test", "tests", "use-mcp"]
SNIPPETS = dict.fromkeys(NAMES, "TEXT")


def reference(a: str, b: str) -> int:
    """Optimal string alignment distance, the textbook table, unbounded."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[len(a)][len(b)]


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("review", "review", 0),
        ("reveiw", "review", 1),  # a transposition is one edit
        ("erivew", "review", 2),
        ("revew", "review", 1),  # a deletion
        ("reviews", "review", 1),  # an insertion
        ("reviaw", "review", 1),  # a replacement
        ("ca", "abc", 3),  # OSA: no edit of a transposed pair
        ("", "ab", 2),
        ("ab", "", 2),
        ("abcdef", "badcfe", 3),
        ("aaa", "a", 2),  # a transposition needs two characters of each
    ],
)
def test_distance_table(a, b, distance):
    assert reference(a, b) == distance
    for bound in range(4):
        assert osa_distance(a, b, bound) == min(distance, bound + 1)


@pytest.mark.parametrize(
    ("length", "edits"), [(1, 1), (SHORT_NAME, 1), (SHORT_NAME + 1, 2), (40, 2)]
)
def test_allowance_grows_with_the_length(length, edits):
    assert allowance(length) == edits


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("reveiw", ["review"]),
        ("reviw", ["review"]),
        ("revieww", ["review"]),
        ("erivew", ["review"]),  # two edits, a name of six characters
        ("rbesaex", []),  # three edits
        ("tset", ["test"]),  # four characters: one edit, a transposition
        ("tst", ["test"]),
        ("tes", ["test"]),  # "tests" is two away: too far for three characters
        ("txst", ["test"]),
        ("txsx", []),  # two edits of a four-character name
        ("testt", ["test", "tests"]),  # both one away: in the names' order
        ("use-mpc", ["use-mcp"]),
        ("review", []),  # a known name is no typo
        ("", []),
        ("x", []),  # nothing is one edit from a single letter here
        ("zzzzzz", []),
    ],
)
def test_typo_candidates_table(typed, expected):
    assert typo_candidates(NAMES, typed) == expected


def test_ties_keep_the_names_order_and_the_limit_cuts():
    names = ["tests", "test", "testy"]
    assert typo_candidates(names, "testx") == ["tests", "test", "testy"]
    assert typo_candidates(names, "testx", 2) == ["tests", "test"]
    assert typo_candidates(names, "testx", 0) == []
    assert typo_candidates(names, "testx", -1) == []
    assert typo_candidates(["ab", "ab", "ba"], "aa") == ["ab", "ba"]  # each name once


def test_closer_names_come_first():
    assert typo_candidates(["abcdxy", "abcdex"], "abcdef") == ["abcdex", "abcdxy"]


names = st.text("abcde-", min_size=1, max_size=8)


@settings(max_examples=examples(300))
@given(st.text("abc", max_size=7), st.text("abc", max_size=7), st.integers(0, 3))
def test_bounded_distance_is_the_reference_capped(a, b, bound):
    assert osa_distance(a, b, bound) == min(reference(a, b), bound + 1)


@settings(max_examples=examples(200))
@given(st.lists(names, max_size=12), names, st.integers(1, 5) | st.none())
def test_candidates_are_exactly_the_close_names(known, typed, limit):
    found = typo_candidates(known, typed, limit)
    close = sorted(
        {n for n in known if n != typed and reference(n, typed) <= allowance(len(typed))},
        key=lambda n: (reference(n, typed), known.index(n)),
    )
    if typed in known:
        close = []
    assert found == close[:limit]


# --------------------------------------------------------------------------- markers


def hints(text: str, snippets: dict[str, str] = SNIPPETS) -> list[tuple[str, str]]:
    index = TypoIndex(snippets)
    return [(text[u.start : u.end], u.suggestion) for u in unknown_markers(text, snippets, index)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("please %reveiw this", [("%reveiw", "review")]),
        ("(%reveiw).", [("%reveiw", "review")]),
        ("%reveiw\n%tset", [("%reveiw", "review"), ("%tset", "test")]),
        ("中文，%reveiw", [("%reveiw", "review")]),  # CJK punctuation is a boundary
        ("%review %reveiw %reveiw", [("%reveiw", "review"), ("%reveiw", "review")]),
        ("--format=%h", []),
        ("git log --format=%tset", []),  # not at a boundary
        ("100%", []),
        ("100% done", []),
        ("%%reveiw", []),  # an escape: sent as the literal %reveiw
        ("x%reveiw", []),
        ("中文%reveiw", []),  # a Han letter is no boundary
        ("中文%tets %reveiw", [("%reveiw", "review")]),  # and what follows is looked at
        ("é%reveiw", []),
        ("中文。%reveiw", [("%reveiw", "review")]),  # CJK punctuation is
        ("%Reveiw", []),  # not a name
        ("%zzzzzz", []),  # nothing is close
        ("%review", []),  # known
        ("%", []),
    ],
)
def test_unknown_markers_table(text, expected):
    assert hints(text) == expected


def test_no_snippets_no_hints():
    assert hints("%reveiw", {}) == []


def test_the_span_is_the_marker_and_its_name():
    text = "a (%reveiw-"
    (found,) = unknown_markers(text, SNIPPETS, TypoIndex(SNIPPETS))
    assert found == UnknownMarker(3, 10, "reveiw", "review")


prompt_chars = st.sampled_from([*"%%%ab tx-.=(\n中，", "reveiw", "tset", "%%", "x%"])


@settings(max_examples=examples(300))
@given(st.lists(prompt_chars, max_size=30).map("".join))
def test_a_hint_sits_only_where_the_name_typed_right_would_expand(text):
    """The grammar's own markers decide: with the mistyped name configured, submission
    would expand exactly that span (so the span is a marker at a boundary, no escape);
    and every such span of an unknown close name gets its hint."""
    found = list(unknown_markers(text, SNIPPETS, TypoIndex(SNIPPETS)))
    for hint in found:
        assert is_valid_name(hint.name) and hint.name not in SNIPPETS
        assert typo_candidates(NAMES, hint.name, 1) == [hint.suggestion]
    typos = {h.name for h in found} | {"reveiw", "tset", "a", "b", "ab", "t", "x", "tx"}
    with_typos = {**SNIPPETS, **dict.fromkeys(typos, "TYPO")}
    expected = [
        (m.start, m.end)
        for m in markers(text, with_typos)
        if not m.escape and m.name not in SNIPPETS and typo_candidates(NAMES, m.name, 1)
    ]
    assert [(h.start, h.end) for h in found] == expected
