"""The completion model: the token at the cursor, the listed names, previews, inserts.

docs/grammar.md, "The completion token", "Ranking", "The preview"; docs/lsp.md, "Completion".
"""

from __future__ import annotations

import pytest
from pi_snippets_lsp.core.completion import MAX_ITEMS, insert_text, suggest
from pi_snippets_lsp.core.config import Config, Layer, validate_layers
from pi_snippets_lsp.core.snippet import (
    ELLIPSIS,
    PREVIEW_LIMIT,
    Snippet,
    normalize_newlines,
    preview,
)

VALUE = "Use your MCP tools to find the information"


def config_of(snippets: dict[str, str], expand_on_completion: bool = False) -> Config:
    """A configuration built the way a load builds it (validated, sorted by name)."""
    namespace = {"snippets": snippets, "expandOnCompletion": expand_on_completion}
    config = validate_layers([Layer(source="test", settings={"piSimpleSnippets": namespace})])
    assert config.warnings == ()
    return config


CONFIG = config_of({"use-mcp": VALUE, "tdd": "Write the failing test first", "a": "AAA"})


def labels(text_before_cursor: str, config: Config = CONFIG) -> list[str]:
    suggestions = suggest(text_before_cursor, config)
    assert suggestions is not None
    return [item.label for item in suggestions.items]


# --------------------------------------------------------------------------- tokens


@pytest.mark.parametrize(
    "before",
    [
        pytest.param("", id="empty-line"),
        pytest.param("hello", id="no-percent"),
        pytest.param("x%use", id="percent-glued-to-a-word"),
        pytest.param("%use ", id="after-the-token"),
        pytest.param("%Use", id="uppercase-run"),
        pytest.param("100%", id="percent-after-digit"),
        pytest.param("@file", id="another-providers-trigger"),
        pytest.param("/cmd", id="slash-command"),
    ],
)
def test_no_suggestions_outside_a_snippet_token(before: str) -> None:
    assert suggest(before, CONFIG) is None


@pytest.mark.parametrize(
    "before",
    [
        pytest.param("%.", id="percent-dot"),
        pytest.param("%-x", id="percent-hyphen"),
        pytest.param("say %_", id="percent-underscore"),
    ],
)
def test_no_suggestions_for_a_query_the_query_rule_rejects(before: str) -> None:
    assert suggest(before, CONFIG) is None


@pytest.mark.parametrize(
    ("before", "start", "query"),
    [
        pytest.param("%zzz", 0, "zzz", id="no-name-matches"),
        pytest.param("Please %use-mcp.", 7, "use-mcp.", id="trailing-punctuation-typed"),
        pytest.param("(%qq", 1, "qq", id="after-a-wrapper"),
    ],
)
def test_a_token_with_no_match_gets_an_empty_complete_list(
    before: str, start: int, query: str
) -> None:
    suggestions = suggest(before, CONFIG)
    assert suggestions is not None
    assert (suggestions.replace_start, suggestions.replace_end) == (start, len(before))
    assert suggestions.query == query
    assert suggestions.items == ()
    assert suggestions.is_incomplete is False


def test_no_suggestions_while_no_snippet_is_configured() -> None:
    """Pi registers no completion provider then: even a bare ``%`` gets nothing."""
    empty = validate_layers([Layer(source="test", settings={"piSimpleSnippets": {}})])
    assert suggest("%", empty) is None
    assert suggest("see %us", empty) is None


def test_the_replaced_range_runs_from_the_percent_to_the_cursor() -> None:
    suggestions = suggest("line one\n  {%us", CONFIG)
    assert suggestions is not None
    assert (suggestions.replace_start, suggestions.replace_end) == (12, 15)


def test_a_bare_percent_lists_every_snippet_in_name_order() -> None:
    config = config_of({"zeta": "z", "alpha": "a", "mid": "m", "0num": "n"})
    assert labels("%", config) == ["%0num", "%alpha", "%mid", "%zeta"]
    assert labels("say %", config) == ["%0num", "%alpha", "%mid", "%zeta"]


