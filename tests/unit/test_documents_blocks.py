"""Documents kept as blocks of lines: incremental edits against re-splitting the whole text.

A ``Document`` re-splits only the blocks an edit touches. Whatever the edits, it must
answer exactly as a document built from scratch from the same text: the same lines (split
at ``\\n``, ``\\r\\n``, ``\\r`` only), the same positions in every encoding, the same
clamping. Tiny blocks put a block boundary next to nearly every edit.
"""

from __future__ import annotations

import random
import sys
import tracemalloc
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_snippets_lsp.core.documents import Document, Encoding, Position

from .conftest import examples, sized

ENCODINGS: list[Encoding] = ["utf-8", "utf-16", "utf-32"]
PIECES = ["a", "bc", " ", "%x", "\n", "\r", "\r\n", "\n\r", "\x85", "\u2028", "😀", "中", "é"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


def assert_same_as_fresh(document: Document, text: str, encoding: Encoding) -> None:
    """Every answer of ``document`` equals that of a document built from ``text``."""
    fresh = Document(uri="file:///fresh", text=text)
    assert document.text == text
    assert document.line_count == fresh.line_count
    for number in range(-1, fresh.line_count + 1):
        assert document.line(number) == fresh.line(number), number
        for character in (-1, 0, 1, 2, 3, 5, 99):
            position = Position(number, character)
            assert document.offset_at(position, encoding) == fresh.offset_at(position, encoding)
            assert document.text_before(position, encoding) == fresh.text_before(position, encoding)
            assert document.contains(position) == fresh.contains(position)
    for offset in range(-1, len(text) + 2):
        assert document.position_at(offset, encoding) == fresh.position_at(offset, encoding)


def lsp_position(text: str, offset: int, encoding: Encoding) -> Position:
    """The position a client would send for ``offset`` (computed on a fresh document)."""
    return Document(uri="file:///p", text=text).position_at(offset, encoding)


@st.composite
def edit_sessions(
    draw: st.DrawFn,
) -> tuple[str, int, Encoding, list[tuple[float, float, str]]]:
    text = draw(TEXTS)
    block_chars = draw(st.sampled_from([2, 3, 4, 7, 16]))
    encoding = draw(st.sampled_from(ENCODINGS))
    edits = draw(
        st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), TEXTS), min_size=1, max_size=10)
    )
    return text, block_chars, encoding, edits


@settings(max_examples=examples(400), deadline=None)
@given(session=edit_sessions())
def test_incremental_edits_equal_re_splitting_the_whole_text(
    session: tuple[str, int, Encoding, list[tuple[float, float, str]]],
) -> None:
    text, block_chars, encoding, edits = session
    document = Document(uri="file:///t", text=text, block_chars=block_chars)
    assert_same_as_fresh(document, text, encoding)
    for fraction_a, fraction_b, new in edits:
        a = int(fraction_a * len(text))
        b = int(fraction_b * len(text))
        start = lsp_position(text, a, encoding)
        end = lsp_position(text, b, encoding)
        # What the position names (a CR/LF pair cannot be split by a position).
        fresh = Document(uri="file:///f", text=text)
        a, b = sorted((fresh.offset_at(start, encoding), fresh.offset_at(end, encoding)))
        document.apply_change(new, start, end, encoding)
        text = text[:a] + new + text[b:]
        assert_same_as_fresh(document, text, encoding)


@pytest.mark.parametrize("block_chars", [2, 3, 4, 16])
@pytest.mark.parametrize(
    ("text", "start", "end", "new", "expected", "lines"),
    [
        pytest.param("a\rb", Position(1, 0), Position(1, 0), "\n", "a\r\nb", 2,
                     id="lf-after-a-lone-cr-joins-into-crlf"),
        pytest.param("a\r\nb", Position(1, 0), Position(1, 0), "\r", "a\r\n\rb", 3,
                     id="cr-after-crlf-is-a-new-line"),
        pytest.param("a\r", Position(1, 0), Position(1, 0), "\n", "a\r\n", 2,
                     id="lf-after-a-final-cr"),
        pytest.param("a\rx\nb", Position(1, 0), Position(1, 1), "", "a\r\nb", 2,
                     id="deleting-between-cr-and-lf-joins-them"),
        pytest.param("a\r\nb", Position(0, 1), Position(1, 0), "\r", "a\rb", 2,
                     id="replacing-a-crlf-by-a-cr"),
        pytest.param("ab\ncd\r", Position(1, 2), Position(1, 2), "x", "ab\ncdx\r", 3,
                     id="typing-before-a-final-cr"),
        pytest.param("a\rb\rc\rd", Position(1, 0), Position(3, 0), "", "a\rd", 2,
                     id="deleting-whole-blocks"),
        pytest.param("a\n\nb", Position(1, 0), Position(1, 0), "\r", "a\n\r\nb", 3,
                     id="cr-before-a-lone-lf-joins-into-crlf"),
    ],
)  # fmt: skip
def test_edits_that_make_or_break_a_crlf_at_a_block_boundary(
    block_chars: int,
    text: str,
    start: Position,
    end: Position,
    new: str,
    expected: str,
    lines: int,
) -> None:
    document = Document(uri="file:///t", text=text, block_chars=block_chars)
    document.apply_change(new, start, end, "utf-16")
    assert document.text == expected
    assert document.line_count == lines
    assert_same_as_fresh(document, expected, "utf-16")


