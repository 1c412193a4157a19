"""What hovering a marker shows (docs/lsp.md, "Hover"), as text: the snippet's text
exactly as it will be sent, and the file it comes from; or, for an escape, the literal
it is sent as. The LSP session tests (tests/lsp/test_hover.py) check where it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_snippets_lsp.core.documents import Encoding
from pi_snippets_lsp.core.hover import code_span, fence, hover_text, layer_of, marker_on_line
from pi_snippets_lsp.core.markers import Marker
from pi_snippets_lsp.core.snippet import Snippet

USER = Path("/home/me/.pi/agent/settings.json")


def marker(name: str, escape: bool = False, new_text: str = "") -> Marker:
    length = len(name) + (2 if escape else 1)
    return Marker(start=0, end=length, name=name, escape=escape, new_text=new_text)


@pytest.mark.parametrize(
    ("source", "layer"),
    [
        pytest.param(str(USER), "user", id="the-user-file"),
        pytest.param("/work/repo/.pi/settings.json", "project", id="another-file"),
        pytest.param("initializationOptions", "client", id="a-client-layer"),
        pytest.param("workspace/configuration", "client", id="pulled-settings"),
    ],
)
def test_the_layer_a_source_names(source: str, layer: str) -> None:
    assert layer_of(source, USER) == layer


@pytest.mark.parametrize(
    ("text", "ticks"),
    [
        pytest.param("plain", "```", id="no-backticks"),
        pytest.param("a `` b", "```", id="two"),
        pytest.param("a ``` b", "````", id="three"),
        pytest.param("````` and ``` and `", "``````", id="the-longest-run"),
    ],
)
def test_the_fence_is_longer_than_any_backtick_run(text: str, ticks: str) -> None:
    assert fence(text) == ticks


@pytest.mark.parametrize(
    ("text", "span"),
    [
        pytest.param("%sig", "`%sig`", id="plain"),
        pytest.param("a`b", "``a`b``", id="a-backtick-inside"),
        pytest.param("`a", "`` `a ``", id="a-backtick-at-the-start-is-padded"),
        pytest.param("a`", "`` a` ``", id="a-backtick-at-the-end-is-padded"),
        pytest.param("a``b", "```a``b```", id="a-run-of-two"),
    ],
)
def test_a_code_span_shows_any_text_literally(text: str, span: str) -> None:
    assert code_span(text) == span


def test_markdown_hover_shows_the_text_fenced_and_where_it_is_from() -> None:
    snippet = Snippet("sig", "Best regards,\r\n  the `team`", str(USER))
    assert hover_text(marker("sig"), snippet, "user", markdown=True) == (
        "`%sig` expands to:\n\n"
        "```text\nBest regards,\n  the `team`\n```\n\n"
        f"From the user settings file: `{USER}`"
    )


def test_a_text_ending_in_a_line_break_is_not_given_a_second_one() -> None:
    snippet = Snippet("n", "line\n", "/p/.pi/settings.json")
    assert hover_text(marker("n"), snippet, "project", markdown=True) == (
        "`%n` expands to:\n\n```text\nline\n```\n\n"
        "From the project settings file: `/p/.pi/settings.json`"
    )


def test_a_text_with_a_fence_gets_a_longer_one() -> None:
    snippet = Snippet("code", "```py\nx\n```", "initializationOptions")
    text = hover_text(marker("code"), snippet, "client", markdown=True)
    assert text == (
        "`%code` expands to:\n\n````text\n```py\nx\n```\n````\n\n"
        "From the editor's settings: `initializationOptions`"
    )


def test_plain_text_hover_shows_the_text_as_it_is() -> None:
    snippet = Snippet("sig", "Best regards,\r  the team", str(USER))
    assert hover_text(marker("sig"), snippet, "user", markdown=False) == (
        f"%sig expands to:\n\nBest regards,\n  the team\n\nFrom the user settings file: {USER}"
    )


@pytest.mark.parametrize(
    ("markdown", "text"),
    [
        pytest.param(
            True,
            "`%%sig` is escaped: it is sent as the literal `%sig`, not expanded.",
            id="markdown",
        ),
        pytest.param(
            False, "%%sig is escaped: it is sent as the literal %sig, not expanded.", id="plain"
        ),
    ],
)
def test_an_escape_says_what_is_sent(markdown: bool, text: str) -> None:
    escape = marker("sig", escape=True, new_text="%sig")
    configured = Snippet("sig", "Best regards", str(USER))
    assert hover_text(escape, configured, "user", markdown=markdown) == text
    assert hover_text(escape, None, "user", markdown=markdown) == text


LONG = "n" * 300  # a name longer than the first look back (256 characters)
SNIPPETS = {"a": "AAA", "ab": "AB", "a.b": "A.B", "x-1": "X", LONG: "LONG"}


@pytest.mark.parametrize(
    ("line", "character", "encoding", "expected"),
    [
        # expected: (start column, end column, code-point start, end, name, escape, new text)
        pytest.param("x %a y", 3, "utf-16", (2, 4, 2, 4, "a", False, "AAA"), id="on-the-name"),
        pytest.param("x %a y", 2, "utf-16", (2, 4, 2, 4, "a", False, "AAA"), id="on-the-%"),
        pytest.param("x %a y", 4, "utf-16", (2, 4, 2, 4, "a", False, "AAA"), id="right-after"),
        pytest.param("x %a y", 1, "utf-16", None, id="before-it"),
        pytest.param("😀 %ab.", 5, "utf-16", (3, 6, 2, 5, "ab", False, "AB"), id="utf-16-pairs"),
        pytest.param("😀 %ab.", 7, "utf-8", (5, 8, 2, 5, "ab", False, "AB"), id="utf-8-bytes"),
        pytest.param("😀 %ab.", 4, "utf-32", (2, 5, 2, 5, "ab", False, "AB"), id="utf-32"),
        pytest.param("(%%a)", 3, "utf-16", (1, 4, 1, 4, "a", True, "%a"), id="an-escape"),
        pytest.param("zz (%a", 5, "utf-16", (4, 6, 4, 6, "a", False, "AAA"), id="wrapped"),
        pytest.param("x(%a", 3, "utf-16", None, id="wrapped-at-no-boundary"),
        pytest.param("中文，%x-1 z", 5, "utf-16", (3, 7, 3, 7, "x-1", False, "X"), id="cjk"),
        pytest.param("%zz", 1, "utf-16", None, id="unknown"),
        pytest.param(
            "(" * 300 + "%a",
            301,
            "utf-16",
            (300, 302, 300, 302, "a", False, "AAA"),
            id="a-long-wrapper-run",
        ),
        pytest.param(
            "x %" + LONG,
            303,
            "utf-16",
            (2, 303, 2, 303, LONG, False, "LONG"),
            id="a-long-marker-run",
        ),
        pytest.param(
            "x " + LONG + " %" + LONG,
            304,
            "utf-16",
            (303, 604, 303, 604, LONG, False, "LONG"),
            id="a-long-name-after-another",
        ),
        pytest.param(
            "ab" * 200 + " %a.b",
            404,
            "utf-16",
            (401, 405, 401, 405, "a.b", False, "A.B"),
            id="far-along-a-line",
        ),
    ],
)
def test_the_marker_under_a_cursor(
    line: str,
    character: int,
    encoding: Encoding,
    expected: tuple[int, int, int, int, str, bool, str] | None,
) -> None:
    """Only the run of marker characters around the cursor is expanded (with the wrappers
    and the character before them); the marker found, its offsets in the line and its
    columns in the client's encoding are those of the whole line's."""
    found = marker_on_line(line, character, encoding, SNIPPETS)
    if expected is None:
        assert found is None
        return
    assert found is not None
    marker = found.marker
    got = (found.start, found.end, marker.start, marker.end, marker.name)
    assert (*got, marker.escape, marker.new_text) == expected
