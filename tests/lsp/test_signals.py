"""Signals (docs/lsp.md, "Daemon: who may connect, and what one client may cost";
docs/reliability.md): SIGTERM and SIGINT end the process whatever the clients do, SIGHUP
reloads every session's settings.

A process that does not end fails the wait (``STUCK`` seconds, far more than the 2 the
design promises: the promise itself is measured by scripts/bench/daemon.py, not here).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_snippets_lsp.wire.framing import MessageReader, encode

from .conftest import SERVER
from .daemons import STUCK, Daemon, Raw, daemons
from .raw import RawServer

__all__ = ["daemons"]  # the fixture


def big_settings(home: Path) -> None:
    snippets = {f"s{i}": f"{i} " + "x" * 4096 for i in range(128)}
    (home / "settings.json").write_text(json.dumps({"piSimpleSnippets": {"snippets": snippets}}))


def stdio_server(home: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*SERVER, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(home)},
    )


def initialize(proc: subprocess.Popen[bytes]) -> None:
    """``initialize``, and its answer read: the server is up (its signal handlers too)."""
    assert proc.stdin is not None and proc.stdout is not None
    params = {"capabilities": {}, "initializationOptions": {"pollInterval": 0}}
    proc.stdin.write(encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    proc.stdin.flush()
    reader = MessageReader(proc.stdout)
    while (message := reader.read()) is not None and message.get("id") != 1:
        pass


def fill_stdout(proc: subprocess.Popen[bytes]) -> None:
    """Initialize, then ask for answers (0.5 MB each) that nobody reads, until the
    server's stdout is full and it stops reading."""
    initialize(proc)
    data = b"".join(
        [
            encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            *(
                encode({"jsonrpc": "2.0", "id": i, "method": "snippets/list", "params": {}})
                for i in range(2, 200)
            ),
        ]
    )

    def write() -> None:
        try:
            assert proc.stdin is not None
            proc.stdin.write(data)
            proc.stdin.flush()
        except OSError:
            pass

    threading.Thread(target=write, daemon=True).start()
    time.sleep(2)  # the pipe (64 KiB) is full long before


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stdio_server_whose_reader_stopped_ends_on_a_signal(tmp_path: Path, signum: int) -> None:
    big_settings(tmp_path)
    proc = stdio_server(tmp_path)
    try:
        fill_stdout(proc)
        assert proc.poll() is None
        proc.send_signal(signum)
        assert proc.wait(STUCK) == 1  # no shutdown came: as the end of the input would
    finally:
        proc.kill()
        proc.wait(STUCK)


def test_a_stdio_server_whose_reader_stopped_ends_when_its_input_closes(
    tmp_path: Path,
) -> None:
    """The client writes until the server stops reading it (its answers are not read),
    then closes its input: the server ends (after --stuck-timeout without progress)."""
    big_settings(tmp_path)
    proc = stdio_server(tmp_path, "--stuck-timeout", "1")
    try:
        initialize(proc)
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        os.set_blocking(fd, False)
        requests = b"".join(
            encode({"jsonrpc": "2.0", "id": i, "method": "snippets/list", "params": {}})
            for i in range(2, 5000)
        )
        view = memoryview(requests)
        progress = time.monotonic()
        while view and time.monotonic() - progress < 1.5:
            try:
                view = view[os.write(fd, view) :]
                progress = time.monotonic()
            except BlockingIOError:
                time.sleep(0.05)
        assert view, "the server kept reading a client that does not read"
        proc.stdin.close()
        assert proc.wait(STUCK) == 1
    finally:
        proc.kill()
        proc.wait(STUCK)


def test_the_daemon_ends_on_sigterm_during_long_work(daemons: Callable[..., Daemon]) -> None:
    """A session computing semantic tokens of a 16 MB document on a worker thread, and
    one that never reads: SIGTERM still ends the daemon, with status 0."""
    daemon = daemons("--tcp")
    busy = Raw.tcp(daemon)
    busy.handshake({"a": "A"})
    text = "x %a y " * 2_400_000
    item = {"uri": "untitled:big", "languageId": "markdown", "version": 1, "text": text}
    busy.send(
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}
    )
    params = {"textDocument": {"uri": "untitled:big"}}
    busy.send(
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/semanticTokens/full", "params": params}
    )
    time.sleep(1)
    assert daemon.signal(signal.SIGTERM) == 0
    assert not daemon.token_file.exists()


def test_sighup_reloads_every_session(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--tcp")
    settings = daemon.home / "settings.json"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"a": "old"}}}))
    sessions = [Raw.tcp(daemon), Raw.tcp(daemon)]
    for session in sessions:
        session.handshake({})  # pollInterval 0: nothing watches the file
        assert session.expand(2, "%a")["result"]["text"] == "old"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"a": "new"}}}))
    daemon.process.send_signal(signal.SIGHUP)
    for session in sessions:
        deadline = time.monotonic() + STUCK
        while session.expand(3, "%a")["result"]["text"] != "new":
            assert time.monotonic() < deadline, "SIGHUP did not reload"
            time.sleep(0.05)
    assert daemon.alive()
    assert daemon.signal(signal.SIGTERM) == 0


def test_sighup_reloads_a_stdio_session(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"a": "old"}}}))
    server = RawServer(tmp_path)
    server.start()

    def expand() -> str:
        answer = server.response(server.request("snippets/expand", {"text": "%a"}))
        return str(answer["result"]["text"])

    assert expand() == "old"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"a": "new"}}}))
    server.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + STUCK
    while expand() != "new":
        assert time.monotonic() < deadline, "SIGHUP did not reload"
        time.sleep(0.05)
    assert server.process.poll() is None
    server.process.kill()
    server.process.wait(STUCK)
