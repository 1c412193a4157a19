"""Documents the LSP way: line splitting, positions in client code units, edits.

docs/lsp.md, "Position encodings" (positions in the negotiated encoding; lines split only at
``\\n``, ``\\r\\n`` and ``\\r``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_snippets_lsp.core.documents import (
    Document,
    Encoding,
    Position,
    code_units,
    index_from_units,
    line_starts,
    units_length,
)

from .conftest import examples

ENCODINGS: list[Encoding] = ["utf-8", "utf-16", "utf-32"]

# --------------------------------------------------------------------------- lines


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        pytest.param("", [""], id="empty"),
        pytest.param("abc", ["abc"], id="one-line"),
        pytest.param("a\nb", ["a", "b"], id="lf"),
        pytest.param("a\r\nb", ["a", "b"], id="crlf"),
        pytest.param("a\rb", ["a", "b"], id="lone-cr"),
        pytest.param("a\n", ["a", ""], id="trailing-lf-opens-a-line"),
        pytest.param("a\r\n\r\nb", ["a", "", "b"], id="blank-crlf-line"),
        pytest.param("\r\r\n", ["", "", ""], id="cr-then-crlf"),
        pytest.param("\n\r", ["", "", ""], id="lf-then-cr-is-two-breaks"),
        pytest.param("a\r\n\nb", ["a", "", "b"], id="crlf-then-lf"),
    ],
)
def test_lines_split_at_lf_crlf_and_cr(text: str, lines: list[str]) -> None:
    document = Document(uri="file:///t", text=text)
    assert document.line_count == len(lines)
    assert [document.line(n) for n in range(document.line_count)] == lines


@pytest.mark.parametrize(
    "char",
    [pytest.param(c, id=f"U+{ord(c):04X}") for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"],
)
def test_python_line_breaks_that_lsp_does_not_know_do_not_split(char: str) -> None:
    text = f"a{char}b"
    assert len(text.splitlines()) == 2  # what str.splitlines (and pygls) would do
    document = Document(uri="file:///t", text=text)
    assert document.line_count == 1
    assert document.line(0) == text
    assert line_starts(text + "\nc") == [0, 4]


def test_an_edit_on_line_1_after_a_nel_lands_on_the_real_line_1() -> None:
    # pygls 2.1.1 gives "a\x85Xb\nc" here: its lines come from str.splitlines().
    document = Document(uri="file:///t", text="a\x85b\nc")
    document.apply_change("X", Position(1, 0), Position(1, 0))
    assert document.text == "a\x85b\nXc"


@pytest.mark.parametrize(
    "number",
    [pytest.param(-1, id="negative"), pytest.param(2, id="past-the-end")],
)
def test_a_line_that_does_not_exist_is_empty(number: int) -> None:
    assert Document(uri="file:///t", text="a\nb").line(number) == ""


# --------------------------------------------------------------------------- code units


@pytest.mark.parametrize(
    ("char", "utf8", "utf16", "utf32"),
    [
        pytest.param("a", 1, 1, 1, id="ascii"),
        pytest.param("\x7f", 1, 1, 1, id="last-one-byte"),
        pytest.param("\x80", 2, 1, 1, id="first-two-bytes"),
        pytest.param("\u07ff", 2, 1, 1, id="last-two-bytes"),
        pytest.param("\u0800", 3, 1, 1, id="first-three-bytes"),
        pytest.param("é", 2, 1, 1, id="latin"),
        pytest.param("\u0301", 2, 1, 1, id="combining-accent"),
        pytest.param("中", 3, 1, 1, id="cjk"),
        pytest.param("\uffff", 3, 1, 1, id="last-bmp"),
        pytest.param("😀", 4, 2, 1, id="emoji"),
        pytest.param("\U00010000", 4, 2, 1, id="first-astral"),
    ],
)
def test_code_units_per_character(char: str, utf8: int, utf16: int, utf32: int) -> None:
    assert code_units(char, "utf-8") == utf8 == len(char.encode("utf-8"))
    assert code_units(char, "utf-16") == utf16 == len(char.encode("utf-16-le")) // 2
    assert code_units(char, "utf-32") == utf32


#: One line with an emoji, CJK and a combining character, then the offsets in code
#: units of each character's start, per encoding.
LINE = "😀中e\u0301x%"
STARTS: dict[Encoding, list[int]] = {
    "utf-16": [0, 2, 3, 4, 5, 6, 7],
    "utf-8": [0, 4, 7, 8, 10, 11, 12],
    "utf-32": [0, 1, 2, 3, 4, 5, 6],
}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_positions_after_emoji_cjk_and_combining_characters(encoding: Encoding) -> None:
    document = Document(uri="file:///t", text="first\n" + LINE)
    assert units_length(LINE, encoding) == STARTS[encoding][-1]
    for index, units in enumerate(STARTS[encoding]):
        assert document.offset_at(Position(1, units), encoding) == 6 + index
        assert document.position_at(6 + index, encoding) == Position(1, units)
        assert index_from_units(LINE, units, encoding) == index


@pytest.mark.parametrize(
    ("encoding", "character", "index"),
    [
        pytest.param("utf-16", 1, 0, id="utf-16-inside-a-surrogate-pair"),
        pytest.param("utf-8", 1, 0, id="utf-8-inside-an-emoji-1"),
        pytest.param("utf-8", 3, 0, id="utf-8-inside-an-emoji-3"),
        pytest.param("utf-8", 5, 1, id="utf-8-inside-cjk"),
    ],
)
def test_a_position_inside_a_character_rounds_down_to_its_start(
    encoding: Encoding, character: int, index: int
) -> None:
    document = Document(uri="file:///t", text=LINE)
    assert document.offset_at(Position(0, character), encoding) == index


def test_the_percent_after_an_emoji_lands_exactly() -> None:
    document = Document(uri="file:///t", text="😀 %use")
    before, line_start = document.text_before(Position(0, 7), "utf-16")
    assert (before, line_start) == ("😀 %use", 0)
    before, _ = document.text_before(Position(0, 4), "utf-16")
    assert before == "😀 %"


def test_text_before_is_the_cursor_lines_prefix_and_the_line_start() -> None:
    document = Document(uri="file:///t", text="one\r\ntwo %a\nthree")
    assert document.text_before(Position(1, 6), "utf-16") == ("two %a", 5)
    assert document.text_before(Position(1, 99), "utf-16") == ("two %a", 5)
    assert document.text_before(Position(2, 0), "utf-16") == ("", 12)


# --------------------------------------------------------------------------- clamping


@pytest.mark.parametrize(
    ("position", "expected"),
    [
        pytest.param(Position(3, 0), ("", 10), id="line-past-the-end-is-end-of-text"),
        pytest.param(Position(99, 4), ("", 10), id="far-line-past-the-end"),
        pytest.param(Position(-1, 2), ("", 0), id="negative-line-is-start-of-text"),
        pytest.param(Position(1, -3), ("", 4), id="negative-character-is-line-start"),
    ],
)
def test_text_before_an_out_of_range_position_is_clamped(
    position: Position, expected: tuple[str, int]
) -> None:
    document = Document(uri="file:///t", text="abc\nde\nfgh")
    assert document.text_before(position, "utf-16") == expected


@pytest.mark.parametrize(
    ("position", "offset"),
    [
        pytest.param(Position(0, 99), 3, id="character-past-the-line-is-its-end"),
        pytest.param(Position(1, 99), 6, id="character-past-a-crlf-line-stops-before-cr"),
        pytest.param(Position(2, 99), 11, id="character-past-the-last-line"),
        pytest.param(Position(3, 0), 11, id="line-past-the-end-is-end-of-text"),
        pytest.param(Position(99, 5), 11, id="far-line-past-the-end"),
        pytest.param(Position(-1, 3), 0, id="negative-line-is-start"),
        pytest.param(Position(1, -4), 4, id="negative-character-is-line-start"),
    ],
)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_out_of_range_positions_are_clamped(
    position: Position, offset: int, encoding: Encoding
) -> None:
    document = Document(uri="file:///t", text="abc\nde\r\nfgh")
    assert document.offset_at(position, encoding) == offset


@pytest.mark.parametrize(
    ("offset", "position"),
    [
        pytest.param(-5, Position(0, 0), id="negative-offset"),
        pytest.param(99, Position(2, 3), id="offset-past-the-end"),
        pytest.param(3, Position(0, 3), id="at-a-line-break"),
        pytest.param(4, Position(1, 0), id="after-a-line-break"),
        pytest.param(7, Position(1, 2), id="between-cr-and-lf-is-the-line-end"),
        pytest.param(8, Position(2, 0), id="after-crlf"),
    ],
)
def test_position_of_an_offset(offset: int, position: Position) -> None:
    document = Document(uri="file:///t", text="abc\nde\r\nfgh")
    assert document.position_at(offset, "utf-16") == position


@pytest.mark.parametrize(
    ("position", "inside"),
    [
        pytest.param(Position(0, 0), True, id="start"),
        pytest.param(Position(1, 99), True, id="character-is-clamped-anyway"),
        pytest.param(Position(2, 0), False, id="line-past-the-end"),
        pytest.param(Position(-1, 0), False, id="negative-line"),
        pytest.param(Position(0, -1), False, id="negative-character"),
    ],
)
def test_contains_names_existing_lines(position: Position, inside: bool) -> None:
    assert Document(uri="file:///t", text="a\nb").contains(position) is inside


# --------------------------------------------------------------------------- edits


def test_a_change_without_a_range_replaces_the_whole_text() -> None:
    document = Document(uri="file:///t", text="a\nb\nc")
    document.apply_change("x\ry")
    assert document.text == "x\ry"
    assert [document.line(0), document.line(1)] == ["x", "y"]
    assert document.line_count == 2


def test_a_document_keeps_its_uri_version_and_language() -> None:
    document = Document(uri="file:///t.md", text="x", version=7, language_id="markdown")
    assert (document.uri, document.version, document.language_id) == (
        "file:///t.md",
        7,
        "markdown",
    )
    assert repr(document) == "Document(uri='file:///t.md', version=7, lines=1)"


def test_a_range_without_an_encoding_counts_utf16_code_units() -> None:
    """UTF-16 is LSP's default position encoding: an edit given no encoding counts in it."""
    document = Document(uri="file:///t", text="😀ab")
    document.apply_change("X", Position(0, 2), Position(0, 3))
    assert document.text == "😀Xb"