def test_the_query_filters_and_ranks_with_pis_fuzzy_rule() -> None:
    config = config_of({"xmxcxp": "1", "my-config-parser": "2", "use-mcp": "3", "mcp": "4"})
    assert labels("%mcp", config) == ["%mcp", "%use-mcp", "%my-config-parser", "%xmxcxp"]


def test_each_item_carries_label_rank_preview_and_insert_text() -> None:
    suggestions = suggest("do %us", CONFIG)
    assert suggestions is not None
    assert (suggestions.replace_start, suggestions.replace_end, suggestions.query) == (3, 6, "us")
    (item,) = suggestions.items
    assert item.label == "%use-mcp"
    assert (item.rank, item.sort_text) == (0, "0000")
    assert item.preview == VALUE
    assert item.insert_text == "%use-mcp"
    assert (item.name, item.value, item.source) == ("use-mcp", VALUE, "test")


def test_ranks_count_from_zero_in_list_order() -> None:
    suggestions = suggest("%", CONFIG)
    assert suggestions is not None
    assert [(i.rank, i.label) for i in suggestions.items] == [
        (0, "%a"),
        (1, "%tdd"),
        (2, "%use-mcp"),
    ]


# --------------------------------------------------------------------------- the cap


@pytest.mark.parametrize(
    ("count", "query", "listed", "incomplete"),
    [
        pytest.param(19, "", 19, False, id="19-of-19"),
        pytest.param(20, "", 20, False, id="exactly-20-is-complete"),
        pytest.param(21, "", 20, True, id="21-is-capped-and-incomplete"),
        pytest.param(50, "", 20, True, id="50-is-capped"),
        pytest.param(21, "s1", 11, False, id="filtered-below-the-cap"),
        pytest.param(30, "s", 20, True, id="filtered-above-the-cap"),
    ],
)
def test_at_most_20_suggestions(count: int, query: str, listed: int, incomplete: bool) -> None:
    config = config_of({f"s{n:02d}": f"value {n}" for n in range(count)})
    suggestions = suggest("%" + query, config)
    assert suggestions is not None
    assert len(suggestions.items) == listed
    assert suggestions.is_incomplete is incomplete


def test_the_cap_keeps_the_best_ranked() -> None:
    config = config_of({f"s{n:02d}": "v" for n in range(25)})
    assert labels("%", config) == [f"%s{n:02d}" for n in range(MAX_ITEMS)]


def test_the_limits_are_pis() -> None:
    assert (MAX_ITEMS, PREVIEW_LIMIT, ELLIPSIS) == (20, 80, "…")


# --------------------------------------------------------------------------- previews


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("one two", "one two", id="plain"),
        pytest.param("one\ntwo", "one two", id="newline"),
        pytest.param("one\r\ntwo", "one two", id="crlf"),
        pytest.param("one\t\ttwo", "one two", id="tabs"),
        pytest.param("one\u00a0two", "one two", id="nbsp"),
        pytest.param("one\u3000two", "one two", id="ideographic-space"),
        pytest.param("one \n\t \u2028 two", "one two", id="mixed-run"),
        pytest.param("  \n padded \t ", "padded", id="trimmed"),
        pytest.param("a\x85\x85b", "a\x85\x85b", id="nel-is-not-js-whitespace"),
        pytest.param("a\x1cb", "a\x1cb", id="file-separator-is-not-js-whitespace"),
        pytest.param("x" * 80, "x" * 80, id="exactly-80-kept"),
        pytest.param("x" * 81, "x" * 79 + "…", id="81-cut-to-79-and-ellipsis"),
        pytest.param("x" * 200, "x" * 79 + "…", id="long"),
        pytest.param("x" * 78 + "\n\n" + "y", "x" * 78 + " y", id="collapse-before-measuring"),
        pytest.param("x" * 78 + " " + "y" * 10, "x" * 78 + " …", id="no-trim-after-cut"),
        pytest.param("😀" * 40, "😀" * 40, id="40-emoji-are-80-utf16-units-kept"),
        pytest.param("x" * 79 + "😀", "x" * 79 + "…", id="emoji-counts-two-units"),
        pytest.param("😀" * 41, "😀" * 41 + "…", id="41-emoji-cut-at-79-code-points"),
        pytest.param("😀" * 100, "😀" * 79 + "…", id="100-emoji-cut-at-79-code-points"),
        pytest.param("中" * 81, "中" * 79 + "…", id="cjk-counts-one-unit"),
    ],
)
def test_preview_is_one_collapsed_line_of_at_most_80_characters(value: str, expected: str) -> None:
    assert preview(value) == expected


