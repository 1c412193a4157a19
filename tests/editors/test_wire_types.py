"""The editors' copies of the ``snippets/*`` message shapes, checked against wire/messages.py.

The shapes are written once, in wire/messages.py (``MESSAGES``, ``wire_shapes``; its own tests,
tests/unit/test_protocol.py, check that the description is what the server writes). The
editors' copies are generated from it by scripts/wire_types.py
(``editors/vscode/src/protocol.ts``, ``editors/nvim/lua/pi_snippets/protocol.lua``), so:

- the generated files must be what the script writes now (a field renamed in
  wire/messages.py fails here until they are regenerated);
- the editors must not keep copies of their own: no method name spelled out, no interface
  or class of a message type declared by hand;
- the fields the Lua plugin reads and sends must exist in the message they come from (no
  type checker runs on the Lua here). The TypeScript uses are checked by ``tsc`` against
  the generated interfaces (tests/editors/test_vscode_bundle.py).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pi_snippets_lsp.wire.messages import MESSAGES, wire_shapes

REPO = Path(__file__).resolve().parents[2]
LUA = REPO / "editors" / "nvim"
TS = REPO / "editors" / "vscode" / "src"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wire_types", REPO / "scripts" / "wire_types.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("wire_types", module)
    spec.loader.exec_module(module)
    return module


def fields(type_name: str) -> set[str]:
    return {field["name"] for field in wire_shapes()["types"][type_name]}


# --------------------------------------------------------------------------- the description


def test_the_generated_files_are_current() -> None:
    script = load_script()
    assert [path.relative_to(REPO).as_posix() for path in script.stale()] == []


# --------------------------------------------------------------------------- no hand copies


def editor_sources() -> list[Path]:
    return [
        path
        for path in [*LUA.rglob("*.lua"), *TS.glob("*.ts")]
        if path.name not in ("protocol.lua", "protocol.ts")
    ]


@pytest.mark.parametrize("path", editor_sources(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_editor_file_spells_a_method_or_declares_a_message_type(path: Path) -> None:
    code = "\n".join(
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if not line.lstrip().startswith(("--", "//", "*", "/*"))
    )
    for message in MESSAGES:
        assert f"'{message.method}'" not in code and f'"{message.method}"' not in code
    for name in wire_shapes()["types"]:
        assert not re.search(rf"\binterface {name}\b|@class pi_snippets\.{name}\b", code)


# --------------------------------------------------------------------------- the Lua plugin

#: Where the Lua plugin holds a ``snippets/*`` value: file -> variable -> the types it
#: may hold. Every file that sends a ``snippets/*`` request or handles the notification
#: must be listed (``test_every_lua_file_that_speaks_the_protocol_is_checked``).
LUA_VALUES: dict[str, dict[str, tuple[str, ...]]] = {
    "lua/pi_snippets/client.lua": {
        "result": ("SnippetsListing",),
        "known": ("SnippetsListing",),
        "notice": ("LoadNotice",),
    },
    "lua/pi_snippets/commands.lua": {
        "result": ("ExpandResult", "SnippetsListing"),
        "s": ("Snippet",),
    },
    "lua/pi_snippets/health.lua": {"result": ("SnippetsListing",)},
    "lua/pi_snippets/edit.lua": {"listing": ("SnippetsListing",), "s": ("Snippet",)},
    "lsp/pi_snippets.lua": {},
}

_READ = re.compile(r"(?<![\w.:])(\w+)(?:\.(\w+)|\[\s*'(\w+)'\s*\]|\[\s*\"(\w+)\"\s*\])")
_REQUEST = re.compile(r"\brequest\(\s*method\.(\w+)\s*,\s*\{([^{}]*)\}")
_TYPED_TABLE = re.compile(r"---\s*@type\s+pi_snippets\.(\w+)\s*\n\s*local\s+\w+\s*=\s*\{([^{}]*)\}")
_KEY = re.compile(r"(?:^|,)\s*(?:(\w+)|\[\s*'(\w+)'\s*\])\s*=")


def lua_reads(code: str, variables: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """``(variable, field)`` for every field read off one of ``variables`` in ``code``."""
    reads = []
    for match in _READ.finditer(strip_lua_comments(code)):
        name, field = match[1], match[2] or match[3] or match[4]
        if name in variables:
            reads.append((name, field))
    return reads


def lua_sent_keys(code: str) -> list[tuple[str, set[str]]]:
    """``(params type, keys)`` for each table literal sent as a request's params, and
    each table declared ``--- @type pi_snippets.T``."""
    shapes = wire_shapes()
    by_key = {m.method.removeprefix("snippets/"): m.method for m in MESSAGES}
    sent = []
    for match in _REQUEST.finditer(strip_lua_comments(code)):
        method = by_key[match[1]]
        keys = {k[0] or k[1] for k in _KEY.findall(match[2])}
        sent.append((shapes["methods"][method]["params"], keys))
    for match in _TYPED_TABLE.finditer(code):
        sent.append((match[1], {k[0] or k[1] for k in _KEY.findall(match[2])}))
    return sent


def strip_lua_comments(code: str) -> str:
    return re.sub(r"--[^\n]*", "", code)


@pytest.mark.parametrize("relative", list(LUA_VALUES))
def test_the_lua_plugin_reads_only_fields_its_messages_have(relative: str) -> None:
    code = (LUA / relative).read_text(encoding="utf-8")
    variables = LUA_VALUES[relative]
    unknown = [
        f"{name}.{field}"
        for name, field in lua_reads(code, variables)
        if not any(field in fields(type_name) for type_name in variables[name])
    ]
    assert unknown == []


@pytest.mark.parametrize("relative", list(LUA_VALUES))
def test_the_lua_plugin_sends_only_fields_its_params_have(relative: str) -> None:
    code = (LUA / relative).read_text(encoding="utf-8")
    for type_name, keys in lua_sent_keys(code):
        assert keys <= fields(type_name), (type_name, keys)


def test_every_lua_file_that_speaks_the_protocol_is_checked() -> None:
    speaking = {
        path.relative_to(LUA).as_posix()
        for path in LUA.rglob("*.lua")
        if path.name != "protocol.lua" and "protocol').method" in path.read_text(encoding="utf-8")
    }
    assert speaking <= set(LUA_VALUES)


def test_the_lua_checks_see_a_renamed_field() -> None:
    """What the checks above would say if the plugin lagged behind a rename."""
    code = (
        "local function f(result) return result.changed, result['modified'], result.text end\n"
        "-- result.ignored in a comment\n"
        "client:request(method.expand, { text = 'x', document = uri }, cb)\n"
        "--- @type pi_snippets.ListParams\n"
        "local params = { uri = u, folder = f }\n"
    )
    reads = lua_reads(code, {"result": ("ExpandResult",)})
    assert reads == [("result", "changed"), ("result", "modified"), ("result", "text")]
    assert lua_sent_keys(code) == [
        ("ExpandParams", {"text", "document"}),
        ("ListParams", {"uri", "folder"}),
    ]


def test_the_lua_plugin_reads_what_the_checks_expect() -> None:
    """The checks are not vacuous: the plugin's reads are found where they are."""
    found: dict[str, set[str]] = {}
    for relative, variables in LUA_VALUES.items():
        code = (LUA / relative).read_text(encoding="utf-8")
        for _name, field in lua_reads(code, variables):
            found.setdefault(relative, set()).add(field)
    expected: dict[str, Any] = {
        "lua/pi_snippets/client.lua": {"shortcut"},
        "lua/pi_snippets/commands.lua": {
            "changed",
            "text",
            "snippets",
            "shortcut",
            "expandOnCompletion",
            "warnings",
            "name",
            "preview",
        },
        "lua/pi_snippets/health.lua": {"snippets", "shortcut", "expandOnCompletion", "warnings"},
        "lua/pi_snippets/edit.lua": {"snippets", "name"},
    }
    assert found == expected
