"""The one text rule for lone surrogates (``core.surrogates``): found where they are,
written out as U+FFFD, every other character kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_snippets_lsp.core.surrogates import (
    REPLACEMENT,
    first_lone_surrogate,
    without_lone_surrogates,
)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        pytest.param("", "", id="empty"),
        pytest.param("plain ascii", "plain ascii", id="ascii"),
        pytest.param("é中😀", "é中😀", id="any-that-encodes"),
        pytest.param("a\ud800b", "a\ufffdb", id="high"),
        pytest.param("\udfff", "\ufffd", id="low-alone"),
        pytest.param("\ud83d\ude00", "\ufffd\ufffd", id="a-pair-in-a-str-is-two-lone-ones"),
        pytest.param("é\udc80中\ud800", "é\ufffd中\ufffd", id="among-others"),
        pytest.param("\ud7ff\ue000", "\ud7ff\ue000", id="the-neighbours-stay"),
    ],
)
def test_each_lone_surrogate_is_written_as_the_replacement_character(
    text: str, written: str
) -> None:
    assert REPLACEMENT == "\ufffd"
    assert without_lone_surrogates(text) == written
    without_lone_surrogates(text).encode("utf-8")  # always encodes


def test_a_text_that_encodes_is_returned_as_it_is() -> None:
    text = "é" * 10
    assert without_lone_surrogates(text) is text


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("", None),
        ("abc é😀", None),
        ("ab\ud800", (2, "\ud800")),
        ("\udc00x\ud800", (0, "\udc00")),
        ("\ud7ff\ue000\udfff", (2, "\udfff")),
    ],
)
def test_the_first_lone_surrogate(text: str, found: tuple[int, str] | None) -> None:
    match = first_lone_surrogate(text)
    assert (None if match is None else (match.start(), match.group())) == found


@given(st.text(st.characters(codec=None, categories=None)))
def test_only_surrogates_change(text: str) -> None:
    written = without_lone_surrogates(text)
    assert len(written) == len(text)
    for before, after in zip(text, written, strict=True):
        is_surrogate = "\ud800" <= before <= "\udfff"
        assert after == (REPLACEMENT if is_surrogate else before)