def test_suggestions_carry_the_preview() -> None:
    config = config_of({"long": "first line\n\nsecond\tline " + "z" * 100})
    (item,) = suggest("%long", config).items  # type: ignore[union-attr]
    assert item.preview == ("first line second line " + "z" * 100)[:79] + "…"


# --------------------------------------------------------------------------- insert


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("one\r\ntwo", "one\ntwo", id="crlf-becomes-lf"),
        pytest.param("one\rtwo", "one\ntwo", id="lone-cr-becomes-lf"),
        pytest.param("one\r\r\ntwo", "one\n\ntwo", id="cr-then-crlf"),
        pytest.param("one\n\rtwo", "one\n\ntwo", id="lf-then-cr"),
        pytest.param("end\r", "end\n", id="trailing-cr"),
        pytest.param("$1 ${x} $0", "$1 ${x} $0", id="placeholders-kept-literally"),
        pytest.param("back\\slash \\n", "back\\slash \\n", id="backslashes-kept"),
        pytest.param("a\tb  c", "a\tb  c", id="tabs-and-spaces-kept"),
        pytest.param("a\x85b\u2028c\x0bd", "a\x85b\u2028c\x0bd", id="other-breaks-kept"),
        pytest.param("%other", "%other", id="markers-in-values-kept"),
        pytest.param("😀}", "😀}", id="emoji-and-brace"),
    ],
)
def test_expand_on_completion_inserts_the_value_with_line_breaks_as_lf(
    value: str, expected: str
) -> None:
    snippet = Snippet(name="s", value=value, source="test")
    assert insert_text(snippet, expand_on_completion=True) == expected
    assert normalize_newlines(value) == expected


def test_by_default_the_marker_is_inserted() -> None:
    snippet = Snippet(name="use-mcp", value="a\r\nb", source="test")
    assert insert_text(snippet, expand_on_completion=False) == "%use-mcp"


@pytest.mark.parametrize(
    ("expand_on_completion", "expected"),
    [
        pytest.param(False, "%multi", id="marker"),
        pytest.param(True, "line 1\nline 2\nline 3", id="value"),
    ],
)
def test_suggestions_insert_what_expand_on_completion_says(
    expand_on_completion: bool, expected: str
) -> None:
    config = config_of({"multi": "line 1\r\nline 2\rline 3"}, expand_on_completion)
    suggestions = suggest("%mu", config)
    assert suggestions is not None
    (item,) = suggestions.items
    assert item.insert_text == expected
    # The popup itself does not change: label and preview stay the same.
    assert item.label == "%multi"
    assert item.preview == "line 1 line 2 line 3"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(" \u3000ab\t\n", "ab", id="js-whitespace-trimmed"),
        pytest.param("\ufeffab\ufeff", "ab", id="bom-is-js-whitespace"),
        pytest.param("\x1cab\x1c", "\x1cab\x1c", id="file-separator-kept"),
        pytest.param("\x85ab\x85", "\x85ab\x85", id="nel-kept"),
    ],
)
def test_the_preview_trims_javascript_whitespace_only(value: str, shown: str) -> None:
    """The preview collapses and trims what JavaScript's ``\\s`` matches, nothing more:
    U+0085 and U+001C are text to Pi."""
    assert preview(value) == shown
