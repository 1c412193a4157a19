"""The server bundled in the VS Code extension runs on its own.

``editors/vscode/bundle_python.py`` installs the server and its dependencies for CPython 3.11,
3.12 and 3.13 (pydantic-core and regex are compiled per version); ``bundled/tool/launch.py``
puts the set matching the interpreter first on ``sys.path``; the extension runs it as
``python -I -S launch.py --stdio``. These tests build the bundle into a temporary folder (or use
``$PI_SNIPPETS_VSCODE_BUNDLE``, a ``bundled/`` folder with ``libs/`` and ``tool/``) and check:

- it imports with no site-packages at all, under each supported CPython found on the machine
  (``python -I -S``, only the bundle on the path), and nothing comes from outside it and the
  standard library;
- the launcher serves an LSP session (initialize, completion, ``snippets/expand``) under each
  supported CPython found (scripts/pythons.py looks for them: pyenv, PATH; a missing one is a
  skip that names where it looked), and a broken ``pygls`` in the interpreter's environment
  or on ``PYTHONPATH`` changes nothing;
- an interpreter it has no compiled parts for gets a clear message;
- the extension's rules for choosing the server command (``editors/vscode/src/launch.ts``),
  with Node's test runner.

Building needs PyPI (and the Node test needs npm for esbuild): without them the tests are
skipped, unless ``$CI`` is set, where they fail.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
LAUNCHER = VSCODE / "bundled" / "tool" / "launch.py"
SUPPORTED = ("3.11", "3.12", "3.13")
SETTINGS = REPO / "examples" / "settings.json"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _load_pythons() -> ModuleType:
    """scripts/pythons.py: the claimed CPython versions and where each is on this machine."""
    spec = importlib.util.spec_from_file_location("pythons", REPO / "scripts" / "pythons.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pythons = _load_pythons()


def find_cpython(version: str) -> str | None:
    """A CPython ``version`` (``"3.12"``) on this machine: the running one if it is that
    version, else scripts/pythons.py's lookup (pyenv, PATH, /usr)."""
    if "{}.{}".format(*sys.version_info[:2]) == version and sys.implementation.name == "cpython":
        return sys.executable
    found: str | None = pythons.find(version)
    return found


