"""Our MCP server in Codex's ``config.toml``: ``[mcp_servers.pi-snippets]``.

docs/agents.md, "What setup changes". ``tomlkit`` reads and writes TOML keeping every
comment and layout. A new table is appended at the end of the file as its own
``[mcp_servers.pi-snippets]`` block (after one blank line), which is what a person would
write, and removal of a last block takes exactly that text back; an entry elsewhere is
changed or removed by ``tomlkit``, which keeps the rest of the file as it was. Every
result is read back and compared with what was meant: a file whose ``mcp_servers`` is
not a table, or that is not TOML, is refused (``ConfigFileError``).
"""

from __future__ import annotations

import re
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable

from pi_snippets_lsp.agents.jsonedit import ConfigFileError

TABLE = "mcp_servers"


def _parse(text: str, name: str) -> Any:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigFileError(f"{name} is not valid TOML ({exc})") from None


def _servers(doc: Any, name: str) -> dict[str, object] | None:
    servers = doc.unwrap().get(TABLE)
    if servers is not None and not isinstance(servers, dict):
        raise ConfigFileError(f"{TABLE} in {name} is not a table")
    return servers


def _header(key: str) -> str:
    bare = re.fullmatch(r"[A-Za-z0-9_-]+", key) is not None
    return f"[{TABLE}.{key if bare else tomlkit.string(key).as_string()}]"


def set_server(text: str, name: str, key: str, table: dict[str, object]) -> str:
    """``text`` with ``[mcp_servers.<key>]`` holding ``table``."""
    doc = _parse(text, name)
    expected = {**doc.unwrap()}
    servers = _servers(doc, name) or {}
    if servers.get(key) == table:
        return text
    expected[TABLE] = {**servers, key: table}
    if key not in servers:
        block = (
            _header(key)
            + "\n"
            + "".join(f"{k} = {tomlkit.item(v).as_string()}\n" for k, v in table.items())
        )
        separator = "" if not text.strip() else "\n" if text.endswith("\n") else "\n\n"
        appended = text + separator + block
        if _reads_as(appended, expected):
            return appended
    doc.setdefault(TABLE, tomlkit.table(is_super_table=True))
    inline = isinstance(doc[TABLE], InlineTable)
    entry = tomlkit.inline_table() if inline else tomlkit.table()
    for k, v in table.items():
        entry.append(k, v)
    try:
        doc[TABLE][key] = entry
        result = tomlkit.dumps(doc)
    except (TOMLKitError, ValueError) as exc:
        raise ConfigFileError(f"cannot add [{TABLE}.{key}] to {name} ({exc})") from None
    if not _reads_as(result, expected):
        raise ConfigFileError(f"cannot add [{TABLE}.{key}] to {name} without changing the rest")
    return result


def toml_value(text: str, name: str) -> dict[str, Any]:
    """The plain value of a TOML text."""
    value: dict[str, Any] = _parse(text, name).unwrap()
    return value


def remove_server(text: str, name: str, key: str, *, prune: bool = False) -> str:
    """``text`` without ``[mcp_servers.<key>]`` (and, with ``prune``, without an
    ``mcp_servers`` left empty)."""
    doc = _parse(text, name)
    servers = _servers(doc, name)
    if servers is None or key not in servers:
        return text
    expected = {**doc.unwrap()}
    rest = {k: v for k, v in servers.items() if k != key}
    if rest or not prune:
        expected[TABLE] = rest
    else:
        del expected[TABLE]
    header = re.compile(
        r"^\[[ \t]*" + re.escape(TABLE) + r"[ \t]*\.[ \t]*(?:" + re.escape(key)
        + r'|"' + re.escape(key) + r'")[ \t]*\][ \t]*(?:#[^\n]*)?$',
        re.MULTILINE,
    )  # fmt: skip
    match = header.search(text)
    if match is not None and not re.search(r"^[ \t]*\[", text[match.end() :], re.MULTILINE):
        start = match.start()
        if text[:start].endswith("\n\n"):
            start -= 1  # the blank line set_server put before the block
        shorter = text[:start]
        if _reads_as(shorter, expected):
            return shorter
    table = doc[TABLE]
    del table[key]
    if not rest and prune:
        del doc[TABLE]
    result = tomlkit.dumps(doc)
    if not _reads_as(result, expected):
        raise ConfigFileError(f"cannot remove [{TABLE}.{key}] from {name} cleanly")
    return result


def _reads_as(text: str, expected: dict[str, object]) -> bool:
    """Whether ``text`` reads as ``expected``; an empty ``mcp_servers`` is as good as none
    (a table of no servers, which an implicit super-table leaves behind)."""
    try:
        value = tomlkit.parse(text).unwrap()
    except TOMLKitError:
        return False
    return bool(_without_empty_table(value) == _without_empty_table(expected))


def _without_empty_table(value: dict[str, object]) -> dict[str, object]:
    if value.get(TABLE) == {}:
        return {k: v for k, v in value.items() if k != TABLE}
    return value
