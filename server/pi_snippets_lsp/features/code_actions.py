"""Code actions on a prompt: expand its markers in place, or save a selection as a snippet.

docs/lsp.md, "Code actions and commands".

- **Expand snippet markers** (``refactor.rewrite``): on a selection, every marker it
  touches; on a cursor, the marker under it. The edits replace exactly the markers that
  change, each with what submission would put there (:mod:`.markers`), so the rest of the
  text (and the cursor, marks and undo history in the editor) is left alone, and the
  result is what ``snippets/expand`` returns for the same text.
- **Save selection as snippet** (``refactor``): runs the command
  ``pi-snippets.saveSnippet`` with the selected text, which adds it to the user settings
  file (:mod:`.save_snippet`). Editor clients may catch the command to ask for a name.

Actions are filtered by the request's ``only`` kinds as LSP asks: a kind is wanted when
it is one of them or below one of them (``refactor`` covers ``refactor.rewrite``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.core.grammar import JS_WHITESPACE
from pi_snippets_lsp.core.markers import markers

EXPAND_TITLE: Final = "Expand snippet markers"
EXPAND_KIND: Final = "refactor.rewrite"
SAVE_TITLE: Final = "Save selection as snippet"
SAVE_KIND: Final = "refactor"
QUICKFIX_KIND: Final = "quickfix"

EXPAND_COMMAND: Final = "pi-snippets.expandDocument"
SAVE_COMMAND: Final = "pi-snippets.saveSnippet"
COMMANDS: Final = (EXPAND_COMMAND, SAVE_COMMAND)


@dataclass(frozen=True, slots=True)
class Action:
    """A code action in plain terms: edits of the document, or a command to run."""

    title: str
    kind: str
    edits: tuple[TextEdit, ...] = ()
    command: str | None = None
    arguments: Mapping[str, object] = field(default_factory=dict)


def expansion_edits(
    text: str, snippets: Mapping[str, str], start: int = 0, end: int | None = None
) -> list[TextEdit]:
    """The edits that expand the markers in ``start``..``end`` (the whole text by
    default): one per marker whose expansion changes the text, in text order."""
    return [
        TextEdit(m.start, m.end, m.new_text)
        for m in markers(text, snippets, start, end)
        if m.changes
    ]


def kind_wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP's ``CodeActionContext.only``: absent means every kind."""
    if only is None:
        return True
    return any(kind == wanted or kind.startswith(wanted + ".") for wanted in only)


def prompt_actions(
    text: str,
    snippets: Mapping[str, str],
    start: int,
    end: int,
    *,
    only: Sequence[str] | None = None,
    uri: str | None = None,
    can_save: bool = True,
) -> list[Action]:
    """The actions for the selection ``start``..``end`` (code points; equal for a cursor)
    of the document ``uri``.

    ``can_save``: the client can apply the edit the save command makes
    (``workspace/applyEdit``); without it the action would do nothing.
    """
    actions: list[Action] = []
    if kind_wanted(EXPAND_KIND, only):
        edits = expansion_edits(text, snippets, start, end)
        if edits:
            actions.append(Action(EXPAND_TITLE, EXPAND_KIND, tuple(edits)))
    selected = text[start:end]
    if can_save and kind_wanted(SAVE_KIND, only) and selected.strip(JS_WHITESPACE):
        arguments: dict[str, object] = {"text": selected}
        if uri is not None:
            arguments["uri"] = uri
        actions.append(Action(SAVE_TITLE, SAVE_KIND, command=SAVE_COMMAND, arguments=arguments))
    return actions