def test_a_reversed_range_is_applied_as_the_same_range() -> None:
    document = Document(uri="file:///t", text="abcdef")
    document.apply_change("X", Position(0, 4), Position(0, 1))
    assert document.text == "aXef"


@pytest.mark.parametrize(
    ("text", "start", "end", "new", "expected", "lines"),
    [
        pytest.param("a\r", Position(1, 0), Position(1, 0), "\nb", "a\r\nb", 2,
                     id="lf-after-cr-joins-into-crlf"),
        pytest.param("a\r\nb", Position(0, 1), Position(1, 0), "", "ab", 1,
                     id="deleting-a-crlf-joins-lines"),
        pytest.param("😀x", Position(0, 2), Position(0, 3), "中", "😀中", 1,
                     id="replace-after-emoji"),
        pytest.param("a\nb", Position(0, 1), Position(0, 1), "\u2028\x85", "a\u2028\x85\nb", 2,
                     id="inserting-unicode-breaks-adds-no-line"),
    ],
)  # fmt: skip
def test_incremental_changes(
    text: str, start: Position, end: Position, new: str, expected: str, lines: int
) -> None:
    document = Document(uri="file:///t", text=text)
    document.apply_change(new, start, end, "utf-16")
    assert document.text == expected
    assert document.line_count == lines


