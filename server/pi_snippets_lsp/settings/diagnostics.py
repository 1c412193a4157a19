"""Diagnostics of a settings file, from its text: the problem at its key or value.

Rules: docs/settings-diagnostics.md; docs/configuration.md, "Validation and warnings".

A settings file open in the editor is checked from the buffer's text, unsaved edits
included, by the rules that load it (:func:`..config.check_namespace`), so a diagnostic
says what the load warning says and sits where the problem is:

- invalid JSON: at the parse error's offset, with ``JSON.parse``'s message;
- a file that is not a JSON object: on the whole value;
- each validation problem of ``piSimpleSnippets``: an invalid snippet name on its key;
  an empty or non-string snippet, a bad ``shortcut``, a non-boolean
  ``expandOnCompletion``, a ``snippets`` or namespace that is not an object on the value.

Those are warnings. Shortcut *hints* are information: the contract accepts the key, but
the user may not get what they expect (:func:`shortcut_hints`). Keys other than
``piSimpleSnippets`` are Pi's and never flagged; a fine file has no diagnostics.

Where the repair is clear a diagnostic carries a :class:`QuickFix`: an invalid name
becomes its slug (unless that name exists), an empty snippet is removed, the strings
``"true"``/``"false"`` of ``expandOnCompletion`` become booleans. A fix's edits leave
valid JSON, and the fixed file no longer has that problem.

Offsets are code points of the text as given (a BOM included); the server converts them
with the document's position codec.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from pi_snippets_lsp.core.config import (
    SETTINGS_KEY,
    JsonPath,
    Problem,
    check_namespace,
    not_an_object,
)
from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.core.grammar import is_valid_name
from pi_snippets_lsp.settings.jsontree import JsonMember, JsonNode, JsonParseError, parse
from pi_snippets_lsp.settings.layers import settings_text_is_empty

#: The ``source`` of every diagnostic: the extension whose rules they are.
SOURCE: Final = "pi-simple-snippets"

Severity = Literal["warning", "information"]


@dataclass(frozen=True, slots=True)
class QuickFix:
    """A repair: a title for the menu and non-overlapping edits, in text order."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True, slots=True)
class SettingsDiagnostic:
    """One problem of a settings file, at ``start``..``end`` (code points)."""

    start: int
    end: int
    severity: Severity
    message: str
    fix: QuickFix | None = None
    source: str = SOURCE


def settings_diagnostics(text: str) -> list[SettingsDiagnostic]:
    """Every diagnostic of a settings file's text, in text order; ``[]`` when it is fine."""
    if settings_text_is_empty(text):
        return []
    try:
        root = parse(text)
    except JsonParseError as error:
        return [_parse_error(text, error)]
    if not isinstance(root.value, dict):
        message = f"This file {not_an_object(root.value)}"
        return [SettingsDiagnostic(root.start, root.end, "warning", message)]
    if SETTINGS_KEY not in root.value:
        return []
    check = check_namespace(root.value[SETTINGS_KEY])
    indexes: dict[int, _Members] = {}
    diagnostics = [_problem(root, problem, indexes) for problem in check.problems]
    shortcut = root.find((SETTINGS_KEY, "shortcut"))
    if check.shortcut is not None and shortcut is not None:
        diagnostics.extend(
            SettingsDiagnostic(shortcut.start, shortcut.end, "information", hint)
            for hint in shortcut_hints(str(shortcut.value), check.shortcut)
        )
    diagnostics.sort(key=lambda d: (d.start, d.end))
    return diagnostics


def _parse_error(text: str, error: JsonParseError) -> SettingsDiagnostic:
    """At the offending character; at the end of the text, or before a line break,
    an empty range (a range over a line break would end on the next line)."""
    start = error.offset
    end = start + 1 if start < len(text) and text[start] not in "\r\n" else start
    return SettingsDiagnostic(
        start, end, "warning", f"This file is not valid JSON: {error.message}"
    )


class _Members:
    """An object's members by key and by position, made once per object: each quick fix
    looks up the members it edits here instead of scanning them all, so a file with a
    problem in every one of its thousands of members is checked in linear time."""

    def __init__(self, container: JsonNode) -> None:
        self.container = container
        self.position = {id(m): i for i, m in enumerate(container.members)}
        self.by_key: dict[str, list[JsonMember]] = {}
        for member in container.members:
            self.by_key.setdefault(member.key, []).append(member)

    def occurrences(self, key: str) -> list[JsonMember]:
        return self.by_key.get(key, [])


