"""The real agents (Claude Code, Gemini CLI, Codex) against the real MCP server.

The agents install from npm, pinned by tests/agents/node/package-lock.json, into a cache
folder (tests/agents/node/setup.sh; a no-op once installed). Without npm, or with the npm
registry unreachable and nothing cached, the tests are skipped; any other install failure
fails them. Each agent runs in its own HOME under the test's tmp folder, no login, its
model endpoint pointed at ``FakeModel`` on 127.0.0.1 (the only network it is given), and
its terminal UI in a private tmux server where a test needs the UI.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .fake_model import FakeModel

NODE = Path(__file__).parent / "node"
#: ``npm ci`` downloads about 250 MB the first time.
INSTALL_TIMEOUT = 900
#: Seconds a test waits for something an agent does in a few (start-up, a turn): a hang
#: fails the test, not the run. Generous: two cores shared with a whole build.
PATIENCE = 90.0
SNIPPETS = {
    "review": "Review this diff carefully",
    "brief": "Answer in three sentences at most.",
}
API_KEY = "sk-ant-api03-fake-key-for-tests-0123456789abcdefghijklmnop"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _npm_reachable() -> bool:
    if shutil.which("npm") is None:
        return False
    try:
        done = subprocess.run(["npm", "ping"], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


@pytest.fixture(scope="session")
def agents_bin() -> Path:
    """The folder with ``claude``, ``gemini`` and ``codex``, installed if need be."""
    if shutil.which("node") is None or shutil.which("bash") is None:
        if in_ci():
            pytest.fail("the real-agent tests need node and npm in CI")
        pytest.skip("the real-agent tests need node and npm")
    install = subprocess.run(
        ["bash", str(NODE / "setup.sh")], capture_output=True, text=True, timeout=INSTALL_TIMEOUT
    )
    if install.returncode != 0:
        if not _npm_reachable():
            pytest.skip(
                "npm's registry is unreachable, and the agents are not cached:\n"
                + install.stderr[-2000:]
            )
        pytest.fail(f"installing the agents failed:\n{install.stderr[-4000:]}")
    return Path(install.stdout.strip().splitlines()[-1]) / "node_modules" / ".bin"


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    fake = FakeModel()
    yield fake
    fake.close()


def server_command(settings: Path) -> list[str]:
    """The MCP server as an agent starts it: this interpreter, this checkout."""
    return [sys.executable, "-m", "pi_snippets_lsp", "mcp", "--settings", str(settings)]


def server_env() -> dict[str, str]:
    """What the MCP server needs from the environment when agents pass it only what
    their config names (Codex does): the checkout's source folder, when set."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}


@dataclass
class Place:
    """One test's folders: the agent's HOME, the project it runs in, the snippets."""

    root: Path
    bin: Path
    fake: FakeModel
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def settings(self) -> Path:
        return self.root / "settings.json"

    def write_snippets(self, snippets: dict[str, str]) -> None:
        temporary = self.settings.with_suffix(".tmp")
        temporary.write_text(
            json.dumps({"piSimpleSnippets": {"snippets": snippets}}), encoding="utf-8"
        )
        os.replace(temporary, self.settings)

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: no real HOME, no proxy, no credentials of the machine's."""
        base = {
            "PATH": os.pathsep.join(
                [str(self.bin), str(Path(sys.executable).parent), os.environ.get("PATH", "/bin")]
            ),
            "HOME": str(self.home),
            "USER": os.environ.get("USER", "root"),
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "TMPDIR": str(self.root / "tmp"),
            "PI_CODING_AGENT_DIR": str(self.root / "agent"),
            "NO_PROXY": "127.0.0.1,localhost",
            **server_env(),
        }
        return {**base, **self.extra_env, **extra}

    def run(
        self, *command: str, timeout: float = PATIENCE, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Runs an agent's command in a session of its own: on a timeout the whole
        process group goes (an agent's relaunched child and its MCP servers too)."""
        with subprocess.Popen(
            list(command),
            cwd=self.work,
            env=self.env(**(env or {})),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        ) as process:
            try:
                out, err = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                kill_group(process.pid)
                out, err = process.communicate()
                raise AssertionError(
                    f"{shlex.join(command)} did not finish in {timeout} s:\n"
                    f"{out[-2000:]}\n{err[-2000:]}"
                ) from None
            finally:
                kill_group(process.pid)
        return subprocess.CompletedProcess(list(command), process.returncode, out, err)


def kill_group(pgid: int) -> None:
    """Ends a process group that a test started, if anything of it is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


@pytest.fixture
def place(tmp_path: Path, agents_bin: Path, fake_model: FakeModel) -> Place:
    for name in ("home", "work", "tmp", "agent"):
        (tmp_path / name).mkdir()
    made = Place(root=tmp_path, bin=agents_bin, fake=fake_model)
    made.write_snippets(SNIPPETS)
    return made


class Tmux:
    """A terminal UI in a tmux server of its own (its socket under the test's folder)."""

    def __init__(self, place: Place, command: list[str], env: dict[str, str]) -> None:
        self.socket = str(place.root / "tmux.sock")
        self.place = place
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        script = f"cd {shlex.quote(str(place.work))} && exec env -i {exports} {shlex.join(command)}"
        subprocess.run(
            [
                "tmux",
                "-S",
                self.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "agent",
                "-x",
                "160",
                "-y",
                "50",
                "bash",
                "-c",
                script,
            ],
            check=True,
            timeout=30,
            env={**os.environ, "TMUX": ""},
        )
        #: The pane's process leads its own process group (tmux makes it a session
        #: leader): what ``close`` ends, since Gemini CLI outlives a hang-up.
        self.pid = int(self._tmux("display-message", "-p", "-t", "agent", "#{pane_pid}").strip())

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "agent", "-S", "-200")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "agent", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "agent", "-l", text)

    def wait(self, found: Callable[[str], bool], what: str, timeout: float = PATIENCE) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if found(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {what}:\n{screen}")
            time.sleep(0.25)

    def close(self) -> None:
        kill_group(self.pid)
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def tmux(place: Place) -> Iterator[Callable[[list[str], dict[str, str]], Tmux]]:
    if shutil.which("tmux") is None:
        if in_ci():
            pytest.fail("the terminal-UI tests need tmux in CI (scripts/test.sh installs it)")
        pytest.skip("the terminal-UI tests need tmux")
    started: list[Tmux] = []

    def start(command: list[str], env: dict[str, str]) -> Tmux:
        session = Tmux(place, command, env)
        started.append(session)
        return session

    yield start
    for session in started:
        session.close()
