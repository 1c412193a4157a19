"""Saving a text as a new snippet: a name for it, and the edit of the user settings file.

docs/lsp.md, "Save selection as snippet".

The name is the one given, if it is valid and unused, or one derived from the text's first
words (``Use your MCP tools…`` -> ``use-your-mcp``), made unused with ``-2``, ``-3``, ….
*Unused* means no snippet of any layer has it and no key of the file's ``snippets`` table
spells it (an invalid or empty entry included), so the new snippet is the one that wins.

The edit inserts one member and changes no other byte of the file: formatting, other keys
and their order stay as they are. The new member follows the file's own style: the
separator and line layout between the object's last two members (or the indentation of its
only one), the ``key: value`` spacing of its last member, the file's indentation unit and
line break. A missing
``piSimpleSnippets`` or ``snippets`` object is added as the last member of its parent; a
missing or blank file gets a whole new text. A file that is not valid JSON, or whose
namespace or ``snippets`` is not an object, is not touched: fixing it needs the user.

Line breaks of the text are saved as ``\\n``: Pi turns typed and pasted line breaks into
``\\n``, so a prompt never holds ``\\r``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Final

from pi_snippets_lsp.core.config import SETTINGS_KEY
from pi_snippets_lsp.core.edits import TextEdit, apply_edits
from pi_snippets_lsp.core.grammar import is_valid_name
from pi_snippets_lsp.core.snippet import normalize_newlines
from pi_snippets_lsp.core.surrogates import first_lone_surrogate
from pi_snippets_lsp.settings.diagnostics import name_slug
from pi_snippets_lsp.settings.files import MAX_SETTINGS_BYTES
from pi_snippets_lsp.settings.jsontree import JsonNode, JsonParseError, parse
from pi_snippets_lsp.settings.layers import line_and_column, settings_text_is_empty

#: Words of the text a derived name takes, and its longest length.
NAME_WORDS: Final = 3
NAME_LIMIT: Final = 32
#: The name when the text has no letter or digit a name can use (``中文``, ``!!!``).
FALLBACK_NAME: Final = "snippet"
#: How much of the text is looked at for the first words.
_NAME_SCAN: Final = 400

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
_NAME_PART: Final = re.compile(r"[._-]+")
_DEFAULT_INDENT: Final = "  "
_DEFAULT_COLON: Final = ": "


class SaveSnippetError(ValueError):
    """The snippet cannot be saved; the message says why, for the user."""


@dataclass(frozen=True, slots=True)
class Insertion:
    """The edits that add the snippet to a settings file, and the file's text after them.

    ``create``: the file does not exist yet (the single edit is its whole text).
    """

    edits: tuple[TextEdit, ...]
    text: str
    create: bool = False


def derive_name(text: str, taken: Collection[str]) -> str:
    """A valid name from the first words of ``text`` that is not in ``taken``."""
    slug = name_slug(text[:_NAME_SCAN]) or ""
    words = [w for w in _NAME_PART.split(slug) if w][:NAME_WORDS]
    # (A slug is lowercase: stripping "X" as well changes nothing.)
    base = "-".join(words)[:NAME_LIMIT].strip("-") or FALLBACK_NAME  # pragma: no mutate
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    return name


def name_problem(name: str, taken: Collection[str]) -> str | None:
    """Why ``name`` cannot be the new snippet's name, or None when it can."""
    if not is_valid_name(name):
        return (
            f'"{name}" is not a valid snippet name: use lowercase letters, digits, ".", "_" '
            'and "-", starting and ending with a letter or digit'
        )
    if name in taken:
        return f'a snippet named "{name}" already exists'
    return None


def file_names(text: str | None) -> set[str]:
    """Every key of the ``snippets`` table of a settings text (valid or not)."""
    if text is None or settings_text_is_empty(text):
        return set()
    try:
        table = parse(text).find((SETTINGS_KEY, "snippets"))
    except JsonParseError:
        return set()
    return {m.key for m in table.members} if table is not None else set()