def no_cpython(version: str) -> str:
    """The skip reason when CPython ``version`` is missing: where it was looked for."""
    looked = ", ".join(["pyenv prefix " + version, *pythons.candidates(version)])
    return f"no CPython {version} on this machine (looked in: {looked})"


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``bundled/`` folder: ``libs/`` (built here unless given) and ``tool/launch.py``."""
    given = os.environ.get("PI_SNIPPETS_VSCODE_BUNDLE")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("vscode-bundle") / "bundled"
    built = subprocess.run(
        [sys.executable, str(VSCODE / "bundle_python.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if built.returncode != 0:
        _unavailable(f"bundle_python.py failed:\n{built.stderr[-3000:]}")
    (out / "tool").mkdir()
    shutil.copy2(LAUNCHER, out / "tool" / "launch.py")
    return out


# Run with -I -S: only the standard library is on sys.path until the bundle is added.
IMPORT_CHECK = r"""
import json, sys, sysconfig
libs, tag = sys.argv[1], sys.argv[2]
before = list(sys.path)
sys.path[0:0] = [libs + "/" + tag, libs + "/common"]
import pi_snippets_lsp, pi_snippets_lsp.cli, pi_snippets_lsp.lsp.server
import pygls.lsp.server, lsprotocol.types, pydantic, pydantic_core, regex
stdlib = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
outside = sorted(
    name + " " + f
    for name, m in list(sys.modules.items())
    for f in [getattr(m, "__file__", None)]
    if f and not f.startswith(libs) and not any(f.startswith(s) for s in stdlib)
)
print(json.dumps({
    "site": [p for p in before if "site-packages" in p or "dist-packages" in p],
    "outside": outside,
    "core": pydantic_core._pydantic_core.__file__,
    "regex": regex._regex.__file__,
    "version": pi_snippets_lsp.__version__,
}))
"""


@pytest.mark.parametrize("version", SUPPORTED)
def test_bundle_imports_with_no_site_packages(bundle: Path, version: str) -> None:
    python = find_cpython(version)
    if python is None:
        pytest.skip(no_cpython(version))
    libs = bundle / "libs"
    tag = "cp" + version.replace(".", "")
    out = subprocess.run(
        [python, "-I", "-S", "-c", IMPORT_CHECK, str(libs), tag],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["site"] == [], "python -I -S still had site-packages on sys.path"
    assert found["outside"] == [], "modules imported from outside the bundle and the stdlib"
    assert found["core"].startswith(str(libs / tag)), found["core"]
    assert found["regex"].startswith(str(libs / tag)), found["regex"]
    manifest = json.loads((libs / "bundle.json").read_text())
    assert manifest["pythons"] == list(SUPPORTED)
    assert manifest["server"] == found["version"]


def test_bundle_carries_compiled_parts_per_version_and_pure_ones_once(bundle: Path) -> None:
    libs = bundle / "libs"
    assert sorted(p.name for p in libs.iterdir() if p.is_dir()) == [
        "common",
        *("cp" + v.replace(".", "") for v in SUPPORTED),
    ]
    for version in SUPPORTED:
        tag = "cp" + version.replace(".", "")
        names = {p.name for p in (libs / tag).iterdir()}
        assert {"pydantic_core", "regex"} <= names
        assert "pygls" not in names, "pure-Python packages belong in libs/common"
        assert list((libs / tag).rglob(f"*.cpython-{tag[2:]}*")), f"no compiled module for {tag}"
    common = {p.name for p in (libs / "common").iterdir()}
    assert {"pi_snippets_lsp", "pygls", "lsprotocol", "pydantic"} <= common
    assert not list(libs.rglob("direct_url.json")), "the build machine's paths leak into the bundle"
    assert not (libs / "common" / "bin").exists()


def run_launcher(
    python: str, bundle: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -I -S launch.py ARGS``, as the extension starts it."""
    return subprocess.run(
        [python, "-I", "-S", str(bundle / "tool" / "launch.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_launcher_runs_the_server_cli(bundle: Path) -> None:
    out = run_launcher(
        sys.executable,
        bundle,
        "expand",
        "--settings",
        str(SETTINGS),
        stdin="Please %use-mcp.",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Please Use your MCP tools to find the information."


def test_a_broken_pygls_in_the_environment_changes_nothing(bundle: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    broken = tmp_path / "pythonpath"
    for root in (site, broken):
        for package in ("pygls", "pi_snippets_lsp", "pydantic"):
            (root / package).mkdir(parents=True, exist_ok=True)
            (root / package / "__init__.py").write_text(
                f"raise ImportError('the wrong {package}')\n"
            )
    env = {**os.environ, "PYTHONPATH": str(broken)}
    shadowed = subprocess.run(
        [python, "-c", "import pygls"], capture_output=True, text=True, env=env, check=False
    )
    assert "the wrong pygls" in shadowed.stderr, "the broken pygls is not in the way"

    out = run_launcher(
        python,
        bundle,
        "expand",
        "--settings",
        str(SETTINGS),
        stdin="%review",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Review"), out.stdout


def test_an_interpreter_without_compiled_parts_gets_a_clear_message(
    bundle: Path, tmp_path: Path
) -> None:
    """A bundle without the running interpreter's set, as for a Python 3.14."""
    partial = tmp_path / "bundled"
    shutil.copytree(bundle / "tool", partial / "tool")
    tag = "cp{}{}".format(*sys.version_info[:2])
    others = [v for v in SUPPORTED if "cp" + v.replace(".", "") != tag]
    (partial / "libs").mkdir()
    for version in others:
        (partial / "libs" / ("cp" + version.replace(".", ""))).mkdir()
    out = run_launcher(sys.executable, partial, "--stdio")
    assert out.returncode == 2
    assert out.stdout == ""
    assert f"compiled parts for CPython {', '.join(others)} only" in out.stderr
    assert sys.executable in out.stderr
    assert "piSimpleSnippets.serverPath" in out.stderr


@pytest_asyncio.fixture(params=SUPPORTED)
async def bundled_client(
    request: pytest.FixtureRequest, bundle: Path, tmp_path: Path
) -> AsyncIterator[LanguageClient]:
    """What the extension starts, under each claimed CPython: ``python3.X -I -S launch.py
    --stdio``, with a broken ``pygls`` on ``PYTHONPATH`` that must not be imported."""
    python = find_cpython(request.param)
    if python is None:
        pytest.skip(no_cpython(request.param))
    home = tmp_path / "agent"
    home.mkdir()
    shutil.copy2(SETTINGS, home / "settings.json")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(home), "PYTHONPATH": str(tmp_path)}
    (tmp_path / "pygls").mkdir()
    (tmp_path / "pygls" / "__init__.py").write_text("raise ImportError('the wrong pygls')\n")
    command = [python, "-I", "-S", str(bundle / "tool" / "launch.py"), "--stdio"]
    client = await ClientServerConfig(server_command=command, server_env=env).start()
    exe = Path(f"/proc/{client._server.pid}/exe") if client._server else None
    if exe is not None and exe.exists():  # Linux: the process runs that very interpreter
        assert exe.resolve() == Path(python).resolve()
    loaded = asyncio.Event()

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        pass

    # VS Code's capabilities declare refreshSupport, so every load asks for one: an
    # unanswered request that lands once the test has started would fail it.
    @client.feature(types.WORKSPACE_SEMANTIC_TOKENS_REFRESH)
    def refresh(params: None) -> None:
        pass

    @client.feature("snippets/didLoad")
    def did_load(params: Any) -> None:
        loaded.set()

    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"notifications": ["snippets/didLoad"]},
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        )
    )
    await asyncio.wait_for(loaded.wait(), 30)
    yield client
    await client.shutdown_session()
    await client.stop()


async def test_bundled_server_completes_and_expands_over_stdio(
    bundled_client: LanguageClient, tmp_path: Path
) -> None:
    """A real LSP session with the bundled server under each claimed CPython (the
    initialize is the fixture's): a completion, and ``snippets/expand``."""
    uri = (tmp_path / "notes.md").as_uri()
    bundled_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text="Please %"
            )
        )
    )
    result = await bundled_client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=8),
        )
    )
    items = result.items if isinstance(result, types.CompletionList) else result or []
    assert "%use-mcp" in [item.label for item in items]
    expanded = await bundled_client.protocol.send_request_async(
        "snippets/expand", {"text": "Please %use-mcp."}
    )
    assert expanded.text == "Please Use your MCP tools to find the information."
    assert expanded.changed is True


