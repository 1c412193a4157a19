"""Semantic tokens' encoded data (docs/lsp.md, "Semantic tokens"), against a plain
reference: each marker's position found by walking the text from its start, one character
at a time, and encoded token after token.

``semantic_tokens`` computes the same integers in bulk, a window of the text at a time
(``markers.marker_pieces``): the properties run with the windows the text gets and with
windows of a few characters (every cut a cut may be), over line breaks of each kind,
characters of one to four UTF-8 bytes and a lone surrogate, in each encoding.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core import expansion, expansion_patterns
from pi_snippets_lsp.core.documents import Document, Encoding, units_length
from pi_snippets_lsp.core.expansion import SnippetTable
from pi_snippets_lsp.core.markers import markers
from pi_snippets_lsp.core.semantic_tokens import (
    ESCAPE_TYPE,
    MARKER_TYPE,
    semantic_tokens,
    token_chunks,
)

from .conftest import PIECES, examples, sized
from .test_expansion import prompts_and_snippets

SNIPPETS = {"a": "AAA", "use-mcp": "Use MCP", "same": "%same", "x.y": "D", "b": "b b"}
ENCODINGS: list[Encoding] = ["utf-8", "utf-16", "utf-32"]
#: Pieces of text: ``conftest.PIECES`` and the shapes that make windows and lines differ.
TEXT_PIECES = [
    *PIECES,
    *["\r\n%a", "%a\r", "\r\r\n", "\n\n", "x %a y ", "%a %a %%b", "((", "(((", "[{<`("],
    *["，(", "x(", "%%%", "%a.", "%a-x", "é", "\u0300", "\ud800", "😀%a", "中 %a"],
]
LINE_BREAKS = ("\r\n", "\r", "\n")


def reference_tokens(
    text: str,
    snippets: Mapping[str, str],
    encoding: Encoding,
    start: int = 0,
    end: int | None = None,
) -> list[int]:
    """REFERENCE: the markers in ``start``..``end`` (``markers.markers``), each one's
    line and column found by a walk from the text's start, encoded as LSP asks."""
    data: list[int] = []
    line, column, walked = 0, 0, 0  # the position of text[walked]
    last_line, last_column = 0, 0
    for marker in markers(text, snippets, start, end):
        while walked < marker.start:
            char = text[walked]
            if char in "\r\n":
                line, column = line + 1, 0
                walked += 2 if text.startswith("\r\n", walked) else 1
            else:
                column += units_length(char, encoding)
                walked += 1
        delta_line = line - last_line
        delta_start = column - last_column if delta_line == 0 else column
        length = units_length(text[marker.start : marker.end], encoding)
        kind = ESCAPE_TYPE if marker.escape else MARKER_TYPE
        data += [delta_line, delta_start, length, kind, 0]
        last_line, last_column = line, column
    return data


@contextmanager
def windows_of(characters: int | None) -> Iterator[None]:
    """The text's windows at least ``characters`` apart (None: as they come)."""
    with pytest.MonkeyPatch.context() as patch:
        if characters is not None:
            patch.setattr(expansion, "_SMALLEST_WINDOW", characters)
            patch.setattr(expansion, "_WINDOWS", 10**9)
        yield