def snippet_insertion(text: str | None, name: str, value: str, path: str) -> Insertion:
    """The edits adding ``"name": value`` to the settings ``text`` (None: no such file).

    ``path`` names the file in error messages. Raises :class:`SaveSnippetError` when the
    file cannot take the snippet without losing something, when the text is not valid
    Unicode (a lone surrogate: JSON can carry one, UTF-8 cannot), and when the file would
    grow past the size a settings file may have (it could not be read back).
    """
    if (surrogate := first_lone_surrogate(value)) is not None:
        raise SaveSnippetError(
            f"the text is not valid Unicode (a lone surrogate U+{ord(surrogate.group()):04X} "
            f"at character {surrogate.start()}); not saved"
        )
    insertion = _insertion(text, name, normalize_newlines(value), path)
    size = len(insertion.text.encode(errors="surrogatepass"))  # UTF-8, str.encode's own
    if size > MAX_SETTINGS_BYTES:
        raise SaveSnippetError(
            f"saving it would make {path} {size / (1 << 20):.1f} MiB, over the 16 MiB limit "
            "of a settings file (it could not be read back); not saved"
        )
    return insertion


def _insertion(text: str | None, name: str, value: str, path: str) -> Insertion:
    new: dict[str, object] = {name: value}
    if text is None or settings_text_is_empty(text):
        style = _Style("\n", _DEFAULT_INDENT, _DEFAULT_COLON)
        whole = style.value({SETTINGS_KEY: {"snippets": new}}, "") + "\n"
        edit = TextEdit(0, len(text or ""), whole)
        return Insertion((edit,), whole, create=text is None)
    tree = settings_tree(text, path)
    style = _Style.of(text, tree.root)
    if tree.namespace is None:
        edit = style.insert(text, tree.root, SETTINGS_KEY, {"snippets": new})
    elif tree.table is None:
        edit = style.insert(text, tree.namespace, "snippets", new)
    else:
        edit = style.insert(text, tree.table, name, value)
    return Insertion((edit,), apply_edits(text, [edit]))


@dataclass(frozen=True, slots=True)
class SettingsTree:
    """A settings text read as a place for snippets: its root object, its
    ``piSimpleSnippets`` object and that object's ``snippets`` object (None: absent)."""

    root: JsonNode
    namespace: JsonNode | None
    table: JsonNode | None


def settings_tree(text: str, path: str) -> SettingsTree:
    """``text`` (of the file ``path``) as a place for snippets, or
    :class:`SaveSnippetError` naming what to fix: text ``JSON.parse`` refuses, a root
    that is not an object, a ``piSimpleSnippets`` or ``snippets`` that is not an object.
    Writing into such a file would lose what the user wrote, so it needs the user."""
    try:
        root = parse(text)
    except JsonParseError as error:
        where = line_and_column(text, error.offset)
        raise SaveSnippetError(
            f"{path} is not valid JSON ({error.message} at {where}); fix it first"
        ) from None
    if not root.is_object:
        raise SaveSnippetError(f"{path} must hold a JSON object; fix it first")
    namespace = root.member(SETTINGS_KEY)
    if namespace is None:
        return SettingsTree(root, None, None)
    if not namespace.value.is_object:
        raise SaveSnippetError(f'"{SETTINGS_KEY}" in {path} is not an object; fix it first')
    table = namespace.value.member("snippets")
    if table is None:
        return SettingsTree(root, namespace.value, None)
    if not table.value.is_object:
        raise SaveSnippetError(
            f'"{SETTINGS_KEY}.snippets" in {path} is not an object; fix it first'
        )
    return SettingsTree(root, namespace.value, table.value)


