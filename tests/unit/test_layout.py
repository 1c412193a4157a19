"""The package's layers, derived from its folders (CONTRIBUTING.md, "The package").

Each folder of ``server/pi_snippets_lsp/`` is a layer with one rule: which other layers
and which outside libraries its modules may import. The rules are checked on the
source (every import statement, those under ``TYPE_CHECKING`` and inside functions
included) and, for what a process loads, by importing in a fresh interpreter. A new
folder fails here until it is given its rule; a module may not sit at the top unless
it is an entry point.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

import pi_snippets_lsp

PACKAGE = Path(pi_snippets_lsp.__file__).parent
NAME = "pi_snippets_lsp"


@dataclass(frozen=True)
class Rule:
    """What the modules of one folder may import, beside their own folder and the
    standard library: these layers of the package, these outside libraries."""

    layers: frozenset[str]
    libraries: frozenset[str]


def rule(layers: str = "", libraries: str = "") -> Rule:
    return Rule(frozenset(layers.split()), frozenset(libraries.split()))


#: One rule per folder, lowest layer first.
RULES: dict[str, Rule] = {
    "core": rule(libraries="regex"),
    "settings": rule("core", "regex"),
    "wire": rule("core", "pydantic"),
    "lsp": rule("core settings wire", "pygls lsprotocol attrs cattrs pydantic websockets"),
    "mcp": rule("core settings wire"),
    "client": rule("core settings wire", "pydantic"),
    "integrations": rule("core settings wire client", "prompt_toolkit llm click"),
    # `hook` runs on every prompt of an agent: only the lowest layers (docs/agents.md).
    "agents": rule("core settings", "tomlkit"),
}
#: The modules at the top: entry points, which may import any layer.
ENTRY_POINTS = frozenset({"__init__", "__main__", "cli", "api"})


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((NAME, *parts))


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RULES) else ""


@cache
def imports_of(module: str) -> frozenset[str]:
    """Every module ``module``'s source names in an import, resolved to absolute names
    (``from pkg import sub`` counts as ``pkg.sub`` when that is a module)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES)
    return frozenset(found)


def test_every_folder_has_a_rule_and_every_top_module_is_an_entry_point() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    tops = {p.stem for p in PACKAGE.glob("*.py")}
    assert folders - set(RULES) == set()
    assert tops == ENTRY_POINTS


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer_of(m)))
def test_a_module_imports_only_from_the_layers_below_it(module: str) -> None:
    own = layer_of(module)
    allowed = RULES[own]
    wrong = []
    for name in sorted(imports_of(module)):
        root = name.split(".")[0]
        if root == NAME:
            target = layer_of(name)
            if target != own and target not in allowed.layers:
                wrong.append(name)
        elif root not in sys.stdlib_module_names and root not in allowed.libraries:
            wrong.append(name)
    assert wrong == []


