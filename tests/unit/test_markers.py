"""Markers in the editor: where they are, what hover, tokens and actions make of them.

docs/lsp.md, "Markers in the editor". Everything is taken from ``expand``, so the
properties below check that the editor features and submission agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.code_actions import (
    EXPAND_KIND,
    SAVE_COMMAND,
    SAVE_KIND,
    expansion_edits,
    kind_wanted,
    prompt_actions,
)
from pi_snippets_lsp.core.documents import Document, Encoding
from pi_snippets_lsp.core.edits import TextEdit, apply_edits
from pi_snippets_lsp.core.expansion import expand
from pi_snippets_lsp.core.hover import code_span, fence, hover_text, layer_of
from pi_snippets_lsp.core.markers import Marker, marker_at, marker_pieces, markers
from pi_snippets_lsp.core.semantic_tokens import ESCAPE_TYPE, MARKER_TYPE, semantic_tokens
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.settings.locate import snippet_key_span

from .conftest import examples
from .test_expansion import prompts_and_snippets

SNIPPETS = {"a": "AAA", "use-mcp": "Use MCP", "same": "%same"}


def spans(found: list[Marker]) -> list[tuple[int, int]]:
    return [(m.start, m.end) for m in found]


# --------------------------------------------------------------------------- markers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("%a", [(0, 2, "a", False, "AAA")], id="a-marker"),
        pytest.param("x %%a.", [(2, 5, "a", True, "%a")], id="an-escape"),
        pytest.param("(%use-mcp)", [(1, 9, "use-mcp", False, "Use MCP")], id="in-wrappers"),
        pytest.param("x%a %A %nope a,%a", [], id="nothing-submission-leaves-alone"),
        pytest.param("%same", [(0, 5, "same", False, "%same")], id="its-own-marker"),
        pytest.param("中文，%a\r\n%a", [(3, 5, "a", False, "AAA"), (7, 9, "a", False, "AAA")],
                     id="cjk-and-crlf"),
    ],
)  # fmt: skip
def test_markers_are_what_expansion_replaces(text: str, expected: list[tuple[object, ...]]) -> None:
    found = markers(text, SNIPPETS)
    assert [(m.start, m.end, m.name, m.escape, m.new_text) for m in found] == expected


def test_nothing_configured_means_no_marker_not_even_an_escape() -> None:
    assert markers("%%a %a", {}) == []


@pytest.mark.parametrize(
    ("offset", "expected"),
    [
        pytest.param(2, None, id="before-the-percent"),
        pytest.param(3, (3, 5), id="at-the-percent"),
        pytest.param(4, (3, 5), id="inside"),
        pytest.param(5, (3, 5), id="right-after"),
        pytest.param(6, None, id="past-the-period"),
    ],
)
def test_the_marker_under_a_cursor(offset: int, expected: tuple[int, int] | None) -> None:
    found = marker_at("ab %a. z", offset, SNIPPETS)
    assert (None if found is None else (found.start, found.end)) == expected


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        pytest.param(0, 3, [], id="ends-at-the-percent"),
        pytest.param(0, 4, [(3, 5)], id="cuts-into-a-marker"),
        pytest.param(4, 9, [(3, 5), (7, 9)], id="takes-whole-markers"),
        pytest.param(5, 7, [], id="between-markers"),
        pytest.param(0, 12, [(3, 5), (7, 9)], id="everything"),
    ],
)
def test_a_selection_takes_the_markers_it_shares_a_character_with(
    start: int, end: int, expected: list[tuple[int, int]]
) -> None:
    assert spans(markers("ab %a. %a xy", SNIPPETS, start, end)) == expected


@settings(max_examples=examples(300))
@given(case=prompts_and_snippets(), data=st.data())
def test_markers_of_a_part_are_the_whole_texts_markers_there(
    case: tuple[str, dict[str, str]], data: st.DataObject
) -> None:
    """Expanding only the lines concerned finds exactly what expanding everything finds."""
    text, snippets = case
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    whole = markers(text, snippets)
    if start == end:
        wanted = [m for m in whole if m.start <= start <= m.end]
    else:
        wanted = [m for m in whole if m.start < end and m.end > start]
    assert markers(text, snippets, start, end) == wanted


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        pytest.param(0, None, [(["", " x ", "\n", " y ", ""], ["%a", "%a", "%%a", "%a"])],
                     id="the-whole-text"),
        pytest.param(5, 9, [(["%a x ", "\n", " y %a"], ["%a", "%%a"])], id="a-range"),
        pytest.param(8, None, [(["%a x %a\n", " y ", ""], ["%%a", "%a"])], id="to-the-end"),
        pytest.param(7, 7, [(["%a x ", "\n%%a y %a"], ["%a"])], id="a-cursor"),
        pytest.param(2, 5, [(["%a x %a\n%%a y %a"], [])], id="between-markers"),
    ],
)  # fmt: skip
def test_the_pieces_are_the_whole_text_cut_at_the_markers_in_range(
    start: int, end: int | None, expected: list[tuple[list[str], list[str]]]
) -> None:
    text = "%a x %a\n%%a y %a"
    assert list(marker_pieces(text, SNIPPETS, start, end)) == expected


def test_the_whole_text_comes_in_windows_a_range_in_one() -> None:
    text = "x %a y " * 10_000
    assert len(list(marker_pieces(text, SNIPPETS, 0, None))) > 1
    (_, found), *more = marker_pieces(text, SNIPPETS, 0, len(text))
    assert more == []
    assert found == ["%a"] * 10_000


@settings(max_examples=examples(200))
@given(case=prompts_and_snippets(), data=st.data())
def test_the_pieces_of_a_range_hold_its_markers(
    case: tuple[str, dict[str, str]], data: st.DataObject
) -> None:
    text, snippets = case
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    windows = list(marker_pieces(text, snippets, start, end))
    assert "".join(p + m for b, ms in windows for p, m in zip(b, [*ms, ""], strict=True)) == text
    found = [marker for _, ms in windows for marker in ms]
    assert found == [m.source_text for m in markers(text, snippets, start, end)]


# --------------------------------------------------------------------------- semantic tokens


def decode(document: Document, data: list[int], encoding: Encoding) -> list[tuple[int, int, int]]:
    """Tokens as (start, end, type) code points, decoded with the LSP rules (independently
    of the encoder: lines split and units counted here)."""
    lines = _lsp_lines(document.text)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line))
    found, line, column = [], 0, 0
    for i in range(0, len(data), 5):
        delta_line, delta_start, length, kind, modifiers = data[i : i + 5]
        assert modifiers == 0
        line += delta_line
        column = column + delta_start if delta_line == 0 else delta_start
        start = starts[line] + _index(lines[line], column, encoding)
        end = starts[line] + _index(lines[line], column + length, encoding)
        found.append((start, end, kind))
    return found


def _lsp_lines(text: str) -> list[str]:
    """Lines with their line breaks, split at CR, LF and CRLF only."""
    lines, current, i = [], "", 0
    while i < len(text):
        char = text[i]
        current += char
        if char == "\r" and text[i + 1 : i + 2] == "\n":
            current += "\n"
            i += 1
        if char in "\r\n":
            lines.append(current)
            current = ""
        i += 1
    lines.append(current)
    return lines


def _index(line: str, units: int, encoding: Encoding) -> int:
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
    width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]
    seen = 0
    for index, char in enumerate(line):
        if seen == units:
            return index
        seen += len(char.encode(codec, "surrogatepass")) // width
    assert seen == units, "a token must end on a character boundary"
    return len(line)


@settings(max_examples=examples(300))
@given(
    case=prompts_and_snippets(),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_semantic_tokens_are_exactly_the_spans_expand_replaces(
    case: tuple[str, dict[str, str]], encoding: Encoding
) -> None:
    text, snippets = case
    document = Document(uri="file:///p.md", text=text)
    tokens = decode(document, semantic_tokens(document, snippets, encoding), encoding)
    expected = [
        (r.start, r.end, ESCAPE_TYPE if text[r.start : r.end].startswith("%%") else MARKER_TYPE)
        for r in expand(text, snippets).replacements
    ]
    assert tokens == expected


@settings(max_examples=examples(200))
@given(case=prompts_and_snippets(), data=st.data())
def test_range_tokens_are_the_full_tokens_in_the_range(
    case: tuple[str, dict[str, str]], data: st.DataObject
) -> None:
    text, snippets = case
    document = Document(uri="file:///p.md", text=text)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    full = decode(document, semantic_tokens(document, snippets, "utf-16"), "utf-16")
    ranged = decode(document, semantic_tokens(document, snippets, "utf-16", start, end), "utf-16")
    if start == end:
        assert ranged == [t for t in full if t[0] <= start <= t[1]]
    else:
        assert ranged == [t for t in full if t[0] < end and t[1] > start]


def test_tokens_after_emoji_cjk_and_crlf() -> None:
    text = "😀中 %a\r\n，%%a"
    document = Document(uri="file:///p.md", text=text)
    assert semantic_tokens(document, SNIPPETS, "utf-16") == [
        0, 4, 2, MARKER_TYPE, 0,
        1, 1, 3, ESCAPE_TYPE, 0,
    ]  # fmt: skip
    assert semantic_tokens(document, SNIPPETS, "utf-8") == [
        0, 8, 2, MARKER_TYPE, 0,
        1, 3, 3, ESCAPE_TYPE, 0,
    ]  # fmt: skip


def test_each_token_counts_its_lines_from_the_token_before() -> None:
    """LSP's relative encoding: a token's line is a delta from the previous token's
    line, and its start is relative only on the same line."""
    document = Document(uri="file:///p.md", text="x\n %a\n\n  %a %a\n%%a")
    assert semantic_tokens(document, SNIPPETS, "utf-16") == [
        1, 1, 2, MARKER_TYPE, 0,
        2, 2, 2, MARKER_TYPE, 0,
        0, 3, 2, MARKER_TYPE, 0,
        1, 0, 3, ESCAPE_TYPE, 0,
    ]  # fmt: skip


# --------------------------------------------------------------------------- hover


def test_fence_and_code_span_are_longer_than_any_backtick_run() -> None:
    assert fence("no ticks") == "```"
    assert fence("a ```` b ` c") == "`````"
    assert code_span("x`y") == "``x`y``"
    assert code_span("`x") == "`` `x ``"


def test_layers() -> None:
    user = Path("/home/me/.pi/agent/settings.json")
    assert layer_of(str(user), user) == "user"
    assert layer_of("/work/p/.pi/settings.json", user) == "project"
    assert layer_of("initializationOptions", user) == "client"
    assert layer_of("workspace/configuration", user) == "client"


def test_hover_shows_line_breaks_as_line_breaks() -> None:
    marker = Marker(0, 2, "a", False, "one\r\ntwo")
    snippet = Snippet(name="a", value="one\r\ntwo\rthree", source="/s.json")
    assert hover_text(marker, snippet, "user", markdown=False) == (
        "%a expands to:\n\none\ntwo\nthree\n\nFrom the user settings file: /s.json"
    )


# --------------------------------------------------------------------------- code actions


def test_expansion_edits_are_only_the_markers_that_change() -> None:
    text = "x %a %same %%a %nope"
    edits = expansion_edits(text, SNIPPETS)
    assert edits == [TextEdit(2, 4, "AAA"), TextEdit(11, 14, "%a")]


@settings(max_examples=examples(200))
@given(case=prompts_and_snippets())
def test_expanding_the_whole_document_is_submission(case: tuple[str, dict[str, str]]) -> None:
    text, snippets = case
    assert apply_edits(text, expansion_edits(text, snippets)) == expand(text, snippets).text


@pytest.mark.parametrize(
    ("kind", "only", "wanted"),
    [
        pytest.param(EXPAND_KIND, None, True, id="no-filter"),
        pytest.param(EXPAND_KIND, ["refactor"], True, id="parent-kind"),
        pytest.param(EXPAND_KIND, ["refactor.rewrite"], True, id="same-kind"),
        pytest.param(SAVE_KIND, ["refactor.rewrite"], False, id="child-does-not-cover-parent"),
        pytest.param(EXPAND_KIND, ["quickfix"], False, id="other-kind"),
        pytest.param(EXPAND_KIND, ["refactor.re"], False, id="prefix-is-not-a-kind"),
    ],
)
def test_only_filters_kinds(kind: str, only: list[str] | None, wanted: bool) -> None:
    assert kind_wanted(kind, only) is wanted


def test_a_cursor_on_a_marker_offers_expanding_it_and_no_save() -> None:
    actions = prompt_actions("x %a y", SNIPPETS, 3, 3, uri="file:///p.md")
    assert [(a.title, a.kind, a.edits) for a in actions] == [
        ("Expand snippet markers", EXPAND_KIND, (TextEdit(2, 4, "AAA"),))
    ]


def test_a_selection_offers_both_and_save_carries_the_text() -> None:
    actions = prompt_actions("x %a y", SNIPPETS, 0, 6, uri="file:///p.md")
    assert [a.title for a in actions] == ["Expand snippet markers", "Save selection as snippet"]
    save = actions[1]
    assert (save.command, dict(save.arguments)) == (
        SAVE_COMMAND,
        {"text": "x %a y", "uri": "file:///p.md"},
    )


def test_blank_selection_and_no_apply_edit_offer_no_save() -> None:
    assert prompt_actions(" \t\n", SNIPPETS, 0, 3) == []
    assert prompt_actions("words", SNIPPETS, 0, 5, can_save=False) == []


# --------------------------------------------------------------------------- definition


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        pytest.param('{"piSimpleSnippets": {"snippets": {"a": "x"}}}', "a", '"a"', id="key"),
        pytest.param('{"piSimpleSnippets": {"snippets": {"\\u0061": "x"}}}', "a", '"\\u0061"',
                     id="escaped-key"),
        pytest.param('{"piSimpleSnippets": {"snippets": {"b": "x"}}}', "a", None, id="absent"),
        pytest.param('{"piSimpleSnippets": {"snippets": [1]}}', "a", None, id="not-an-object"),
        pytest.param('{"piSimpleSnippets": {"shortcut": "alt+s"}}', "a", None, id="no-snippets"),
        pytest.param('{"a": {"snippets": {"a": "x"}}}', "a", None, id="no-namespace"),
        pytest.param('{"piSimpleSnippets": ', "a", None, id="invalid-json"),
    ],
)  # fmt: skip
def test_snippet_key_span(text: str, name: str, expected: str | None) -> None:
    span = snippet_key_span(text, name)
    assert (None if span is None else text[span[0] : span[1]]) == expected


def test_a_duplicated_key_is_found_where_json_parse_keeps_it() -> None:
    text = '{"piSimpleSnippets": {"snippets": {"a": "1", "a": "2"}}}'
    span = snippet_key_span(text, "a")
    assert span is not None and span[0] == text.rindex('"a"')


# ------------------------------------------------------------------ only the lines concerned


class Recording(dict[str, str]):
    """A snippets mapping that records the names looked up in it."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self.asked.add(key)
        return super().get(key, default)