@dataclass(frozen=True, slots=True)
class _Style:
    """How a file writes JSON: its line break, indentation unit and ``key: value`` colon."""

    newline: str
    indent: str
    colon: str

    @classmethod
    def of(cls, text: str, root: JsonNode) -> _Style:
        match = _LINE_BREAK.search(text)
        indent = colon = None
        for node in root.walk():
            if not node.members:
                continue
            first = node.members[0]
            if colon is None:
                colon = text[first.key_end : first.value.start]
            outer, inner = _line_indent(text, node.start), _line_indent(text, first.key_start)
            # Members indented further than their object's line: that line ends before them.
            if inner.startswith(outer) and len(inner) > len(outer):
                indent = inner[len(outer) :]
                break
        # (A text without a line break stays on one line: its newline is never written.)
        newline = match.group() if match else "\n"  # pragma: no mutate
        return cls(newline, indent or _DEFAULT_INDENT, colon or _DEFAULT_COLON)

    def member(self, key: str, value: object, indent: str | None) -> str:
        return _json(key) + self.colon + self.value(value, indent)

    def value(self, value: object, indent: str | None) -> str:
        """``value`` laid out over lines, on a line that starts with ``indent``; on one
        line when ``indent`` is None. An object, or an array holding an object or array,
        puts each member or item on a line of its own (as ``JSON.stringify`` with an
        indent does); other arrays (``["mcp"]``) and empty containers stay on one line."""
        if isinstance(value, dict) and value:
            opening, closing = "{", "}"
            parts = [(_json(k) + self.colon, v) for k, v in value.items()]
        elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            opening, closing = "[", "]"
            parts = [("", v) for v in value]
        else:
            return _json(value)
        if indent is None:
            inner = ", ".join(head + self.value(v, None) for head, v in parts)
            return opening + inner + closing
        deeper = indent + self.indent
        between = "," + self.newline + deeper
        inner = between.join(head + self.value(v, deeper) for head, v in parts)
        return opening + self.newline + deeper + inner + self.newline + indent + closing

    def insert(self, text: str, obj: JsonNode, key: str, value: object) -> TextEdit:
        """The edit adding ``key: value`` as the last member of the object ``obj``."""
        members = obj.members
        if members:
            last = members[-1]
            if len(members) >= 2:
                separator = text[members[-2].end : last.key_start]
            elif _breaks(text, obj.start, last.key_start):
                separator = "," + self.newline + _line_indent(text, last.key_start)
            else:
                separator = ", "
            # Over lines, nested lines are indented from the last key's line (not from
            # the separator's last line: with a leading comma, that holds the comma).
            over_lines = _LINE_BREAK.search(separator) is not None
            indent = _line_indent(text, last.key_start) if over_lines else None
            style = replace(self, colon=text[last.key_end : last.value.start])
            member = style.member(key, value, indent)
            return TextEdit(last.end, last.end, separator + member)
        root = obj
        while root.parent is not None:
            root = root.parent
        if not _breaks(text, root.start, root.end):  # a one-line file stays on one line
            return TextEdit(obj.start + 1, obj.end - 1, self.member(key, value, None))
        outer = _line_indent(text, obj.start)
        deeper = outer + self.indent
        member = self.newline + deeper + self.member(key, value, deeper)
        if _breaks(text, obj.start, obj.end):  # its closing line stays as it is
            return TextEdit(obj.start + 1, obj.start + 1, member)
        return TextEdit(obj.start + 1, obj.end - 1, member + self.newline + outer)


def _json(value: object) -> str:
    # json.dumps's own separators without an indent: ", " and ": " (only scalars and flat
    # arrays of scalars come here).
    return json.dumps(value, ensure_ascii=False)  # pragma: no mutate (None is as false)


#: The style of a JSON file, for other modules that edit one (``agents.jsonedit``).
JsonStyle = _Style


def _breaks(text: str, start: int, end: int) -> bool:
    """Whether a line break lies between ``start`` and ``end``."""
    return _LINE_BREAK.search(text, start, end) is not None


def _line_indent(text: str, offset: int) -> str:
    """The spaces and tabs that begin the line holding ``offset``."""
    start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    end = start
    # (The line holds JSON: blanks, then the token at ``offset``, never an "X"; the scan
    # stops at that token, before the text's end.)
    while end < len(text) and text[end] in " \t":  # pragma: no mutate
        end += 1
    return text[start:end]