def _problem(root: JsonNode, problem: Problem, indexes: dict[int, _Members]) -> SettingsDiagnostic:
    container = root.find(problem.path[:-1])
    member = container.member(str(problem.path[-1])) if container is not None else None
    if container is None or member is None:  # pragma: no cover - paths come from this tree
        raise AssertionError(f"no member at {problem.path!r}")
    if problem.target == "key":
        start, end = member.key_start, member.key_end
    else:
        start, end = member.value.start, member.value.end
    members = indexes.get(id(container))
    if members is None:
        members = indexes[id(container)] = _Members(container)
    return SettingsDiagnostic(
        start, end, "warning", problem.message, _fix(members, member, problem)
    )


# --------------------------------------------------------------------------- quick fixes


def _fix(members: _Members, member: JsonMember, problem: Problem) -> QuickFix | None:
    container = members.container
    path: JsonPath = problem.path
    in_snippets = problem.entry is not None  # only a snippet entry's problem has one
    if in_snippets and problem.target == "key":
        slug = name_slug(member.key)
        if slug is None or container.member(slug) is not None:
            return None
        new_key = json.dumps(slug)
        edits = tuple(
            TextEdit(m.key_start, m.key_end, new_key) for m in members.occurrences(member.key)
        )
        return QuickFix(f'Rename to "{slug}"', edits)
    if in_snippets and member.value.value == "":
        doomed = members.occurrences(member.key)
        edits = remove_members(container, doomed, [members.position[id(m)] for m in doomed])
        return QuickFix(f'Remove the empty snippet "{member.key}"', edits)
    if path == (SETTINGS_KEY, "expandOnCompletion") and isinstance(member.value.value, str):
        word = member.value.value.strip().lower()
        if word in ("true", "false"):
            edit = TextEdit(member.value.start, member.value.end, word)
            return QuickFix(f"Use the boolean {word}", (edit,))
    return None


def name_slug(name: str) -> str | None:
    """The valid snippet name closest to ``name``, or None when nothing of it is left.

    Lowercased, accents dropped (``Café`` -> ``cafe``), each run of characters the name
    rule does not allow (with the hyphens around it) becomes one ``-``, and the ends are
    trimmed to a letter or digit: ``"Code Review - Short"`` -> ``code-review-short``.
    """
    decomposed = unicodedata.normalize("NFKD", name.lower())
    ascii_name = "".join(c for c in decomposed if not unicodedata.combining(c))
    slug = _NOT_NAME_RUN.sub("-", ascii_name).strip("._-")
    return slug if is_valid_name(slug) else None


#: A run of characters outside the name rule, with the hyphens next to it.
_NOT_NAME_RUN: Final = re.compile(r"-*(?:[^a-z0-9._-]+-*)+")


def remove_members(
    container: JsonNode, doomed: Sequence[JsonMember], positions: Sequence[int] | None = None
) -> tuple[TextEdit, ...]:
    """Edits that delete ``doomed`` members of an object and leave valid JSON.

    A member followed by a kept one goes with everything up to that one's key (its comma
    and the line break after it); a member after the last kept one goes with everything
    from the end of the member before it (that one's comma). With every member doomed the
    object becomes ``{}``. ``positions``: the doomed members' indexes in the object, when
    the caller knows them (the work is then in proportion to the doomed, not to all).
    """
    members = container.members
    if positions is None:
        doomed_ids = {id(m) for m in doomed}
        positions = [i for i, m in enumerate(members) if id(m) in doomed_ids]
    doomed_at = sorted(set(positions))
    last_kept = len(members) - 1
    gone = set(doomed_at)
    while last_kept >= 0 and last_kept in gone:
        last_kept -= 1
    if last_kept < 0:
        return (TextEdit(container.start + 1, container.end - 1, ""),)
    edits: list[TextEdit] = []
    for i in doomed_at:
        member = members[i]
        if i < last_kept:
            edit = TextEdit(member.key_start, members[i + 1].key_start, "")
        else:
            edit = TextEdit(members[i - 1].end, member.end, "")
        if edits and edits[-1].end == edit.start:
            edit = TextEdit(edits[-1].start, edit.end, "")
            edits.pop()
        edits.append(edit)
    return tuple(edits)