LINES = {"a": "A", "b": "B", "c": "C", "d": "D"}


@pytest.mark.parametrize(
    ("text", "start", "end", "looked_at"),
    [
        pytest.param("%a\n%b\n%c", 4, 4, {"b"}, id="lf-middle-line"),
        pytest.param("%a\r%b\r%c", 4, 4, {"b"}, id="cr-middle-line"),
        pytest.param("%a\r\n%b\r\n%c\r\n%d", 5, 6, {"b"}, id="crlf-middle-line"),
        pytest.param("%a\n%b\n%c", 7, 8, {"c"}, id="last-line"),
        pytest.param("%a\n%b\n%c", 0, 1, {"a"}, id="first-line"),
        pytest.param("%a\n%b\r%c\n%d", 4, 8, {"b", "c"}, id="a-range-over-two-lines"),
        pytest.param("%a\r%b\n%c\r%d", 4, 4, {"b"}, id="mixed-breaks"),
        pytest.param("\n%a\n%b", 0, 0, set(), id="cursor-on-an-empty-first-line"),
        pytest.param("\r%a\r%b", 0, 0, set(), id="cursor-on-an-empty-first-line-cr"),
    ],
)
def test_a_range_looks_only_at_the_lines_it_concerns(
    text: str, start: int, end: int, looked_at: set[str]
) -> None:
    """Hover, tokens of a range and actions at a cursor cost the lines concerned, not the
    whole document: only the names on those lines are looked up."""
    snippets = Recording(LINES)
    markers(text, snippets, start, end)
    assert snippets.asked == looked_at
