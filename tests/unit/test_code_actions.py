"""Code actions on a prompt: which actions a request gets, and what they carry.

docs/lsp.md, "Code actions and commands". The properties that tie "Expand snippet
markers" to submission are in test_markers.py; these tests state the rules of the
request: the range, the ``only`` filter and the blank selection.
"""

from __future__ import annotations

import pytest
from pi_snippets_lsp.core.code_actions import (
    EXPAND_KIND,
    EXPAND_TITLE,
    SAVE_COMMAND,
    SAVE_KIND,
    SAVE_TITLE,
    Action,
    expansion_edits,
    prompt_actions,
)
from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.core.grammar import JS_WHITESPACE

SNIPPETS = {"a": "AAA", "b": "BBB"}


def test_a_cursor_expands_only_the_marker_under_it() -> None:
    """On a cursor the action expands the marker under it, not the markers after it."""
    text = "x %a y %b"
    assert expansion_edits(text, SNIPPETS, 3, 3) == [TextEdit(2, 4, "AAA")]
    (action,) = prompt_actions(text, SNIPPETS, 3, 3)
    assert action == Action(EXPAND_TITLE, EXPAND_KIND, (TextEdit(2, 4, "AAA"),))


def test_a_selection_expands_only_the_markers_it_touches() -> None:
    text = "%a y %b z %a"
    assert expansion_edits(text, SNIPPETS, 3, 7) == [TextEdit(5, 7, "BBB")]
    assert expansion_edits(text, SNIPPETS) == [
        TextEdit(0, 2, "AAA"),
        TextEdit(5, 7, "BBB"),
        TextEdit(10, 12, "AAA"),
    ]


SAVE = Action(SAVE_TITLE, SAVE_KIND, command=SAVE_COMMAND, arguments={"text": "x %a y"})
EXPAND = Action(EXPAND_TITLE, EXPAND_KIND, (TextEdit(2, 4, "AAA"),))


@pytest.mark.parametrize(
    ("only", "expected"),
    [
        pytest.param(None, [EXPAND, SAVE], id="no-filter-both"),
        pytest.param(["refactor"], [EXPAND, SAVE], id="refactor-covers-both"),
        pytest.param(["refactor.rewrite"], [EXPAND], id="rewrite-is-only-expand"),
        pytest.param(["quickfix"], [], id="quickfix-is-neither"),
        pytest.param(["quickfix", "refactor.rewrite"], [EXPAND], id="any-of-the-kinds"),
    ],
)
def test_the_only_filter_of_the_request_picks_the_actions(
    only: list[str] | None, expected: list[Action]
) -> None:
    """LSP's ``only``: an action is offered when its kind is one of them or below one."""
    assert prompt_actions("x %a y", SNIPPETS, 0, 6, only=only) == expected


def test_save_carries_the_document_uri_when_there_is_one() -> None:
    (save,) = prompt_actions("some words", SNIPPETS, 0, 10, uri="file:///p.md")
    assert save == Action(
        SAVE_TITLE,
        SAVE_KIND,
        command=SAVE_COMMAND,
        arguments={"text": "some words", "uri": "file:///p.md"},
    )
    (save,) = prompt_actions("some words", SNIPPETS, 5, 10)
    assert dict(save.arguments) == {"text": "words"}


@pytest.mark.parametrize(
    "selected",
    [
        pytest.param(" \t\r\n", id="ascii-blanks"),
        pytest.param("\ufeff\u3000\u00a0\u2028", id="bom-ideographic-nbsp-line-separator"),
        pytest.param(JS_WHITESPACE, id="every-js-whitespace"),
    ],
)
def test_a_selection_blank_by_javascripts_trim_offers_no_save(selected: str) -> None:
    """Blank is what Pi's JavaScript ``trim()`` removes (U+FEFF included)."""
    assert prompt_actions(selected, SNIPPETS, 0, len(selected)) == []


@pytest.mark.parametrize(
    "selected",
    [
        pytest.param("\x1c\x1f", id="information-separators"),
        pytest.param("\x85", id="next-line"),
    ],
)
def test_characters_javascript_does_not_trim_are_text_worth_saving(selected: str) -> None:
    """Python's ``str.strip`` removes U+001C..U+001F and U+0085; JavaScript keeps them."""
    assert [a.title for a in prompt_actions(selected, SNIPPETS, 0, len(selected))] == [SAVE_TITLE]