def test_no_import_circle() -> None:
    graph = {m: {i for i in imports_of(m) if i in MODULES and i != m} for m in MODULES}
    # A package's __init__ runs before any of its modules: importing a module imports
    # its parents, which is no circle of the code's own making.
    circles = []
    state: dict[str, int] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def fresh_interpreter(code: str, env: dict[str, str] | None = None) -> str:
    """What ``code`` prints in a new interpreter (with ``env``, or this one's)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    ).stdout


def imported_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    return set(json.loads(fresh_interpreter(code)))


@pytest.mark.parametrize("layer", ["core", "settings", "wire"])
def test_the_lower_layers_load_no_protocol_library(layer: str) -> None:
    modules = [m for m in MODULES if layer_of(m) == layer]
    loaded = imported_after("; ".join(f"import {m}" for m in modules))
    assert not {m for m in loaded if m.split(".")[0] in {"pygls", "lsprotocol", "mcp"}}


def test_the_lsp_server_loads_neither_client_nor_integrations_nor_mcp() -> None:
    modules = imported_after("import pi_snippets_lsp.cli, pi_snippets_lsp.lsp.setup")
    assert "pi_snippets_lsp.lsp.server" in modules
    assert not {
        m
        for m in modules
        if m.startswith(("pi_snippets_lsp.client", "pi_snippets_lsp.integrations"))
        or m.split(".")[0] == "mcp"
    }


def test_the_lsp_server_never_imports_the_mcp_sdk() -> None:
    # The SDK is only the MCP tests' client: a server install lacks it.
    modules = imported_after("import pi_snippets_lsp.cli, pi_snippets_lsp.lsp.setup")
    assert not {m for m in modules if m.split(".")[0] in {"mcp", "mcp_types"}}


def test_the_mcp_answers_and_reloads_need_no_sdk_and_no_lsp() -> None:
    modules = imported_after("import pi_snippets_lsp.mcp.answers, pi_snippets_lsp.mcp.live")
    roots = {m.split(".")[0] for m in modules}
    assert not roots & {"mcp", "mcp_types", "pygls", "lsprotocol", "anyio"}


def test_the_mcp_server_loads_neither_the_sdk_nor_pydantic() -> None:
    """Agents wait for an MCP server only briefly: the server's own modules serve the
    protocol, so its start imports neither the official SDK nor pydantic (whose
    imports alone took longer than the agents wait)."""
    modules = imported_after("import pi_snippets_lsp.mcp.server")
    roots = {m.split(".")[0] for m in modules}
    assert not roots & {"mcp", "mcp_types", "pydantic", "pydantic_core", "anyio"}
    assert not roots & {"pygls", "lsprotocol"}


def test_the_mcp_command_loads_no_tls_and_no_shutil(tmp_path: Path) -> None:
    """``pi-snippets-lsp mcp`` serves stdio alone, and agents offer only the servers that
    answered within a moment of their start: it runs its event loop without ``ssl``
    (OpenSSL's load, which ``asyncio`` makes only to offer TLS), reads its command line
    without ``shutil`` (and the compressors it loads), and still serves."""
    settings = PACKAGE.parents[1] / "examples" / "settings.json"
    code = (
        "import json, os, sys; end = os._exit\n"
        "def report(code):\n"
        "    print(json.dumps(sorted(sys.modules)), flush=True); end(code)\n"
        "os._exit = report\n"
        "from pi_snippets_lsp.cli import main\n"
        f"main(['mcp', '--settings', {str(settings)!r}])"
    )
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=tmp_path,
    )
    answer, modules = done.stdout.splitlines()
    assert json.loads(answer)["result"]["serverInfo"]["name"] == "pi-snippets"
    loaded = set(json.loads(modules))
    assert "asyncio" in loaded
    assert not {m for m in loaded if m.split(".")[0] in {"ssl", "_ssl", "shutil", "bz2", "lzma"}}


def test_integration_backends_need_no_optional_library() -> None:
    # Each integration's library is an optional extra: only its own module imports it.
    modules = imported_after("import pi_snippets_lsp.integrations.backend")
    roots = {m.split(".")[0] for m in modules}
    assert not roots & {"prompt_toolkit", "llm", "click", "pygls", "lsprotocol"}


#: What only ``settings/`` may know of a settings file's stamps: an adapter that stamps or
#: reads files again on its own is a second reload loop, with rules of its own.
STAMPS = frozenset({"take_stamps", "stamp", "Stamp", "Stamps", "RETRY"})


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer_of(m) != "settings"))
def test_only_the_settings_layer_stamps_and_reloads_settings_files(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    stamped = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == f"{NAME}.settings.watch"
        for alias in node.names
    }
    made = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"SettingsWatcher", "SettingsFiles"}
    }
    assert (stamped & STAMPS, made) == (set(), set())


#: What serving LSP or MCP runs on, and no shell command needs: the protocol libraries
#: and the event loop.
SERVING_STACK = frozenset(
    {"pygls", "lsprotocol", "mcp", "mcp_types", "pydantic", "anyio", "asyncio"}
)
#: The servers' one module a shell command loads: the limits, whose defaults the
#: command line's help states (plain values).
SHARED_WITH_THE_SERVERS = frozenset({"pi_snippets_lsp.lsp", "pi_snippets_lsp.lsp.limits"})


def loaded_by_command(args: list[str], tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter holds after ``pi-snippets-lsp ARGS`` (run through
    ``cli.main``, stdin empty, settings read from ``examples/settings.json``)."""
    out = tmp_path / "modules.json"
    if args[0] != "schema":
        args = [*args, "--settings", str(PACKAGE.parents[1] / "examples" / "settings.json")]
    code = (
        "import sys, json; from pi_snippets_lsp.cli import main; "
        f"main({args!r}); "
        f"open({str(out)!r}, 'w').write(json.dumps(sorted(sys.modules)))"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        timeout=60,
        cwd=tmp_path,
    )
    return set(json.loads(out.read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    "args",
    [["expand"], ["check"], ["check", "--json"], ["schema"], ["hook", "claude-code"]],
)
def test_the_shell_commands_load_no_protocol_stack(args: list[str], tmp_path: Path) -> None:
    """``expand``, ``check``, ``schema`` and ``hook`` run on every prompt of a shell user,
    script or agent hook: they import the rules they apply, never the servers' protocol
    libraries or event loop (most of a server's start), nor the servers' modules; nor
    ``logging`` (they log nothing unless asked) or ``shutil`` (argparse's default layout
    imports it, and its compressors, for every option added)."""
    loaded = loaded_by_command(args, tmp_path)
    assert {m for m in loaded if m.split(".")[0] in SERVING_STACK} == set()
    servers = ("pi_snippets_lsp.lsp", "pi_snippets_lsp.mcp")
    assert {m for m in loaded if m.startswith(servers)} - SHARED_WITH_THE_SERVERS == set()
    assert {m for m in loaded if m.split(".")[0] in {"logging", "shutil", "bz2", "lzma"}} == set()


def test_the_agent_hook_loads_no_protocol_stack_and_no_toml() -> None:
    """``pi-snippets-lsp hook`` runs on every prompt an agent sends: it loads core and
    settings only (tomlkit is for ``setup``)."""
    modules = imported_after("import pi_snippets_lsp.agents.hook")
    roots = {m.split(".")[0] for m in modules}
    assert not roots & {"pygls", "lsprotocol", "pydantic", "mcp", "mcp_types", "tomlkit"}
    assert not {m for m in modules if m.startswith(("pi_snippets_lsp.lsp", "pi_snippets_lsp.mcp"))}


def plugins_after(statement: str, value: str | None) -> str:
    """What a fresh interpreter, with ``PYDANTIC_DISABLE_PLUGINS`` set to ``value`` (or
    unset), says of pydantic's plugins after ``statement``: whether it looked for them,
    and the variable's value then."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if value is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = value
    code = (
        f"import os; {statement}; import pydantic.plugin._loader as loader; "
        "print(loader._plugins is not None, os.environ.get('PYDANTIC_DISABLE_PLUGINS'))"
    )
    return fresh_interpreter(code, env).strip()


def test_the_server_runs_no_pydantic_plugin_unless_the_user_asks() -> None:
    """Looking for plugins reads every installed distribution's entry points (part of a
    cold start); the server's process skips it, a user's own setting stands, and a
    library user of the package (``pi_snippets_lsp.client``) keeps pydantic's default."""
    server = "import pi_snippets_lsp.cli, pi_snippets_lsp.lsp.setup"
    assert plugins_after(server, None) == "False __all__"
    assert plugins_after(server, "some_plugin") == "True some_plugin"
    library = "import pi_snippets_lsp; pi_snippets_lsp.SnippetsClient; import pydantic.main"
    assert plugins_after(library + "; pydantic.create_model('M', x=(int, 0))", None) == (
        "True None"
    )


def test_the_client_is_imported_on_first_use_of_its_names() -> None:
    assert "pi_snippets_lsp.client" not in imported_after("import pi_snippets_lsp")
    modules = imported_after("import pi_snippets_lsp; pi_snippets_lsp.SnippetsClient")
    assert "pi_snippets_lsp.client" in modules


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert {name: size for name, size in sizes.items() if size > 600} == {}


def test_contributing_maps_the_modules_of_the_tree() -> None:
    script = PACKAGE.parents[1] / "scripts" / "module_map.py"
    if not script.exists():  # a copy of the tests without the repository (mutation runs)
        pytest.skip("no scripts/module_map.py beside the package")
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout


def test_json_rpc_error_codes_are_written_only_in_wire_errors() -> None:
    """``wire/errors.py`` is the one table of codes: a number written again elsewhere can
    drift from it (the client, the MCP server and the LSP server each had a copy)."""

    def codes(path: Path) -> list[int]:
        found = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.UnaryOp)
                and isinstance(node.op, ast.USub)
                and isinstance(node.operand, ast.Constant)
                and isinstance(node.operand.value, int)
                and 32000 <= node.operand.value <= 32900
            ):
                found.append(-node.operand.value)
        return found

    table = PACKAGE / "wire" / "errors.py"
    elsewhere = {str(p.relative_to(PACKAGE)): codes(p) for p in PACKAGE.rglob("*.py") if p != table}
    assert {name: found for name, found in elsewhere.items() if found} == {}
    assert len(codes(table)) >= 10
