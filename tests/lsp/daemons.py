"""Helpers of the daemon tests: a daemon process, and bare clients of it.

Every daemon gets a private runtime folder of its own (``XDG_RUNTIME_DIR``), so its
socket and token file never meet another test's. Every wait is bounded: a daemon that
hangs fails the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_snippets_lsp.client import SnippetsClient
from pi_snippets_lsp.wire.daemon_files import FOLDER_NAME, SOCKET_NAME, TOKEN_NAME
from pi_snippets_lsp.wire.framing import FrameDecoder, encode, parse_message

from .conftest import SERVER

STUCK = 20.0
LISTENING = re.compile(rb"listening on (?:(tcp|ws)://([^:]+):(\d+)|unix:(\S+))")


class Daemon:
    """``pi-snippets-lsp --tcp|--ws --port 0`` or ``--socket``; the port (or socket path)
    is read from its ``listening on`` line."""

    def __init__(
        self,
        home: Path,
        flag: str,
        *args: str,
        env: dict[str, str] | None = None,
        runtime: Path | None = None,
    ) -> None:
        self.home = home
        # A short path of its own: a socket's path must fit in 108 bytes, and a test's
        # tmp_path under a parallel run's folders may not leave room for it. (Another
        # daemon's, to try two daemons of one user.)
        self.runtime = runtime or Path(tempfile.mkdtemp(prefix="pi-run-"))
        os.chmod(self.runtime, 0o700)
        given_port = "--port" in args
        port = ["--port", "0"] if flag in ("--tcp", "--ws") and not given_port else []
        self.process = subprocess.Popen(
            [*SERVER, flag, *port, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={
                **os.environ,
                "PI_CODING_AGENT_DIR": str(home),
                "XDG_RUNTIME_DIR": str(self.runtime),
                **(env or {}),
            },
        )
        self.stderr = b""
        self._ready = threading.Event()
        self.port = 0
        self.path = ""
        threading.Thread(target=self._read_stderr, daemon=True).start()
        if not self._ready.wait(STUCK):
            self.process.kill()
            raise AssertionError(f"the daemon never listened: {self.stderr!r}")

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr += line
            if (match := LISTENING.search(line)) and not self._ready.is_set():
                if match[4]:
                    self.path = match[4].decode()
                else:
                    self.port = int(match[3])
                self._ready.set()

    @property
    def folder(self) -> Path:
        return self.runtime / FOLDER_NAME

    @property
    def token_file(self) -> Path:
        return self.folder / TOKEN_NAME

    @property
    def socket_file(self) -> Path:
        return self.folder / SOCKET_NAME

    def token(self) -> str:
        return self.token_file.read_text(encoding="utf-8").strip()

    def alive(self) -> bool:
        return self.process.poll() is None

    def signal(self, signum: int) -> int:
        self.process.send_signal(signum)
        return self.process.wait(STUCK)

    def log(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def logged(self, text: str) -> bool:
        """Whether the daemon writes ``text`` to its log within ``STUCK`` seconds (its
        stderr is read by a thread: a line may arrive after the event it tells of)."""
        deadline = time.monotonic() + STUCK
        while text not in self.log():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(
        flag: str = "--tcp",
        *args: str,
        env: dict[str, str] | None = None,
        runtime: Path | None = None,
    ) -> Daemon:
        home = tmp_path / f"daemon{len(started)}"
        home.mkdir()
        daemon = Daemon(home, flag, *args, env=env, runtime=runtime)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        if daemon.alive():
            daemon.process.kill()
            daemon.process.wait(STUCK)
        shutil.rmtree(daemon.runtime, ignore_errors=True)


class Raw:
    """A bare framed connection (TCP or Unix socket): send what we like, read what comes."""

    def __init__(self, sock: socket.socket, token: str | None = None) -> None:
        self.sock = sock
        self.sock.settimeout(STUCK)
        self.token = token
        self.decoder = FrameDecoder()
        self.pending: list[dict[str, Any]] = []

    @classmethod
    def tcp(cls, daemon: Daemon, *, token: bool = True) -> Raw:
        sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=STUCK)
        return cls(sock, daemon.token() if token else None)

    @classmethod
    def unix(cls, path: str | Path) -> Raw:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(STUCK)
        sock.connect(str(path))
        return cls(sock)

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(encode(message))

    def receive(self) -> dict[str, Any] | None:
        while not self.pending:
            try:
                data = self.sock.recv(65536)
            except ConnectionResetError:
                data = b""
            if not data:
                return None
            self.decoder.feed(data)
            for item in self.decoder.frames():
                assert isinstance(item, bytes)
                message = parse_message(item)
                assert isinstance(message, dict)
                self.pending.append(message)
        return self.pending.pop(0)

    def response(self, msg_id: int) -> dict[str, Any]:
        while (message := self.receive()) is not None:
            if message.get("id") == msg_id and "method" not in message:
                return message
        raise AssertionError(f"the connection closed before answering {msg_id}")

    def initialize(self, snippets: dict[str, str], **options: Any) -> dict[str, Any]:
        init: dict[str, Any] = {"pollInterval": 0, "piSimpleSnippets": {"snippets": snippets}}
        if self.token is not None:
            init["token"] = self.token
        init.update(options)
        params = {"capabilities": {}, "initializationOptions": init}
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        return self.response(1)

    def handshake(self, snippets: dict[str, str], **options: Any) -> None:
        assert "result" in self.initialize(snippets, **options)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def expand(self, msg_id: int, text: str) -> dict[str, Any]:
        self.send(
            {"jsonrpc": "2.0", "id": msg_id, "method": "snippets/expand", "params": {"text": text}}
        )
        return self.response(msg_id)

    def close(self) -> None:
        self.sock.close()


def client(daemon: Daemon, name: str) -> SnippetsClient:
    """A ``SnippetsClient`` session of ``daemon`` whose one snippet ``who`` is ``name``."""
    options = {"pollInterval": 0, "piSimpleSnippets": {"snippets": {"who": name}}}
    if daemon.path:
        return SnippetsClient.connect(unix_socket=daemon.path, init_options=options, timeout=STUCK)
    return SnippetsClient.connect(
        "127.0.0.1",
        daemon.port,
        token_file=daemon.token_file,
        init_options=options,
        timeout=STUCK,
    )


def ws_message(method: str, msg_id: int | None = None, params: Any = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if msg_id is not None:
        message["id"] = msg_id
    return json.dumps(message)
