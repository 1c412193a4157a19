"""Minimal edits of an agent's JSON or JSONC config file.

docs/agents.md, "What setup changes". ``setup`` adds one member (our MCP server) or one
array item (our hook) to a file the person also edits by hand, and ``--remove`` takes
it back. Every other byte stays: the file is parsed with the project's own parser
(``settings.jsontree``; comments and trailing commas blanked first, which keeps every
offset), and the change is one text edit laid out in the file's own style
(``settings.save_snippet.JsonStyle``: its indentation, line break and colon spacing).

An addition is the exact inverse of its removal: an entry added after the last member
(or item) is ``separator + entry`` at that member's end, and removing it deletes the
text from the previous member's end to the entry's end. A container that removal
leaves empty and that setup creates when missing (``mcpServers``, ``hooks``, …) goes
too, so a file that had none of them gets its bytes back; the one container a person
may have written empty by hand beforehand is then gone as well (no agent tells an
absent table from an empty one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

from pi_snippets_lsp.core.config import JsonPath
from pi_snippets_lsp.core.edits import TextEdit, apply_edits
from pi_snippets_lsp.settings.jsontree import JsonNode, JsonParseError, blank_jsonc, parse
from pi_snippets_lsp.settings.layers import line_and_column
from pi_snippets_lsp.settings.save_snippet import JsonStyle

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
#: Blanks a comment left before a line break of a separator copied from the file.
_BLANKS_BEFORE_BREAK: Final = re.compile(r"[ \t]+(?=[\r\n])")


class ConfigFileError(ValueError):
    """A config file ``setup`` will not touch (not JSON, a wrong shape); says why."""


@dataclass(frozen=True, slots=True)
class _Doc:
    """A file's text, the same text with comments blanked, and its parsed root."""

    text: str
    blanked: str
    root: JsonNode
    style: JsonStyle


def _load(text: str, name: str) -> _Doc:
    blanked = blank_jsonc(text) if text.strip() else text + "{}"
    try:
        root = parse(blanked)
    except JsonParseError as error:
        where = line_and_column(text, error.offset)
        raise ConfigFileError(f"{name} is not valid JSON ({error.message} at {where})") from None
    if not root.is_object:
        raise ConfigFileError(f"{name} does not hold a JSON object")
    return _Doc(text, blanked, root, JsonStyle.of(blanked, root))


def json_value(text: str, name: str) -> object:
    """The plain value of a config file's text (an empty text is ``{}``)."""
    return _load(text, name).root.value


def set_member(text: str, name: str, path: JsonPath, key: str, value: object) -> str:
    """``text`` with ``key: value`` in the object at ``path``, created when missing; an
    existing ``key`` gets the new value in place. ``name`` names the file in errors."""
    if not text.strip():
        return _new_file([*path, key], value)
    doc = _load(text, name)
    obj, missing = _deepest(doc, path, name)
    if missing:
        nested: object = {key: value}
        for step in reversed(missing[1:]):
            nested = {step: nested}
        return _apply(doc, _insert_member(doc, obj, str(missing[0]), nested))
    member = obj.member(key)
    if member is None:
        return _apply(doc, _insert_member(doc, obj, key, value))
    if member.value.value == value:
        return text
    indent = _line_indent(doc.blanked, member.key_start)
    new = doc.style.value(value, indent if _breaks(doc.blanked, obj.start, obj.end) else None)
    return _apply(doc, TextEdit(member.value.start, member.value.end, new))


def add_item(
    text: str, name: str, path: JsonPath, item: object, ours: Callable[[object], bool]
) -> str:
    """``text`` with ``item`` in the array at ``path`` (created when missing), unless an
    item ``ours`` recognizes is there: that one is replaced by ``item`` when it differs."""
    if not text.strip():
        return _new_file(path, [item])
    doc = _load(text, name)
    obj, missing = _deepest(doc, path[:-1], name)
    if missing:
        nested: object = {path[-1]: [item]}
        for step in reversed(missing[1:]):
            nested = {step: nested}
        return _apply(doc, _insert_member(doc, obj, str(missing[0]), nested))
    member = obj.member(str(path[-1]))
    if member is None:
        return _apply(doc, _insert_member(doc, obj, str(path[-1]), [item]))
    array = member.value
    if not isinstance(array.value, list):
        raise ConfigFileError(f"{_dotted(path)} in {name} is not an array")
    for node in array.items:
        if ours(node.value):
            if node.value == item:
                return text
            over_lines = _breaks(doc.blanked, array.start, array.end)
            indent = _line_indent(doc.blanked, node.start) if over_lines else None
            new = doc.style.value(item, indent)
            return _apply(doc, TextEdit(node.start, node.end, new))
    return _apply(doc, _append_item(doc, array, item))