# --------------------------------------------------------------------------- shortcut hints

#: What a terminal without the kitty keyboard protocol sends for ctrl+<key>: the same
#: control character as another key, so Pi cannot tell the two apart.
LEGACY_CONTROL_KEYS: Final = {
    "i": "Tab",
    "m": "Enter",
    "[": "Escape",
    "h": "Backspace",
    "j": "a newline (line feed)",
}

#: Keys Pi's editor binds by default (pi-coding-agent, docs/keybindings.md): editing,
#: the kill ring, the clipboard, and the application keys used while typing a prompt.
#: A snippet shortcut listens to the terminal before the editor, so it takes them over.
PI_EDITOR_KEYS: Final = {
    "ctrl+a": "move to the start of the line",
    "ctrl+e": "move to the end of the line",
    "ctrl+b": "move the cursor left",
    "ctrl+f": "move the cursor right",
    "alt+b": "move a word left",
    "alt+f": "move a word right",
    "ctrl+d": "delete the next character (and exit when the editor is empty)",
    "ctrl+w": "delete the word before the cursor",
    "alt+backspace": "delete the word before the cursor",
    "alt+d": "delete the word after the cursor",
    "ctrl+u": "delete to the start of the line",
    "ctrl+k": "delete to the end of the line",
    "shift+enter": "insert a new line",
    "ctrl+y": "paste the last deleted text",
    "alt+y": "cycle through deleted text",
    "ctrl+-": "undo",
    "ctrl+c": "copy, or clear the editor",
    "ctrl+v": "paste an image",
    "ctrl+z": "suspend Pi",
    "ctrl+g": "open the external editor",
    "ctrl+l": "open the model selector",
    "ctrl+p": "cycle models",
    "ctrl+o": "expand tool output",
    "ctrl+t": "show or hide thinking",
    "shift+tab": "cycle the thinking level",
    "alt+enter": "queue a follow-up message",
}

_KEY_ALIASES: Final = {"esc": "escape", "return": "enter"}


def _chord(shortcut: str) -> tuple[frozenset[str], str]:
    """A normalized shortcut as (modifiers, key), order and key aliases aside."""
    *modifiers, key = shortcut.split("+")
    return frozenset(modifiers), _KEY_ALIASES.get(key, key)


_EDITOR_CHORDS: Final = {_chord(key): (key, action) for key, action in PI_EDITOR_KEYS.items()}


def shortcut_hints(raw: str, shortcut: str) -> list[str]:
    """Why a valid shortcut may not do what the user expects, as hint messages.

    ``raw`` is the setting as written (for the message), ``shortcut`` its normalized form
    (:func:`..config.normalize_shortcut`). Two kinds of hint:

    - Without the kitty keyboard protocol, a terminal sends ctrl+<letter> as a control
      character, so ``ctrl+shift+<letter>`` arrives as ``ctrl+<letter>``, and ``ctrl+i``,
      ``ctrl+m``, ``ctrl+[``, ``ctrl+h``, ``ctrl+j`` as Tab, Enter, Escape, Backspace and
      a newline.
    - The shortcut takes over a key Pi's editor binds by default (:data:`PI_EDITOR_KEYS`).
    """
    hints: list[str] = []
    modifiers = shortcut.split("+")[:-1]
    key = shortcut.split("+")[-1]
    if "ctrl" in modifiers:
        legacy = list(modifiers)
        if "shift" in legacy and "a" <= key <= "z" and len(key) == 1:
            legacy.remove("shift")
        if legacy == ["ctrl"] and key in LEGACY_CONTROL_KEYS:
            hints.append(_legacy_hint(raw, LEGACY_CONTROL_KEYS[key]))
        elif legacy != modifiers:
            hints.append(_legacy_hint(raw, "+".join([*legacy, key])))
    taken = _EDITOR_CHORDS.get(_chord(shortcut))
    if taken is not None:
        editor_key, action = taken
        hints.append(
            f'`shortcut` "{raw}" takes over {editor_key}, which Pi\'s editor uses to {action}'
        )
    return hints


def _legacy_hint(raw: str, same: str) -> str:
    """The hint for a shortcut a legacy terminal sends as ``same``."""
    return (
        f'`shortcut` "{raw}": a terminal without the kitty keyboard protocol sends it as '
        f"{same}, so Pi cannot tell the two apart"
    )
