"""Pi's fuzzy filter (pi-tui 1.1.0 ``fuzzyFilter``), scored and ordered exactly.

Scoring per matched query character at text index ``i`` (lower is better):
``-5 * run`` while matches are consecutive (``run`` counts 1, 2, 3...; a first match
at index 0 counts as consecutive, because the last match index starts at -1),
``+2 * gap`` for the characters skipped since the previous match, ``-10`` at a word
boundary (index 0 or after whitespace or one of ``-_./:``), ``+0.1 * i``; then
``-100`` for an exact match and ``+5`` when only the letters/digits swap matched.
"""

from __future__ import annotations

import pytest
from pi_snippets_lsp.core.ranking import FuzzyMatch, fuzzy_filter, fuzzy_match


def names(items: list[str], query: str) -> list[str]:
    return fuzzy_filter(items, query, lambda item: item)


# --------------------------------------------------------------------------- scores


@pytest.mark.parametrize(
    ("query", "text", "score"),
    [
        # m@0: -5 (run 1) -10 (start) +0; c@1: -10 (run 2) +0.1; p@2: -15 (run 3) +0.2;
        # = -39.7, exact -100.
        pytest.param("mcp", "mcp", -139.7, id="exact-match"),
        pytest.param("mcp", "mcp-tools", -39.7, id="prefix"),
        # m@4: -10 (after "-") +0.4; c@5: -5 +0.5; p@6: -10 +0.6.
        pytest.param("mcp", "use-mcp", -23.5, id="after-hyphen"),
        # m@0: -15; c@3: +4 (gap 2) -10 (after "-") +0.3; p@10: +12 (gap 6) -10 +1.0.
        pytest.param("mcp", "my-config-parser", -17.7, id="scattered-word-starts"),
        # m@1: +0.1; c@3: +2 +0.3; p@5: +2 +0.5.
        pytest.param("mcp", "xmxcxp", 4.9, id="scattered-mid-word"),
        pytest.param("t", "at", 0.1, id="mid-word-single"),
        pytest.param("t", "a.t", -9.8, id="after-dot"),
        pytest.param("t", "a_t", -9.8, id="after-underscore"),
        pytest.param("t", "a/t", -9.8, id="after-slash"),
        pytest.param("t", "a:t", -9.8, id="after-colon"),
        pytest.param("t", "a t", -9.8, id="after-space"),
        pytest.param("t", "a\u3000t", -9.8, id="after-ideographic-space"),
        # a@0: -15; b@2: +2 (gap 1) +0.2.
        pytest.param("ab", "axb", -12.8, id="gap-of-one"),
        pytest.param("ab", "axxb", -10.7, id="gap-of-two"),
        pytest.param("MCP", "mcp", -139.7, id="case-insensitive"),
        pytest.param("", "anything", 0, id="empty-query"),
        # swap: "2mcp" exact = -15 -24.9... = -159.4, then +5.
        pytest.param("mcp2", "2mcp", -154.4, id="letters-digits-swapped"),
        pytest.param("2mcp", "mcp2", -154.4, id="digits-letters-swapped"),
        # "gpt5" matches "gpt-5" directly: g,p,t = -39.7; 5@4: +2 (gap) -10 +0.4.
        pytest.param("gpt5", "gpt-5", -47.3, id="direct-match-needs-no-swap"),
    ],
)
def test_scores(query: str, text: str, score: float) -> None:
    result = fuzzy_match(query, text)
    assert result.matches
    assert result.score == pytest.approx(score)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        pytest.param("mcp2", "mcp", id="digit-missing-and-swap-fails"),
        pytest.param("a1b", "1ab", id="mixed-shape-is-not-swapped"),
        pytest.param("cm", "mcp", id="out-of-order"),
        pytest.param("mcpx", "mcp", id="query-longer-than-text"),
        pytest.param("mm", "mcp", id="one-text-char-per-query-char"),
        pytest.param("use mcp", "use-mcp", id="space-is-a-character-to-fuzzy-match"),
    ],
)
def test_no_match(query: str, text: str) -> None:
    assert fuzzy_match(query, text) == FuzzyMatch(matches=False, score=0)


def test_the_swap_retry_is_only_taken_when_the_direct_match_fails() -> None:
    # "abc12" finds "12abc" only through the swap, which costs +5 over the exact match.
    swapped = fuzzy_match("abc12", "12abc")
    direct = fuzzy_match("12abc", "12abc")
    assert swapped.matches and direct.matches
    assert swapped.score == pytest.approx(direct.score + 5)


# --------------------------------------------------------------------------- order


@pytest.mark.parametrize(
    ("items", "query", "expected"),
    [
        pytest.param(
            ["xmxcxp", "my-config-parser", "use-mcp", "mcp-tools", "mcp"],
            "mcp",
            # -139.7, -39.7, -23.5, -17.7, 4.9
            ["mcp", "mcp-tools", "use-mcp", "my-config-parser", "xmxcxp"],
            id="exact-then-prefix-then-word-start-then-scattered",
        ),
        pytest.param(
            ["axxb", "axb", "abx", "ab"],
            "ab",
            # -10.7, -12.8, -24.9, -124.9
            ["ab", "abx", "axb", "axxb"],
            id="smaller-gaps-first",
        ),
        pytest.param(
            ["at", "axt", "a.t", "a_t", "a-t"],
            "t",
            # 0.1, 0.2, then three ties at -9.8 kept in input order
            ["a.t", "a_t", "a-t", "at", "axt"],
            id="word-boundary-bonus",
        ),
        pytest.param(
            ["review", "rv", "r-v"],
            "rv",
            # rv: exact; r-v: -15 +2 -10 +0.2 = -22.8; review: -15 +2 (gap) +0.2 = -12.8
            ["rv", "r-v", "review"],
            id="exact-beats-word-boundary-beats-gap",
        ),
        pytest.param(
            ["mcp", "2mcp", "mcp2"],
            "mcp2",
            # mcp2 exact -159.4; 2mcp via swap -154.4; mcp no match
            ["mcp2", "2mcp"],
            id="swap-ranks-after-a-direct-exact-match",
        ),
    ],
)
def test_crafted_name_sets_in_exact_order(
    items: list[str], query: str, expected: list[str]
) -> None:
    assert names(items, query) == expected


