"""A snippet's one-line preview, measured as Pi measures it.

docs/grammar.md, "Previews". Pi limits the preview to 80 UTF-16 code units (JavaScript's
``length``) and cuts whole code points. ``preview`` remembers its answers; each test here
starts with an empty cache, so it measures the rule, not an answer remembered from an
earlier test (mutation testing runs every test in a process that already ran them all).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pi_snippets_lsp.core.snippet import Snippet, preview


@pytest.fixture(autouse=True)
def _fresh_previews() -> Iterator[None]:
    preview.cache_clear()
    yield
    preview.cache_clear()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("x" * 80, "x" * 80, id="80-units-kept"),
        pytest.param("x" * 81, "x" * 79 + "…", id="81-units-cut"),
        pytest.param("x" * 41, "x" * 41, id="41-units-kept"),
        pytest.param("x" * 79 + "\uffff", "x" * 79 + "\uffff", id="u+ffff-is-one-unit"),
        pytest.param("x" * 79 + "\U00010000", "x" * 79 + "…", id="u+10000-is-two-units"),
        pytest.param("\U00010000" * 40, "\U00010000" * 40, id="40-astral-are-80-units"),
        pytest.param("\U00010000" * 41, "\U00010000" * 41 + "…", id="cut-at-79-code-points"),
        pytest.param("\ud800" * 80, "\ud800" * 80, id="a-lone-surrogate-is-one-unit"),
        pytest.param("\ud800" * 81, "\ud800" * 79 + "…", id="81-lone-surrogates-cut"),
    ],
)
def test_the_preview_limit_is_80_utf16_units(value: str, expected: str) -> None:
    assert preview(value) == expected


def test_a_snippet_shows_its_values_preview() -> None:
    snippet = Snippet("s", "one\n two " + "z" * 100, "src")
    assert snippet.preview == ("one two " + "z" * 100)[:79] + "…"
    assert snippet.to_json() == {
        "name": "s",
        "value": snippet.value,
        "preview": snippet.preview,
        "source": "src",
    }