def remove_member(
    text: str, name: str, path: JsonPath, key: str, prune: Collection[JsonPath] = ()
) -> str:
    """``text`` without the member ``key`` of the object at ``path`` (unchanged when
    absent); a container at a path in ``prune`` that is left empty goes too."""
    doc = _load(text, name)
    obj = doc.root.find(path)
    if obj is None or not obj.is_object or obj.member(key) is None:
        return text
    child = obj.find((key,))
    assert child is not None
    return _apply(doc, _delete(doc, _index_in(child, obj), obj, prune))


def remove_items(
    text: str,
    name: str,
    path: JsonPath,
    ours: Callable[[object], bool],
    prune: Collection[JsonPath] = (),
) -> str:
    """``text`` without the items of the array at ``path`` that ``ours`` recognizes."""
    while True:
        doc = _load(text, name)
        array = doc.root.find(path)
        if array is None or not isinstance(array.value, list):
            return text
        found = [i for i, node in enumerate(array.items) if ours(node.value)]
        if not found:
            return text
        text = _apply(doc, _delete(doc, found[-1], array, prune))


def _new_file(path: Sequence[str | int], value: object) -> str:
    """The text of a new file holding ``value`` at ``path``: two-space indents, as the
    agents write their own files."""
    for key in reversed(path):
        value = {str(key): value}
    return JsonStyle("\n", "  ", ": ").value(value, "") + "\n"


def _deepest(doc: _Doc, path: JsonPath, name: str) -> tuple[JsonNode, JsonPath]:
    """The deepest object along ``path`` that exists, and the keys still missing."""
    node = doc.root
    for depth, key in enumerate(path):
        member = node.member(str(key))
        if member is None:
            return node, path[depth:]
        node = member.value
        if not node.is_object:
            raise ConfigFileError(f"{_dotted(path[: depth + 1])} in {name} is not an object")
    return node, ()


def _insert_member(doc: _Doc, obj: JsonNode, key: str, value: object) -> TextEdit:
    edit = doc.style.insert(doc.blanked, obj, key, value)
    return TextEdit(edit.start, edit.end, _BLANKS_BEFORE_BREAK.sub("", edit.new_text))


def _append_item(doc: _Doc, array: JsonNode, item: object) -> TextEdit:
    """The edit adding ``item`` after the last item of ``array`` (in the style of
    ``JsonStyle.insert`` for an object's member)."""
    blanked, style = doc.blanked, doc.style
    items = array.items
    if items:
        last = items[-1]
        if len(items) >= 2:
            separator = blanked[items[-2].end : last.start]
        elif _breaks(blanked, array.start, last.start):
            separator = "," + style.newline + _line_indent(blanked, last.start)
        else:
            separator = ", "
        separator = _BLANKS_BEFORE_BREAK.sub("", separator)
        over_lines = _LINE_BREAK.search(separator) is not None
        indent = _line_indent(blanked, last.start) if over_lines else None
        return TextEdit(last.end, last.end, separator + style.value(item, indent))
    if not _breaks(blanked, doc.root.start, doc.root.end):
        return TextEdit(array.start + 1, array.end - 1, style.value(item, None))
    outer = _line_indent(blanked, array.start)
    deeper = outer + style.indent
    new = style.newline + deeper + style.value(item, deeper) + style.newline + outer
    return TextEdit(array.start + 1, array.end - 1, new)


def _delete(doc: _Doc, index: int, container: JsonNode, prune: Collection[JsonPath]) -> TextEdit:
    """The edit deleting child ``index`` of ``container`` and the separator it came with;
    an only child in a container at a ``prune`` path takes the container with it."""
    spans: Sequence[tuple[int, int]] = (
        [(m.start, m.end) for m in container.members]
        if container.is_object
        else [(n.start, n.end) for n in container.items]
    )
    if len(spans) == 1:
        parent = container.parent
        if parent is not None and container.path in prune:
            return _delete(doc, _index_in(container, parent), parent, prune)
        return TextEdit(container.start + 1, container.end - 1, "")
    start, end = spans[index]
    if index > 0:
        return TextEdit(spans[index - 1][1], end, "")
    return TextEdit(start, spans[1][0], "")


def _index_in(child: JsonNode, parent: JsonNode) -> int:
    if parent.is_object:
        # A duplicated key: the last occurrence is the one JSON.parse keeps.
        keys = [m.key for m in parent.members]
        return len(keys) - 1 - keys[::-1].index(str(child.key))
    return int(child.key or 0)


def _apply(doc: _Doc, edit: TextEdit) -> str:
    return apply_edits(doc.text, [edit])


def _dotted(path: JsonPath) -> str:
    return ".".join(str(k) for k in path)


def _breaks(text: str, start: int, end: int) -> bool:
    return _LINE_BREAK.search(text, start, end) is not None


def _line_indent(text: str, offset: int) -> str:
    start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]
