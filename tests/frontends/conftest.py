"""Shared helpers for the agent-frontend tests: real servers, settings folders, ports.

Every server gets its own ``PI_CODING_AGENT_DIR`` so no test reads the real
``~/.pi/agent/settings.json``, and every process a test starts is ended by the fixture
that started it, even when the test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_snippets_lsp.client import SnippetsClient

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "settings.json"
SERVER = [sys.executable, "-m", "pi_snippets_lsp"]
#: Seconds any single wait in these tests may take before it counts as a hang.
TIMEOUT = 30.0


def write_settings(path: Path, namespace: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"piSimpleSnippets": namespace}), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty agent folder, used by the in-process API and every server of the test."""
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    # The daemons' folder (socket, token file), private to the test: the daemons started
    # and the clients connecting (which read the token there) share it.
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return folder


ClientFactory = Callable[..., SnippetsClient]


def _stop_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(TIMEOUT)


@pytest.fixture
def tcp_servers(home: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[bytes], int]]]:
    """``start(*args)`` -> (process, port): ``pi-snippets-lsp --tcp`` on a free port."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> tuple[subprocess.Popen[bytes], int]:
        port = free_port()
        proc = subprocess.Popen(
            [*SERVER, "--tcp", "--host", "127.0.0.1", "--port", str(port), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(home)},
        )
        started.append(proc)
        return proc, port

    yield start
    for proc in started:
        _stop_process(proc)


@pytest.fixture(params=["stdio", "tcp"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def connect(
    transport: str, home: Path, tcp_servers: Callable[..., tuple[subprocess.Popen[bytes], int]]
) -> Iterator[ClientFactory]:
    """``connect(settings=..., **kw)`` -> a handshaken client over the test's transport.

    The client's ``server_process`` attribute is the server process in both cases.
    """
    clients: list[SnippetsClient] = []

    def factory(settings: Path | None = None, **kwargs: Any) -> SnippetsClient:
        kwargs.setdefault("init_options", {"pollInterval": 0})
        kwargs.setdefault("timeout", TIMEOUT)
        if transport == "stdio":
            client = SnippetsClient.start(
                settings=settings, env={"PI_CODING_AGENT_DIR": str(home)}, **kwargs
            )
            proc = client.process
        else:
            args = ["--settings", str(settings)] if settings is not None else []
            proc, port = tcp_servers(*args)
            # The daemon was started just now: on a loaded machine (or beside the other
            # pytest workers) it may take longer than the client's default two seconds to
            # listen. Waiting for our own server is no test of the retry itself.
            kwargs.setdefault("retry", TIMEOUT)
            client = SnippetsClient.connect("127.0.0.1", port, **kwargs)
        client.server_process = proc  # type: ignore[attr-defined]
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.close()


@pytest.fixture
def stdio_client(home: Path) -> Iterator[ClientFactory]:
    """``start(**kw)`` -> a client over stdio, closed after the test."""
    clients: list[SnippetsClient] = []

    def factory(**kwargs: Any) -> SnippetsClient:
        kwargs.setdefault("init_options", {"pollInterval": 0})
        kwargs.setdefault("timeout", TIMEOUT)
        env = {"PI_CODING_AGENT_DIR": str(home), **kwargs.pop("env", {})}
        client = SnippetsClient.start(env=env, **kwargs)
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.close()