@contextmanager
def large_table_patterns() -> Iterator[None]:
    """Every table takes a large one's pattern: first pairs, unknown names let through."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(expansion_patterns, "_MOST_TRIE_NAMES", 0)
        expansion_patterns.patterns_of.cache_clear()
        try:
            yield
        finally:
            expansion_patterns.patterns_of.cache_clear()


def assert_same(text: str, snippets: Mapping[str, str], encoding: Encoding) -> list[int]:
    ours = semantic_tokens(text, snippets, encoding)
    assert ours == reference_tokens(text, snippets, encoding), text
    assert all(type(number) is int for number in ours)  # JSON: 1, never true
    return ours


# --------------------------------------------------------------------------- the rules


def test_a_token_starts_after_the_token_before_on_its_line() -> None:
    # The escape is 3 long: the marker after it starts 3 + 1 after it.
    assert semantic_tokens("x %%a %a  %use-mcp", SNIPPETS, "utf-16") == [
        0, 2, 3, ESCAPE_TYPE, 0,
        0, 4, 2, MARKER_TYPE, 0,
        0, 4, 8, MARKER_TYPE, 0,
    ]  # fmt: skip


@pytest.mark.parametrize("line_break", LINE_BREAKS)
def test_a_token_after_a_line_break_starts_at_its_column(line_break: str) -> None:
    """Each break counts one line (CRLF too), and the start is the column on the new
    line, whatever came before the break."""
    text = line_break.join(["xx %a", "", "   %a", "%a %%a"])
    assert semantic_tokens(text, SNIPPETS, "utf-16") == [
        0, 3, 2, MARKER_TYPE, 0,
        2, 3, 2, MARKER_TYPE, 0,
        1, 0, 2, MARKER_TYPE, 0,
        0, 3, 3, ESCAPE_TYPE, 0,
    ]  # fmt: skip


def test_a_cr_then_an_lf_apart_are_two_line_breaks() -> None:
    assert semantic_tokens("\r%a\n%a\n\r%a\r\r\n%a", SNIPPETS, "utf-16") == [
        1, 0, 2, MARKER_TYPE, 0,
        1, 0, 2, MARKER_TYPE, 0,
        2, 0, 2, MARKER_TYPE, 0,
        2, 0, 2, MARKER_TYPE, 0,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("encoding", "columns"),
    [("utf-8", [8, 15, 7]), ("utf-16", [4, 9, 4]), ("utf-32", [3, 8, 3])],
)
def test_columns_count_the_encodings_units(encoding: Encoding, columns: list[int]) -> None:
    """Columns count an emoji as 4, 2 or 1 units, CJK as 3 or 1, an accent as 2 or 1;
    after a line break, the units on the new line only."""
    text = "😀中 %a 中 %a\r\né😀 %a"
    first, second, third = columns
    assert semantic_tokens(text, SNIPPETS, encoding) == [
        0, first, 2, MARKER_TYPE, 0,
        0, second - first, 2, MARKER_TYPE, 0,
        1, third, 2, MARKER_TYPE, 0,
    ]  # fmt: skip


def test_a_lone_surrogate_is_one_utf16_unit_and_three_utf8_bytes() -> None:
    text = "\ud800 %a"
    assert semantic_tokens(text, SNIPPETS, "utf-16")[:2] == [0, 2]
    assert semantic_tokens(text, SNIPPETS, "utf-8")[:2] == [0, 4]


def test_nothing_configured_means_no_token_not_even_an_escape() -> None:
    assert semantic_tokens("%%a %a\n%a", {}, "utf-16") == []
    assert semantic_tokens("no marker at all\n", SNIPPETS, "utf-16") == []


@pytest.mark.parametrize("characters", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("table", [dict, SnippetTable])
def test_windows_change_no_token(characters: int, table: type[dict[str, str]]) -> None:
    """Cut into windows anywhere a cut may fall (between the CR and the LF of a CRLF
    none may: it is one line break), the text has the same tokens, counted from the token
    before across windows, and through windows without a marker."""
    text = "ab \r\n\r\n%a \r\n %a x\r\n\r\n(((%a %%a\r" + "é " * 9 + "%a\r\n" + " " * 20 + "%a"
    with windows_of(characters):
        assert semantic_tokens(text, table(SNIPPETS), "utf-16") == [
            2, 0, 2, MARKER_TYPE, 0,
            1, 1, 2, MARKER_TYPE, 0,
            2, 3, 2, MARKER_TYPE, 0,
            0, 3, 3, ESCAPE_TYPE, 0,
            1, 18, 2, MARKER_TYPE, 0,
            1, 20, 2, MARKER_TYPE, 0,
        ]  # fmt: skip


def test_a_large_text_comes_in_chunks_of_a_bounded_size() -> None:
    """A worker thread computes the tokens of a large text a chunk at a time: what each
    chunk costs holds the GIL (and other sessions' answers) that long."""
    text = "x %a y " * 150_000  # a megabyte, 150,000 markers
    chunks = list(token_chunks(text, SNIPPETS, "utf-16", 0, None))
    assert sum(map(len, chunks)) == 5 * 150_000
    assert max(map(len, chunks)) <= 5 * 16_384 // 3


def test_the_chunks_are_the_tokens() -> None:
    text = "%a x\n" * 3000 + "%%a\r\n" * 3000
    chunks = list(token_chunks(text, SNIPPETS, "utf-8", 0, None))
    assert len(chunks) > 1
    assert [n for chunk in chunks for n in chunk] == reference_tokens(text, SNIPPETS, "utf-8")


def test_a_document_and_its_text_have_the_same_tokens() -> None:
    text = "中 %a\r\n%%a"
    document = Document(uri="file:///p.md", text=text)
    assert semantic_tokens(document, SNIPPETS, "utf-16") == semantic_tokens(
        text, SNIPPETS, "utf-16"
    )


def test_a_large_tables_unknown_names_are_no_tokens() -> None:
    text = "%use %a %use-mcpx %%u %use-mcp\n%abc (%a) %b.c %x.y"
    with large_table_patterns():
        assert semantic_tokens(text, SNIPPETS, "utf-16") == [
            0, 5, 2, MARKER_TYPE, 0,
            0, 13, 3, ESCAPE_TYPE, 0,
            0, 4, 8, MARKER_TYPE, 0,
            1, 6, 2, MARKER_TYPE, 0,
            0, 9, 4, MARKER_TYPE, 0,
        ]  # fmt: skip
        assert_same(text, SNIPPETS, "utf-16")


# --------------------------------------------------------------------------- against the walk


@settings(max_examples=examples(400))
@given(
    pieces=st.lists(st.sampled_from(TEXT_PIECES), max_size=40),
    encoding=st.sampled_from(ENCODINGS),
    characters=st.sampled_from([None, 1, 3, 7]),
    large_table=st.booleans(),
)
def test_tokens_are_those_of_a_walk_from_the_start(
    pieces: list[str], encoding: Encoding, characters: int | None, large_table: bool
) -> None:
    text = "".join(pieces)
    with windows_of(characters):
        if large_table:
            with large_table_patterns():
                assert_same(text, SNIPPETS, encoding)
        else:
            assert_same(text, SnippetTable(SNIPPETS), encoding)


@settings(max_examples=examples(300))
@given(
    case=prompts_and_snippets(),
    encoding=st.sampled_from(ENCODINGS),
    characters=st.sampled_from([None, 1, 4]),
    line_break=st.sampled_from(LINE_BREAKS),
)
def test_tokens_of_any_table_are_those_of_a_walk(
    case: tuple[str, dict[str, str]], encoding: Encoding, characters: int | None, line_break: str
) -> None:
    text, snippets = case
    with windows_of(characters):
        assert_same(text.replace(" ", line_break), snippets, encoding)


@settings(max_examples=examples(200))
@given(
    pieces=st.lists(st.sampled_from(TEXT_PIECES), max_size=30),
    encoding=st.sampled_from(ENCODINGS),
    data=st.data(),
)
def test_range_tokens_are_those_of_a_walk(
    pieces: list[str], encoding: Encoding, data: st.DataObject
) -> None:
    text = "".join(pieces)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    expected = reference_tokens(text, SNIPPETS, encoding, start, end)
    assert semantic_tokens(text, SNIPPETS, encoding, start, end) == expected


def test_long_texts_against_the_walk() -> None:
    """Texts of thousands of pieces: many windows, each kind of piece at each cut."""
    rng = random.Random(4242)
    for round_ in range(sized(40)):
        text = "".join(rng.choices(TEXT_PIECES, k=rng.randint(500, 4_000)))
        assert_same(text, SNIPPETS, ENCODINGS[round_ % 3])
