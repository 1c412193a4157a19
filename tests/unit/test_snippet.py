"""A snippet's one-line preview, measured as Pi measures it.

docs/grammar.md, "Previews". Pi limits the preview to 80 UTF-16 code units (JavaScript's
``length``) and cuts whole code points. ``preview`` remembers its answers; each test here
starts with an empty cache, so it measures the rule, not an answer remembered from an
earlier test (mutation testing runs every test in a process that already ran them all).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_snippets_lsp.core import snippet
from pi_snippets_lsp.core.grammar import JS_WHITESPACE
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


WHITESPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")


def reference_collapse(value: str) -> str:
    """REFERENCE: JavaScript whitespace runs collapsed to one space, then trimmed."""
    return WHITESPACE_RUN.sub(" ", value).strip(" ")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(" a \t\n b ", "a b", id="ascii-runs"),
        pytest.param("a\u3000\u00a0b\ufeffc", "a b c", id="javascript-whitespace"),
        pytest.param("a\x1cb\x85c", "a\x1cb\x85c", id="python-only-whitespace-stays"),
        pytest.param("\x1c a  b", "\x1c a b", id="python-only-whitespace-beside-spaces"),
        pytest.param("", "", id="empty"),
    ],
)
def test_whitespace_runs_are_javascripts(value: str, expected: str) -> None:
    assert preview(value) == expected


@given(st.text(alphabet=st.sampled_from([*JS_WHITESPACE, *"ab\x1c\x1f\x85é"]), max_size=40))
def test_the_preview_collapses_as_the_reference(value: str) -> None:
    collapsed = reference_collapse(value)
    assert preview(value) == (collapsed if len(collapsed) <= 80 else collapsed[:79] + "…")


def test_pythons_whitespace_differs_from_javascripts_only_where_it_is_told() -> None:
    """``preview`` splits the Python way when a value holds none of the characters where
    Python's whitespace and JavaScript's differ: those are exactly the listed ones."""
    python = {chr(code) for code in range(0x110000) if chr(code).isspace()}
    assert python ^ set(JS_WHITESPACE) == snippet._SPACES_DIFFER
