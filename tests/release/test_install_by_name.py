"""Installing by name works: README's own install lines, run as a user runs them, against a
package index on 127.0.0.1 that holds the wheel and sdist built from this checkout.

The index is pypiserver serving the two files; any other name it is asked for it redirects
to the index this machine's pip is configured with (PyPI), so the dependencies come from
where a user's would. That also means this package itself can only come from the local
index, even once a release of the same name and version is on PyPI. Only the index is
swapped, through the installers' own environment variables (``PIP_INDEX_URL`` for pipx's
pip, ``UV_DEFAULT_INDEX`` for uv); the lines are README's, character for character (each is
looked up in README.md first). Each installed command then serves: an LSP ``initialize``
round trip, the MCP server's ``initialize``, and the CLI's ``expand`` on
examples/settings.json. Everything is written under the test's temporary folder: HOME,
the XDG folders, pipx's and uv's homes, caches and bin folders.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shlex
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
VERSION = re.findall(
    r'^VERSION: Final = "([^"]+)"$',
    (REPO / "server/pi_snippets_lsp/wire/version.py").read_text(encoding="utf-8"),
    re.M,
)[0]
SETTINGS = REPO / "examples" / "settings.json"
PROMPT = b"Please %use-mcp."
EXPANDED = b"Please Use your MCP tools to find the information."
TIMEOUT_S = 300

#: README's lines, exactly as printed there.
PIPX_INSTALL = "pipx install pi-snippets-lsp"
PIPX_INJECT_WS = "pipx inject pi-snippets-lsp 'pi-snippets-lsp[ws]'"
UV_TOOL_INSTALL = "uv tool install pi-snippets-lsp"
UVX_VERSION = "uvx pi-snippets-lsp --version"
UVX_LSP = "uvx pi-snippets-lsp"
UVX_MCP = "uvx pi-snippets-lsp mcp"


def _configured_index() -> str:
    """The index this machine's pip uses: its configured ``index-url``, else PyPI's."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"].split()[0]
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    match = re.search(r"^[\w:.]*index-url='([^']+)'$", listed, re.M)
    return match.group(1) if match else "https://pypi.org/simple/"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Index:
    url: str
    dist: Path
    #: pip's and uv's download caches, shared by this module's users (as one person's
    #: machine shares them between installs), under the test's temporary folder.
    cache: Path


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """The wheel and sdist of this checkout, built as scripts/check-package.sh builds them,
    served by pypiserver on 127.0.0.1 with the machine's index behind it."""
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), str(REPO)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    names = sorted(p.name for p in dist.iterdir())
    assert names == [
        f"pi_snippets_lsp-{VERSION}-py3-none-any.whl",
        f"pi_snippets_lsp-{VERSION}.tar.gz",
    ]
    port = _free_port()
    log = dist.parent / "pypiserver.log"
    with log.open("wb") as log_file:
        server = subprocess.Popen(
            [
                sys.executable, "-m", "pypiserver", "run",
                "-i", "127.0.0.1", "-p", str(port),
                "--fallback-url", _configured_index(),
                "-a", ".", "-P", ".",
                str(dist),
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/simple/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "pi-snippets-lsp/", timeout=5) as answer:
                    assert f"pi_snippets_lsp-{VERSION}".encode() in answer.read()
                break
            except (urllib.error.URLError, ConnectionError):
                assert server.poll() is None, log.read_text(errors="replace")
                assert time.monotonic() < deadline, "pypiserver did not start"
                time.sleep(0.2)
        yield Index(url=url, dist=dist, cache=tmp_path_factory.mktemp("cache"))
    finally:
        server.terminate()
        server.wait(timeout=30)


@dataclass
class User:
    """A user's machine in a folder: HOME, pipx's and uv's homes, the index swapped."""

    root: Path
    env: dict[str, str]

    @property
    def pipx_bin(self) -> Path:
        return self.root / "pipx-bin"

    @property
    def uv_bin(self) -> Path:
        return self.root / "uv-bin"

    def run(self, line: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        """One of README's lines, split as a shell splits it, run as the user."""
        assert line in README, f"README.md no longer says: {line}"
        done = subprocess.run(
            shlex.split(line),
            input=stdin,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
            env=self.env,
            cwd=self.root,
        )
        assert done.returncode == 0, (line, done.stdout[-3000:], done.stderr[-3000:])
        return done


@pytest.fixture
def user(index: Index, tmp_path: Path) -> User:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        # The test run's own package path and venv must not leak into the installed tools.
        if key not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
        and not key.startswith(("PIPX_", "UV_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        # The tools' bin folders first, then the test venv's (pipx, uv and uvx are there).
        PATH=os.pathsep.join(
            [
                str(tmp_path / "pipx-bin"),
                str(tmp_path / "uv-bin"),
                str(Path(sys.executable).parent),
                env.get("PATH", ""),
            ]
        ),
        PIP_INDEX_URL=index.url,
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "pipx-bin"),
        PIPX_MAN_DIR=str(tmp_path / "pipx-man"),
        # pipx as most have it, on pip (pipx uses uv instead when it finds uv, as it would
        # in this venv; uv is tested by its own lines below).
        PIPX_DEFAULT_BACKEND="pip",
        UV_DEFAULT_INDEX=index.url,
        UV_TOOL_DIR=str(tmp_path / "uv-tools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "uv-bin"),
        UV_CACHE_DIR=str(index.cache / "uv"),
        PIP_CACHE_DIR=str(index.cache / "pip"),
        UV_NO_CONFIG="1",
        # The Python of this test, never one uv would download.
        UV_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never",
    )  # fmt: skip
    return User(root=tmp_path, env=env)


# --------------------------------------------------------------------------- the three jobs


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _frames(data: bytes) -> list[dict[str, object]]:
    messages = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: (\d+)", header, re.I).group(1))  # type: ignore[union-attr]
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


def check_lsp(user: User, command: list[str]) -> None:
    """An LSP session: ``initialize`` answered with our serverInfo and completion, then
    ``shutdown`` and ``exit``, exit status 0."""
    session = b"".join(
        _frame(m)
        for m in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": None, "rootUri": None, "capabilities": {}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        )
    )  # fmt: skip
    done = subprocess.run(
        [*command, "--settings", str(SETTINGS)],
        input=session,
        capture_output=True,
        timeout=TIMEOUT_S,
        check=False,
        env=user.env,
        cwd=user.root,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers = {m.get("id"): m for m in _frames(done.stdout) if "id" in m}
    result = answers[1]["result"]
    assert isinstance(result, dict)
    assert result["serverInfo"] == {"name": "pi-snippets-lsp", "version": VERSION}
    assert "completionProvider" in result["capabilities"]
    assert answers[2]["result"] is None


def check_mcp(user: User, command: list[str]) -> None:
    """The MCP server answers ``initialize`` (newline-delimited JSON on stdio) with its
    serverInfo, and ends when its input does."""
    proc = subprocess.Popen(
        [*command, "--settings", str(SETTINGS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=user.env,
        cwd=user.root,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        request = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "install-test", "version": "0"}},
        }  # fmt: skip
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            assert selector.select(timeout=TIMEOUT_S), "no answer to initialize"
        line = proc.stdout.readline()
        answer = json.loads(line)
        assert answer["id"] == 1, answer
        assert answer["result"]["serverInfo"]["version"] == VERSION
        assert "prompts" in answer["result"]["capabilities"]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()


def check_version(user: User, command: list[str]) -> None:
    done = subprocess.run(
        [*command, "--version"], capture_output=True, timeout=TIMEOUT_S, check=False, env=user.env
    )
    assert done.stdout.strip() == f"pi-snippets-lsp {VERSION}".encode(), done.stderr


def check_expand(user: User, command: list[str]) -> None:
    done = subprocess.run(
        [*command, "expand", "--settings", str(SETTINGS)],
        input=PROMPT,
        capture_output=True,
        timeout=TIMEOUT_S,
        check=False,
        env=user.env,
        cwd=user.root,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == EXPANDED


def check_is_this_checkout(site_packages: Path) -> None:
    """What was installed is the build of this checkout (no other index's file)."""
    for module in ("cli.py", "wire/version.py", "lsp/setup.py"):
        installed = site_packages / "pi_snippets_lsp" / module
        assert installed.read_bytes() == (REPO / "server/pi_snippets_lsp" / module).read_bytes()


def _site_packages(venv: Path) -> Path:
    (found,) = venv.glob("lib/python3.*/site-packages")
    return found


# --------------------------------------------------------------------------- the lines


def test_pipx_install_serves_everything_and_takes_an_extra(user: User) -> None:
    user.run(PIPX_INSTALL)
    command = [str(user.pipx_bin / "pi-snippets-lsp")]
    check_version(user, command)
    site = _site_packages(user.root / "pipx/venvs/pi-snippets-lsp")
    check_is_this_checkout(site)
    check_lsp(user, command)
    check_expand(user, command)
    check_mcp(user, [*command, "mcp"])  # the MCP server needs no extra
    # Adding an extra to the pipx install (README's line; a pipx venv has no pip).
    assert not (site / "websockets").exists()
    user.run(PIPX_INJECT_WS)
    assert (site / "websockets").is_dir()


def test_uv_tool_install(user: User) -> None:
    user.run(UV_TOOL_INSTALL)
    command = [str(user.uv_bin / "pi-snippets-lsp")]
    check_version(user, command)
    check_is_this_checkout(_site_packages(user.root / "uv-tools/pi-snippets-lsp"))
    check_lsp(user, command)
    check_mcp(user, [*command, "mcp"])
    check_expand(user, command)


def test_uvx_runs_it_without_installing(user: User) -> None:
    done = user.run(UVX_VERSION)
    assert done.stdout.strip() == f"pi-snippets-lsp {VERSION}".encode()
    assert UVX_LSP in README
    check_lsp(user, shlex.split(UVX_LSP))
    check_expand(user, shlex.split(UVX_LSP))
    assert UVX_MCP in README
    check_mcp(user, shlex.split(UVX_MCP))


def test_the_sdist_installs_too(index: Index, user: User) -> None:
    """A platform without the wheel (or a packager who asks) builds from the sdist: uv
    takes it from the same index, builds it with its declared backend, and installs it."""
    venv = user.root / "venv"
    for command in (
        ["uv", "venv", "--quiet", str(venv)],
        ["uv", "pip", "install", "--quiet", "--python", str(venv / "bin/python"),
         "--no-binary", "pi-snippets-lsp", "pi-snippets-lsp"],
    ):  # fmt: skip
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
            env=user.env,
            cwd=user.root,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    check_is_this_checkout(_site_packages(venv))
    check_expand(user, [str(venv / "bin/pi-snippets-lsp")])