# --------------------------------------------------------------------------- property

ALPHABET = st.sampled_from(
    ["a", "b", " ", "%", "\n", "\r", "\r\n", "\x85", "\u2028", "\x0b", "😀", "中", "\u0301"]
)
TEXTS = st.lists(ALPHABET, max_size=20).map("".join)


def reference_position(text: str, offset: int, encoding: Encoding) -> Position:
    """The LSP position of ``offset``, computed by walking the text once."""
    line = 0
    column_start = 0
    i = 0
    while i < offset:
        if text[i] == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            i += 2
            line += 1
            column_start = i
        elif text[i] in "\r\n":
            i += 1
            line += 1
            column_start = i
        else:
            i += 1
    units = sum(
        {"utf-8": len(c.encode("utf-8")), "utf-16": len(c.encode("utf-16-le")) // 2}.get(
            encoding, 1
        )
        for c in text[column_start:offset]
    )
    return Position(line, units)


def addressable(text: str, offset: int) -> bool:
    """LSP cannot name the point between the CR and the LF of a CRLF."""
    return not (0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n")


@st.composite
def edit_sessions(draw: st.DrawFn) -> tuple[str, Encoding, list[tuple[float, float, str]]]:
    encoding = draw(st.sampled_from(ENCODINGS))
    edits = draw(
        st.lists(
            st.tuples(st.floats(0, 1), st.floats(0, 1), TEXTS),
            min_size=1,
            max_size=8,
        )
    )
    return draw(TEXTS), encoding, edits


@settings(max_examples=examples(300))
@given(session=edit_sessions())
def test_incremental_edits_through_positions_equal_the_same_edits_on_a_string(
    session: tuple[str, Encoding, list[tuple[float, float, str]]],
) -> None:
    text, encoding, edits = session
    document = Document(uri="file:///t", text=text)
    plain = text
    for fraction_a, fraction_b, new in edits:
        offsets = [o for o in range(len(plain) + 1) if addressable(plain, o)]
        a = offsets[int(fraction_a * (len(offsets) - 1))]
        b = offsets[int(fraction_b * (len(offsets) - 1))]
        a, b = min(a, b), max(a, b)
        start = reference_position(plain, a, encoding)
        end = reference_position(plain, b, encoding)
        assert document.position_at(a, encoding) == start
        assert document.offset_at(start, encoding) == a
        document.apply_change(new, start, end, encoding)
        plain = plain[:a] + new + plain[b:]
        assert document.text == plain
        assert document.line_count == reference_position(plain, len(plain), encoding).line + 1


@pytest.mark.parametrize(
    ("start", "end"),
    [
        pytest.param(Position(0, 1), None, id="no-end"),
        pytest.param(None, Position(0, 1), id="no-start"),
    ],
)
def test_a_change_with_only_one_end_of_a_range_replaces_the_whole_text(
    start: Position | None, end: Position | None
) -> None:
    """A change without a whole range is a full-text change (LSP: a change without
    ``range`` is the new text of the document)."""
    document = Document(uri="file:///t", text="old text\nsecond line")
    document.apply_change("new", start, end)
    assert document.text == "new"
