"""A settings file's snippet keys, as written: where each is, which is under a cursor,
and the exact edit that renames one (docs/lsp.md, "Rename", "Symbols").

The keys are those of ``piSimpleSnippets.snippets`` as ``JSON.parse`` reads the text
(``settings.jsontree``): every member in text order, duplicates included, each with the
span of its key token as written (quotes and escapes included). A rename replaces every
key token spelling the old name (after unescaping), so with a duplicated key the value
``JSON.parse`` keeps (the last) is the one the new name gets, and the old name is gone
from the file; no other character of the file changes. A name is ASCII of the name rule,
so the new key token is the name in quotes, with nothing to escape.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pi_snippets_lsp.core.config import SETTINGS_KEY
from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.settings.jsontree import JsonMember, JsonParseError, parse


@dataclass(frozen=True, slots=True)
class SnippetKey:
    """One member of the snippets table: its key, the key token's span, the whole
    member's span, and its value when it is a string (None otherwise)."""

    name: str
    key_start: int
    key_end: int
    start: int
    end: int
    value: str | None


def snippet_keys(text: str) -> list[SnippetKey]:
    """Every member of the text's snippets table, in text order; none when the text does
    not parse or has no such object."""
    return [_key(m) for m in _members(text)]


def key_at(text: str, offset: int) -> SnippetKey | None:
    """The snippet key whose token holds ``offset`` (its closing quote's end included, as
    a cursor right after a word is on it), or None."""
    for member in _members(text):
        if member.key_start <= offset <= member.key_end:
            return _key(member)
    return None


def rename_edits(text: str, name: str, new_name: str) -> list[TextEdit]:
    """The edits renaming every key spelled ``name`` in the snippets table to
    ``new_name``, in text order; none when the table has no such key."""
    token = json.dumps(new_name)
    return [TextEdit(m.key_start, m.key_end, token) for m in _members(text) if m.key == name]


def _members(text: str) -> Sequence[JsonMember]:
    try:
        table = parse(text).find((SETTINGS_KEY, "snippets"))
    except JsonParseError:
        return ()
    if table is None or not table.is_object:
        return ()
    return table.members


def _key(member: JsonMember) -> SnippetKey:
    value = member.value.value
    return SnippetKey(
        member.key,
        member.key_start,
        member.key_end,
        member.start,
        member.end,
        value if isinstance(value, str) else None,
    )
