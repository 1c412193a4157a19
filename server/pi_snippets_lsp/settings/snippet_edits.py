"""Changing a snippet's value in the settings file that defines it, as written.

docs/lsp.md, "Edit snippet". A snippet is edited as plain text (its value, unescaped) and
written back as one edit of the settings file: the value token of the member
``JSON.parse`` keeps for that name (the last of a duplicated key) is replaced by the new
value as a JSON string. No other byte of the file changes: the key as written, the
formatting, other members and their order stay as they are.

The new token is ``JSON.stringify``'s form: ``"``, ``\\`` and control characters are
escaped, every other character (``%``, ``é``, an emoji) is written as itself. Line breaks
are saved as ``\\n``, as save-as-snippet saves them: Pi turns typed and pasted line
breaks into ``\\n``, and an editor buffer may hand back its own line break (VS Code's
CRLF on Windows).

An edit is made against the value the user started from (``expected``): when the file
now holds another value for the name (the file was edited meanwhile, by hand or by Pi),
or no longer defines it, the edit is refused and nothing is written, so neither change
is lost. A file that does not parse, a value that is not valid Unicode (a lone
surrogate: JSON can carry one, UTF-8 cannot) and a file that would outgrow the size a
settings file may have are refused the same way.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from pi_snippets_lsp.core.config import SETTINGS_KEY
from pi_snippets_lsp.core.edits import TextEdit, apply_edits
from pi_snippets_lsp.core.snippet import normalize_newlines
from pi_snippets_lsp.core.surrogates import first_lone_surrogate
from pi_snippets_lsp.settings.files import MAX_SETTINGS_BYTES
from pi_snippets_lsp.settings.jsontree import JsonParseError, parse
from pi_snippets_lsp.settings.layers import line_and_column


class SnippetEditError(ValueError):
    """The snippet's value cannot be changed; the message says why, for the user."""


@dataclass(frozen=True, slots=True)
class SnippetValue:
    """A snippet's value as a settings text holds it: the value, and the span of its
    token (quotes and escapes included) in code points of the text."""

    name: str
    value: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ValueEdit:
    """The edit that sets a snippet's value, and the file's text after it. ``changed``
    is False when the file holds that value already (then there is no edit)."""

    edits: tuple[TextEdit, ...]
    text: str
    changed: bool


def snippet_value(text: str, name: str) -> SnippetValue | None:
    """The value ``JSON.parse`` reads for ``name`` in the settings ``text``: None when
    the text does not parse, has no snippets table, or holds no string under ``name``
    (Pi skips an entry that is not a string)."""
    try:
        table = parse(text).find((SETTINGS_KEY, "snippets"))
    except JsonParseError:
        return None
    member = table.member(name) if table is not None else None
    if member is None or not isinstance(member.value.value, str):
        return None
    return SnippetValue(name, member.value.value, member.value.start, member.value.end)


def value_token(value: str) -> str:
    """``value`` as the JSON string a settings file holds (``JSON.stringify``'s form)."""
    text = normalize_newlines(value)
    return json.dumps(text, ensure_ascii=False)  # pragma: no mutate (None is as false)


def write_problem(path: Path) -> str | None:
    """Why the settings file at ``path`` cannot take an edit, or None when it can: a
    file this user may not write (read-only, another user's) is refused before the user
    edits anything, not when the editor fails to save it."""
    if os.access(path, os.W_OK):
        return None
    return f"{path} is not writable by this user; not saved"


def set_value_edit(
    text: str, name: str, value: str, path: str, *, expected: str | None = None
) -> ValueEdit:
    """The edit that makes ``value`` the value of snippet ``name`` in the settings
    ``text`` (read from ``path``, named in messages).

    ``expected``: the value the edit was made from; the edit is refused when the text
    holds another one. Raises :class:`SnippetEditError` saying why nothing can be written.
    """
    if (surrogate := first_lone_surrogate(value)) is not None:
        raise SnippetEditError(
            f"the text is not valid Unicode (a lone surrogate U+{ord(surrogate.group()):04X} "
            f"at character {surrogate.start()}); not saved"
        )
    try:
        parse(text)
    except JsonParseError as error:
        where = line_and_column(text, error.offset)
        raise SnippetEditError(
            f"{path} is not valid JSON ({error.message} at {where}); fix it first; not saved"
        ) from None
    found = snippet_value(text, name)
    if found is None:
        raise SnippetEditError(f"{path} no longer defines %{name}; not saved")
    if expected is not None and normalize_newlines(found.value) != normalize_newlines(expected):
        raise SnippetEditError(
            f"%{name} was changed in {path} since it was opened for editing; not saved "
            "(open it again to edit the new text)"
        )
    new = normalize_newlines(value)
    if found.value == new:
        return ValueEdit((), text, changed=False)
    edit = TextEdit(found.start, found.end, value_token(new))
    result = apply_edits(text, [edit])
    size = len(result.encode(errors="surrogatepass"))  # UTF-8, str.encode's own
    if size > MAX_SETTINGS_BYTES:
        raise SnippetEditError(
            f"saving it would make {path} {size / (1 << 20):.1f} MiB, over the 16 MiB limit "
            "of a settings file (it could not be read back); not saved"
        )
    return ValueEdit((edit,), result, changed=True)