def test_many_keystrokes_in_a_long_document_keep_it_exact() -> None:
    """Typing and deleting all over a long document with small blocks."""
    rng = random.Random(77)
    lines = [f"line {n} %x" + rng.choice(["", "\r"]) for n in range(2_000)]
    text = "\n".join(lines)
    document = Document(uri="file:///t", text=text, block_chars=64)
    for _ in range(sized(500)):
        number = rng.randrange(document.line_count)
        line = document.line(number)
        column = rng.randint(0, len(line))
        new = rng.choice(["x", "", "\n", "\r", "\r\n", "中"])
        width = rng.choice([0, 0, 1, 3])
        start = Position(number, column)
        end = Position(number + rng.choice([0, 0, 1]), column + width)
        fresh = Document(uri="file:///f", text=text)
        a = fresh.offset_at(start, "utf-16")
        b = fresh.offset_at(end, "utf-16")
        a, b = min(a, b), max(a, b)
        document.apply_change(new, start, end, "utf-16")
        text = text[:a] + new + text[b:]
        assert document.text == text
        assert document.line_count == Document(uri="file:///f", text=text).line_count
    assert_same_as_fresh(document, text, "utf-16")


# --------------------------------------------------------------------------- memory


def _peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("line", "bound"),
    [
        pytest.param("line %x\n", 2, id="short-lines"),
        pytest.param("x" * 38 + "\r\n", 2, id="crlf-lines"),
        pytest.param("\n", 4, id="only-line-breaks"),
    ],
)
def test_a_document_holds_a_few_times_its_size_and_an_edit_a_block(line: str, bound: int) -> None:
    """Lines cost two bytes each in the index, and an edit works on one block of ~16k
    characters (a list of offsets cost 36 bytes a line, and every edit copied the whole
    text and rebuilt that list)."""
    lines = sized(200_000)
    text = line * lines
    size = sys.getsizeof(text)
    documents: list[Document] = []
    assert _peak(lambda: documents.append(Document(uri="file:///t", text=text))) < bound * size
    document = documents[0]
    middle = Position(lines // 2, 1)
    assert _peak(lambda: document.apply_change("x", middle, middle, "utf-16")) < 128 * 1024
    assert document.line(lines // 2) == line.rstrip("\r\n")[:1] + "x" + line.rstrip("\r\n")[1:]


@pytest.mark.parametrize(
    ("length", "size"),
    [
        pytest.param(0, 2, id="empty"),
        pytest.param((1 << 16) - 1, 2, id="largest-two-byte-offset"),
        pytest.param(1 << 16, 4, id="smallest-four-byte-offset"),
        pytest.param((1 << 32) - 1, 4, id="largest-four-byte-offset"),
        pytest.param(1 << 32, 8, id="eight-bytes-beyond"),
    ],
)
def test_line_offsets_take_the_smallest_array_that_holds_them(length: int, size: int) -> None:
    """A block's line offsets cost 2 bytes a line while the block is under 64k
    characters, 4 beyond, 8 beyond 4G: the smallest unsigned type that holds every
    offset up to the block's length."""
    from array import array  # noqa: PLC0415

    from pi_snippets_lsp.core.documents import _offset_type

    offsets = array(_offset_type(length), [0, length])
    assert offsets.itemsize == size
    assert offsets[-1] == length


# --------------------------------------------------------------------------- the blocks


def block_lengths(document: Document) -> list[int]:
    """The length of each block (read from the document's own split, the structure these
    tests are about: nothing else shows how the text is cut)."""
    return [len(block) for block in document._blocks]


@pytest.mark.parametrize(
    ("text", "size", "lengths"),
    [
        # A cut is at the end of the first line break at or after `size` characters
        # into the block...
        pytest.param("abc\n" * 4, 4, [8, 8], id="at-the-first-break-from-size-on"),
        pytest.param("ab\n" * 6, 4, [6, 6, 6], id="a-break-before-size-is-passed"),
        # ... when at least size // 2 characters follow it.
        pytest.param("abcdef\nabc", 6, [7, 3], id="half-the-size-left-is-cut"),
        pytest.param("abcdef\nab", 6, [9], id="less-than-half-left-stays"),
        pytest.param("abc\na", 4, [5], id="one-character-left-stays"),
        pytest.param("abcde\nab", 5, [6, 2], id="half-an-odd-size-rounds-down"),
        # The smallest block size is 2.
        pytest.param("ab\ncd\nef", 1, [3, 3, 2], id="a-size-below-2-is-2"),
        pytest.param("ab\ncd\nef", 3, [6, 2], id="size-3"),
        pytest.param("ab\r\ncd", 2, [4, 2], id="a-crlf-is-never-cut"),
    ],
)  # fmt: skip
def test_a_text_is_cut_into_blocks_at_line_ends_of_about_the_block_size(
    text: str, size: int, lengths: list[int]
) -> None:
    document = Document(uri="file:///t", text=text, block_chars=size)
    assert block_lengths(document) == lengths
    assert_same_as_fresh(document, text, "utf-16")


def test_a_document_of_one_block_keeps_the_clients_string() -> None:
    """No copy of a text that is one block (most documents): the document holds the
    string the client sent, itself."""
    text = "line %x\n" * 100
    document = Document(uri="file:///t", text=text)
    assert document.text is text
    document.text = text[:-1]
    assert document.text == text[:-1]


@pytest.mark.parametrize(
    ("text", "line", "lines"),
    [
        # "ab\r" | "cd": an LF typed at the start of the second block joins the CR that
        # ends the first into one line break.
        pytest.param("ab\rcd", 1, 2, id="second-block"),
        pytest.param("ab\rcd\ref\rgh", 3, 4, id="fourth-block"),
        pytest.param("ab\ncd\ref", 2, 3, id="after-a-block-ending-in-lf-and-cr"),
    ],
)
def test_an_lf_typed_after_a_cr_that_ends_a_block_makes_one_line_break(
    text: str, line: int, lines: int
) -> None:
    document = Document(uri="file:///t", text=text, block_chars=2)
    assert len(block_lengths(document)) > 1
    at = Position(line, 0)
    offset = document.offset_at(at, "utf-16")
    document.apply_change("\n", at, at, "utf-16")
    expected = text[:offset] + "\n" + text[offset:]
    assert document.line_count == lines
    assert_same_as_fresh(document, expected, "utf-16")


@pytest.mark.parametrize(
    ("line", "columns"),
    [
        pytest.param(0, 7, id="first-block-takes-in-the-next"),
        pytest.param(1, 7, id="middle-block-takes-in-the-next"),
        pytest.param(2, 7, id="second-to-last-block-takes-in-the-last"),
        pytest.param(3, 7, id="last-block-is-taken-in-by-the-one-before"),
    ],
)
def test_a_block_an_edit_leaves_under_half_the_size_takes_in_a_neighbour(
    line: int, columns: int
) -> None:
    """Blocks never dwindle below half the block size (so they never become a line
    each): an edit that leaves less merges the block with the next, or, for the last
    block, with the one before."""
    text = "abcdefg\n" * 3 + "abcdefg"
    document = Document(uri="file:///t", text=text, block_chars=7)
    assert block_lengths(document) == [8, 8, 8, 7]
    start, end = Position(line, 0), Position(line, columns)
    a, b = document.offset_at(start, "utf-16"), document.offset_at(end, "utf-16")
    document.apply_change("", start, end, "utf-16")
    expected = text[:a] + text[b:]
    assert len(block_lengths(document)) == 3
    assert min(block_lengths(document)) >= 7 // 2
    assert_same_as_fresh(document, expected, "utf-16")


@settings(max_examples=examples(300), deadline=None)
@given(session=edit_sessions())
def test_no_block_of_a_document_of_several_is_under_half_the_block_size(
    session: tuple[str, int, Encoding, list[tuple[float, float, str]]],
) -> None:
    text, block_chars, encoding, edits = session
    document = Document(uri="file:///t", text=text * 4, block_chars=block_chars)
    for start_at, end_at, new in edits:
        current = document.text
        a, b = sorted((round(start_at * len(current)), round(end_at * len(current))))
        start = lsp_position(current, a, encoding)
        end = lsp_position(current, b, encoding)
        document.apply_change(new, start, end, encoding)
        lengths = block_lengths(document)
        if len(lengths) > 1:
            assert min(lengths) >= max(2, block_chars) // 2, lengths