@pytest.fixture(scope="module")
def esbuild() -> Iterator[Path]:
    tool = VSCODE / "node_modules" / ".bin" / "esbuild"
    if not tool.exists():
        if not shutil.which("npm"):
            _unavailable("npm is not installed")
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=VSCODE,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0:
            _unavailable(f"npm ci failed:\n{done.stderr[-3000:]}")
    yield tool


def test_the_extension_typechecks_against_the_generated_protocol(esbuild: Path) -> None:
    """``tsc --noEmit`` over the extension: every ``snippets/*`` field it reads or sends
    exists in ``src/protocol.ts``, which scripts/wire_types.py writes from the server's
    wire/messages.py (tests/editors/test_wire_types.py checks that it is current)."""
    tsc = VSCODE / "node_modules" / ".bin" / "tsc"
    done = subprocess.run(
        [str(tsc), "--noEmit", "-p", str(VSCODE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("script", ["launch.test.ts", "settingsFiles.test.ts"])
def test_extension_rules(esbuild: Path, tmp_path: Path, script: str) -> None:
    """The extension's pure rules, tests/editors/vscode/*.test.ts, under Node's test runner:
    starting the server (launch.test.ts), Pi's settings files and names (settingsFiles.test.ts)."""
    node = shutil.which("node")
    if node is None:
        _unavailable("node is not installed")
        return
    bundled = tmp_path / script.replace(".ts", ".cjs")
    subprocess.run(
        [
            str(esbuild),
            str(REPO / "tests" / "editors" / "vscode" / script),
            "--bundle",
            "--platform=node",
            "--format=cjs",
            "--target=node18",
            f"--outfile={bundled}",
            "--log-level=warning",
        ],
        check=True,
        timeout=120,
    )
    env = {
        **os.environ,
        "TEST_PYTHON": sys.executable,
        "TEST_PYTHON_VERSION": "{}.{}".format(*sys.version_info[:2]),
    }
    out = subprocess.run(
        [node, "--test", str(bundled)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "# fail 0" in out.stdout
