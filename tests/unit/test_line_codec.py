"""The C-speed position conversions (``line_codec``) answer what ``documents``' own do
(docs/lsp.md, "Positions")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.documents import Encoding, index_from_units, units_length
from pi_snippets_lsp.core.line_codec import index_and_units, index_at, units_of, units_of_each

from .conftest import examples

CHARS = ["a", "é", "中", "😀", "\ud800", "\udc00", "\udbff", "%", " "]


@settings(max_examples=examples(500))
@given(
    line=st.lists(st.sampled_from(CHARS), max_size=12).map("".join),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
    data=st.data(),
)
def test_the_fast_conversions_agree_with_the_plain_ones(
    line: str, encoding: Encoding, data: st.DataObject
) -> None:
    length = units_of(line, encoding)
    assert length == units_length(line, encoding)
    assert type(length) is int  # a column in JSON: 3, never 3.0
    units = data.draw(st.integers(-2, units_length(line, encoding) + 2))
    index = index_from_units(line, units, encoding)
    assert index_at(line, units, encoding) == index
    # With the index, the units before it: the column of what is found there.
    found, before = index_and_units(line, units, encoding)
    assert (found, before) == (index, units_length(line[:index], encoding))
    assert type(before) is int


@settings(max_examples=examples(300))
@given(
    texts=st.lists(st.lists(st.sampled_from(CHARS), max_size=6).map("".join), max_size=5),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_the_lengths_of_many_texts_are_each_ones_length(
    texts: list[str], encoding: Encoding
) -> None:
    lengths = units_of_each(texts, encoding)
    assert lengths == [units_length(text, encoding) for text in texts]
    assert all(type(length) is int for length in lengths)


def test_a_position_inside_a_character_rounds_down() -> None:
    assert index_at("a😀b", 2, "utf-16") == 1  # between the halves of the emoji
    assert index_at("a中b", 2, "utf-8") == 1  # inside the UTF-8 sequence
    assert index_at("a中b", 4, "utf-8") == 2
    # ... and the units before it are those of the characters before it.
    assert index_and_units("a😀b", 2, "utf-16") == (1, 1)
    assert index_and_units("a中b", 3, "utf-8") == (1, 1)
    assert index_and_units("a中b", 4, "utf-8") == (2, 4)
    assert index_and_units("a中b", 99, "utf-8") == (3, 5)
