"""Renaming and deleting a snippet in a settings file's text: the file's whole new text,
or why the file cannot take the change (docs/mcp.md, "Writing snippets").

The change touches the snippet's members of ``piSimpleSnippets.snippets`` and no other
byte of the file, so its formatting, its other keys and their order stay as written:

- a rename replaces the key token of every member spelled with the old name
  (``snippet_keys.rename_edits``: with a duplicated key, the value ``JSON.parse`` keeps
  is the one the new name gets, and the old name is gone from the file);
- a delete removes every member spelled with the name, with the separator that tied it
  to its neighbors: a member followed by a kept one goes up to that one's key (its
  comma and the line break and indentation after it), a member after the last kept one
  goes from the end of the member before it (that member's comma and the line before);
  a table left without members is ``{}``.

A file that does not parse as ``JSON.parse`` reads it, is not an object, or whose
``piSimpleSnippets`` or ``snippets`` is not an object, is refused
(:class:`SnippetFileError`): changing it needs the user, as for save-as-snippet. So is
a file that does not define the name (it changed since the snippets were read).
"""

from __future__ import annotations

from pi_snippets_lsp.core.edits import TextEdit, apply_edits
from pi_snippets_lsp.settings.jsontree import JsonNode
from pi_snippets_lsp.settings.save_snippet import SaveSnippetError, settings_tree
from pi_snippets_lsp.settings.snippet_keys import rename_edits


class SnippetFileError(ValueError):
    """The settings file cannot take the change; the message says why, for the user."""


def snippets_table(text: str, path: str) -> JsonNode | None:
    """The ``snippets`` object of a settings ``text`` (None when the file has none), or
    :class:`SnippetFileError` naming what to fix (``save_snippet.settings_tree``'s
    rule); ``path`` names the file."""
    try:
        return settings_tree(text, path).table
    except SaveSnippetError as error:
        raise SnippetFileError(str(error)) from None


def _defining_table(text: str, name: str, path: str) -> JsonNode:
    table = snippets_table(text, path)
    if table is None or not table.occurrences(name):
        raise SnippetFileError(f"{path} does not define {name} (it changed meanwhile?)")
    return table


def renamed_text(text: str, name: str, new_name: str, path: str) -> str:
    """``text`` with the snippet ``name`` renamed to ``new_name`` (every key spelled
    ``name``), or :class:`SnippetFileError`."""
    _defining_table(text, name, path)
    return apply_edits(text, rename_edits(text, name, new_name))


def removal_edits(table: JsonNode, name: str) -> list[TextEdit]:
    """The edits removing every member spelled ``name`` from the object ``table`` (see
    the module's docstring); none when it has no such member."""
    members = table.members
    gone = [member.key == name for member in members]
    if not any(gone):
        return []
    if all(gone):
        return [TextEdit(table.start + 1, table.end - 1, "")]
    last_kept = max(i for i, removed in enumerate(gone) if not removed)
    edits: list[TextEdit] = []
    for i, member in enumerate(members):
        if not gone[i]:
            continue
        if i < last_kept:  # pragma: no mutate (last_kept is kept: never equal here)
            edits.append(TextEdit(member.start, members[i + 1].start, ""))
        else:
            edits.append(TextEdit(members[i - 1].end, member.end, ""))
    return edits


def deleted_text(text: str, name: str, path: str) -> str:
    """``text`` without the snippet ``name`` (every key spelled ``name``), or
    :class:`SnippetFileError`."""
    table = _defining_table(text, name, path)
    return apply_edits(text, removal_edits(table, name))