@pytest.mark.parametrize(
    ("items", "query", "expected"),
    [
        pytest.param(
            ["mcp-use", "use-git", "use-mcp"],
            "use mcp",
            # use-mcp: -39.7 + -23.5; mcp-use: -9.6 -14.1... = -23.5 + -39.7: a tie
            ["mcp-use", "use-mcp"],
            id="space-separates-tokens-all-must-match",
        ),
        pytest.param(
            ["use-mcp", "use-git", "mcp-use"],
            "use/mcp",
            ["use-mcp", "mcp-use"],
            id="slash-separates-tokens",
        ),
        pytest.param(
            ["use-mcp", "git"],
            "  use \t mcp  ",
            ["use-mcp"],
            id="surrounding-and-repeated-whitespace",
        ),
        pytest.param(
            ["abc", "a-b-c", "cab"],
            "c a",
            # a-b-c: -9.6 -15 = -24.6; cab: -15 +0.1 = -14.9; abc: 0.2 -15 = -14.8
            ["a-b-c", "cab", "abc"],
            id="token-scores-add",
        ),
    ],
)
def test_multi_token_queries(items: list[str], query: str, expected: list[str]) -> None:
    assert names(items, query) == expected


def test_token_scores_add_up() -> None:
    # -15 for "a" at 0 plus -9.6 for "c" after a hyphen at 4 = -24.6 for "a-b-c";
    # "cab": -15 for "c" plus 0.1 for "a" at 1 = -14.9; "abc": -15 + 0.2 = -14.8.
    assert fuzzy_match("c", "a-b-c").score + fuzzy_match("a", "a-b-c").score == pytest.approx(-24.6)
    assert fuzzy_match("c", "cab").score + fuzzy_match("a", "cab").score == pytest.approx(-14.9)
    assert fuzzy_match("c", "abc").score + fuzzy_match("a", "abc").score == pytest.approx(-14.8)


@pytest.mark.parametrize(
    "items",
    [
        pytest.param(["b-x", "a-x", "c-x"], id="three-ties"),
        pytest.param(["c-x", "b-x", "a-x"], id="three-ties-reversed"),
    ],
)
def test_ties_keep_the_input_order(items: list[str]) -> None:
    assert names(items, "x") == items


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="spaces"),
        pytest.param("\t\u3000", id="js-whitespace"),
        pytest.param("/", id="only-a-slash"),
        pytest.param(" / / ", id="slashes-and-spaces"),
    ],
)
def test_a_blank_query_keeps_every_item_in_input_order(query: str) -> None:
    items = ["zeta", "alpha", "mid"]
    assert names(items, query) == items


def test_items_without_a_match_are_dropped() -> None:
    assert names(["abc", "xyz", "qrs"], "q") == ["qrs"]
    assert names(["abc", "xyz"], "q") == []


def test_the_filter_ranks_by_the_text_of_each_item() -> None:
    items = [("first", "xmcp"), ("second", "mcp")]
    assert fuzzy_filter(items, "mcp", lambda item: item[1]) == [("second", "mcp"), items[0]]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        pytest.param("ab12", "12ab", id="letters-then-two-digits"),
        pytest.param("12ab", "ab12", id="two-digits-then-letters"),
        pytest.param("abc123", "123abc", id="three-digits"),
    ],
)
def test_the_swap_takes_every_digit_of_the_run(query: str, text: str) -> None:
    """pi-tui swaps the whole letter run and the whole digit run: ``12ab`` finds
    ``ab12``, at the exact match's score plus 5."""
    swapped = fuzzy_match(query, text)
    assert swapped.matches
    assert swapped.score == pytest.approx(fuzzy_match(text, text).score + 5)


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        pytest.param("\u3000", ["ab", "cd"], id="js-whitespace-is-blank"),
        pytest.param("\ufeff", ["ab", "cd"], id="bom-is-js-whitespace"),
        pytest.param("\x85", [], id="nel-is-not-js-whitespace"),
        pytest.param("\x1c", [], id="file-separator-is-not-js-whitespace"),
        pytest.param("\x85a", [], id="nel-is-part-of-the-token"),
        pytest.param("\ufeffa\ufeff", ["ab"], id="bom-trimmed-around-the-token"),
    ],
)
def test_the_query_is_trimmed_as_javascript_trims(query: str, kept: list[str]) -> None:
    """A blank query keeps everything, and "blank" is JavaScript's ``trim``: U+FEFF is
    whitespace there, U+0085 and U+001C-U+001F are not (Python's ``strip`` differs)."""
    assert fuzzy_filter(["ab", "cd"], query, lambda text: text) == kept
