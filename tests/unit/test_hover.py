"""What hovering a marker shows (docs/lsp.md, "Hover"), as text: the snippet's text
exactly as it will be sent, and the file it comes from; or, for an escape, the literal
it is sent as. The LSP session tests (tests/lsp/test_hover.py) check where it shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from pi_snippets_lsp.core.hover import code_span, fence, hover_text, layer_of
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
