"""The C-speed position conversions (``line_codec``) answer what ``documents``' own do
(docs/lsp.md, "Positions")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.documents import Encoding, index_from_units, units_length
from pi_snippets_lsp.core.line_codec import index_at, units_of

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
    assert units_of(line, encoding) == units_length(line, encoding)
    units = data.draw(st.integers(-2, units_length(line, encoding) + 2))
    assert index_at(line, units, encoding) == index_from_units(line, units, encoding)


def test_a_position_inside_a_character_rounds_down() -> None:
    assert index_at("a😀b", 2, "utf-16") == 1  # between the halves of the emoji
    assert index_at("a中b", 2, "utf-8") == 1  # inside the UTF-8 sequence
    assert index_at("a中b", 4, "utf-8") == 2
