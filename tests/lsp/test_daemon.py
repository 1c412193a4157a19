"""``--tcp`` / ``--ws``: one process, a session per connection (docs/lsp.md, "Command
line"; docs/reliability.md).

Sessions run concurrently and never see each other's messages; a connection that ends,
however it ends, ends only its own session; a signal ends the daemon with status 0.
Every wait is bounded: a daemon that hangs fails the test.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.sync import client as ws_client

from .conftest import SERVER
from .daemons import STUCK, Daemon, Raw, client, daemons

__all__ = ["daemons"]  # the fixture


def test_concurrent_sessions_see_only_their_own_answers(daemons: Callable[..., Daemon]) -> None:
    """Four clients with different initializationOptions expand at the same time."""
    daemon = daemons()
    names = ["alpha", "beta", "gamma", "delta"]
    wrong: list[str] = []
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            with client(daemon, name) as session:
                for i in range(150):
                    answer = session.expand(f"%who {i}").text
                    if answer != f"{name} {i}":
                        wrong.append(f"{name} got {answer!r}")
                assert [s.name for s in session.list().snippets] == ["who"]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(STUCK * 3)
    assert not any(t.is_alive() for t in threads), "a session hung"
    assert errors == [] and wrong == []
    assert daemon.alive()


def test_documents_and_settings_are_per_session(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons()
    one, two = Raw.tcp(daemon), Raw.tcp(daemon)
    one.handshake({"a": "one"})
    two.handshake({"a": "two"})
    uri = "untitled:prompt"
    one.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "md", "version": 1, "text": "%"}},
        }
    )
    position = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}}
    one.send({"jsonrpc": "2.0", "id": 5, "method": "textDocument/completion", "params": position})
    two.send({"jsonrpc": "2.0", "id": 5, "method": "textDocument/completion", "params": position})
    assert one.response(5)["result"]["items"][0]["label"] == "%a"
    assert two.response(5)["result"] is None  # two never opened the document
    assert one.expand(6, "%a")["result"]["text"] == "one"
    assert two.expand(6, "%a")["result"]["text"] == "two"
    one.close()
    two.close()


def test_a_probe_that_connects_and_closes_ends_nothing(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons()
    with client(daemon, "kept") as session:
        for _ in range(5):
            socket.create_connection(("127.0.0.1", daemon.port), timeout=STUCK).close()
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=STUCK) as probe:
            probe.sendall(b"GET / HTTP/1.0\r\n\r\n")  # a confused health check
        assert session.expand("%who").text == "kept"
    assert daemon.alive()
    with client(daemon, "later") as later:
        assert later.expand("%who").text == "later"


def test_exit_from_one_client_leaves_the_others_working(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons()
    leaving, staying = Raw.tcp(daemon), Raw.tcp(daemon)
    leaving.handshake({"a": "leaving"})
    staying.handshake({"a": "staying"})
    leaving.send({"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
    assert leaving.response(9) == {"jsonrpc": "2.0", "id": 9, "result": None}
    leaving.send({"jsonrpc": "2.0", "method": "exit"})
    assert leaving.receive() is None, "exit closes that connection"
    assert staying.expand(2, "%a")["result"]["text"] == "staying"
    assert daemon.alive()
    assert "Traceback" not in daemon.log() and "SystemExit" not in daemon.log()
    staying.close()


def test_a_connection_that_drops_mid_session_ends_only_that_session(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons()
    staying = Raw.tcp(daemon)
    staying.handshake({"a": "staying"})
    dropping = Raw.tcp(daemon)
    dropping.handshake({"a": "dropping"})
    dropping.sock.sendall(b"Content-Length: 500\r\n\r\n{")  # half a message, then gone
    dropping.close()
    assert staying.expand(2, "%a")["result"]["text"] == "staying"
    assert daemon.alive()
    staying.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_daemon_cleanly(daemons: Callable[..., Daemon], signum: int) -> None:
    daemon = daemons()
    session = Raw.tcp(daemon)
    session.handshake({"a": "A"})
    assert session.expand(2, "%a")["result"]["text"] == "A"
    assert daemon.signal(signum) == 0
    assert "Traceback" not in daemon.log()
    assert session.receive() is None  # its connection was closed
    session.close()


def test_the_daemon_listens_on_loopback_by_default(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons()
    assert b"listening on tcp://127.0.0.1:" in daemon.stderr
    help_text = subprocess.run(
        [*SERVER, "--help"], capture_output=True, text=True, timeout=STUCK, check=True
    ).stdout
    assert "loopback" in help_text


def test_a_port_in_use_is_a_clear_error(daemons: Callable[..., Daemon], tmp_path: Path) -> None:
    daemon = daemons()
    proc = subprocess.run(
        [*SERVER, "--tcp", "--port", str(daemon.port)],
        capture_output=True,
        text=True,
        timeout=STUCK,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)},
    )
    assert proc.returncode != 0
    assert f"cannot listen on 127.0.0.1:{daemon.port}" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- WebSocket


def test_websocket_sessions_are_separate_too(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--ws")

    def handshake(ws: Any, name: str) -> None:
        options = {
            "pollInterval": 0,
            "piSimpleSnippets": {"snippets": {"a": name}},
            "token": daemon.token(),
        }
        ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"capabilities": {}, "initializationOptions": options},
                }
            )
        )
        ws.send(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    def expand(ws: Any, msg_id: int) -> Any:
        ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "method": "snippets/expand",
                    "params": {"text": "%a"},
                }
            )
        )
        while True:
            message = json.loads(ws.recv(timeout=STUCK))
            if message.get("id") == msg_id and "method" not in message:
                return message["result"]["text"]

    url = f"ws://127.0.0.1:{daemon.port}"
    with ws_client.connect(url, open_timeout=STUCK) as two:
        with ws_client.connect(url, open_timeout=STUCK) as one:
            handshake(one, "one")
            handshake(two, "two")
            assert expand(one, 2) == "one"
            assert expand(two, 2) == "two"
            one.send(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
        assert expand(two, 3) == "two"
    assert daemon.alive()
    assert daemon.signal(signal.SIGTERM) == 0


def test_ws_without_websockets_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['websockets'] = None; "
        "from pi_snippets_lsp.cli import main; sys.exit(main(['--ws', '--port', '0']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=STUCK,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)},
    )
    assert proc.returncode != 0
    assert 'pip install "pi-snippets-lsp[ws]"' in proc.stderr
    # A pipx install has no pip in its venv: pipx adds the extra.
    assert 'pipx inject pi-snippets-lsp "pi-snippets-lsp[ws]"' in proc.stderr
    assert "pygls[ws]" not in proc.stderr
    assert "Traceback" not in proc.stderr
