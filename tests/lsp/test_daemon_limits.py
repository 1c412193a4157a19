"""What one client may cost the daemon (docs/lsp.md, "Daemon: who may connect, and what
one client may cost"; docs/reliability.md).

Memory is read from ``/proc/PID/status`` (the daemon's resident set); no test asserts a
time: what a limit must do is observed (a connection closed, a warning sent, another
session answered), with generous bounds on every wait.
"""

from __future__ import annotations

import contextlib
import json
import re
import resource
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.sync import client as ws_client

from pi_snippets_lsp.wire.framing import encode

from .daemons import STUCK, Daemon, Raw, client, daemons

__all__ = ["daemons"]  # the fixture

MIB = 1024 * 1024


def rss(pid: int) -> int:
    """Resident memory of a process, in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    assert match is not None
    return int(match[1]) * 1024


def big_settings(home: Path, count: int = 128, size: int = 4096) -> None:
    """A user file whose snippets/list answer is about ``count * size`` bytes."""
    snippets = {f"s{i}": f"{i} " + "x" * size for i in range(count)}
    (home / "settings.json").write_text(json.dumps({"piSimpleSnippets": {"snippets": snippets}}))


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + STUCK
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


# --------------------------------------------------------------------------- connections


def test_connections_over_the_limit_are_closed(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--tcp", "--max-connections", "2")
    one, two = Raw.tcp(daemon), Raw.tcp(daemon)
    one.handshake({"a": "one"})
    two.handshake({"a": "two"})
    three = Raw.tcp(daemon)
    three.send(LIST)
    assert three.receive() is None, "the third connection is closed unanswered"
    assert daemon.logged("over the limit of 2")
    one.close()
    four = Raw.tcp(daemon)
    deadline = time.monotonic() + STUCK
    while True:  # one's slot frees once its session has ended
        try:
            four.handshake({"a": "four"})
            break
        except AssertionError:
            assert time.monotonic() < deadline
            four = Raw.tcp(daemon)
            time.sleep(0.1)
    assert four.expand(2, "%a")["result"]["text"] == "four"
    assert two.expand(2, "%a")["result"]["text"] == "two"


LIST = {"jsonrpc": "2.0", "id": 7, "method": "snippets/list", "params": {}}


@pytest.mark.parametrize("opening", [b"", b"Content-Length: 10\r\n\r\n{", b"GET / HTTP/1.1\r\n"])
def test_a_connection_without_initialize_is_closed(
    daemons: Callable[..., Daemon], opening: bytes
) -> None:
    daemon = daemons("--tcp", "--initialize-timeout", "1")
    raw = Raw.tcp(daemon)
    raw.sock.sendall(opening)
    assert raw.receive() is None, "closed after the initialize timeout"
    # The line is written just before the close; the thread reading the daemon's stderr
    # may see it a moment after the close is seen here.
    assert daemon.logged("no valid initialize within 1s")
    with client(daemon, "later") as session:  # an initialized session is never timed out
        time.sleep(1.5)
        assert session.expand("%who").text == "later"


def test_a_websocket_without_initialize_is_closed(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--ws", "--initialize-timeout", "1")
    url = f"ws://127.0.0.1:{daemon.port}"
    with (
        ws_client.connect(url, open_timeout=STUCK) as ws,
        pytest.raises(Exception, match=r"closed|1000|1006"),
    ):
        ws.recv(timeout=STUCK)


def test_a_partial_body_of_an_unadmitted_connection_is_released(
    daemons: Callable[..., Daemon],
) -> None:
    """60 MB of a body under the limit, from a connection that never initializes: held
    until the initialize timeout closes the connection, then released."""
    daemon = daemons("--tcp", "--initialize-timeout", "3")
    before = rss(daemon.process.pid)
    raw = Raw.tcp(daemon, token=False)
    raw.sock.sendall(b"Content-Length: 67000000\r\n\r\n")
    chunk = b"x" * MIB
    try:
        for _ in range(60):
            raw.sock.sendall(chunk)
    except OSError:
        pass  # closed already: as good
    assert raw.receive() is None
    wait_until(lambda: rss(daemon.process.pid) < before + 24 * MIB, "the body released")


def test_a_body_over_the_limit_is_refused_and_the_next_message_answered(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons("--tcp", "--max-message-size", "100000")
    raw = Raw.tcp(daemon)
    raw.handshake({"a": "A"})
    before = rss(daemon.process.pid)
    big = encode({"jsonrpc": "2.0", "id": 5, "method": "snippets/expand",
                  "params": {"text": "y" * 20 * MIB}})  # fmt: skip
    raw.sock.sendall(big)
    assert raw.expand(6, "%a")["result"]["text"] == "A"
    assert daemon.logged("over the limit of 100000 bytes")
    assert rss(daemon.process.pid) < before + 16 * MIB


# --------------------------------------------------------------------------- sessions


def test_workspace_folders_over_the_limit_are_a_warning(
    daemons: Callable[..., Daemon], tmp_path: Path
) -> None:
    daemon = daemons("--tcp", "--max-folders", "3")
    raw = Raw.tcp(daemon)
    folders = [{"uri": (tmp_path / f"f{i}").as_uri(), "name": f"f{i}"} for i in range(10)]
    raw.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "capabilities": {},
                "workspaceFolders": folders,
                "initializationOptions": {"token": daemon.token(), "pollInterval": 0},
            },
        }
    )
    raw.response(1)
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    raw.send(LIST)
    listing = raw.response(7)["result"]
    assert any("10 workspace folders, more than the limit of 3" in w for w in listing["warnings"])


def test_a_tiny_poll_interval_is_raised_with_a_warning(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--tcp")
    raw = Raw.tcp(daemon)
    raw.handshake({"a": "A"}, pollInterval=1e-6)
    raw.send(LIST)
    warnings = raw.response(7)["result"]["warnings"]
    assert any(
        "pollInterval is at least 0.25 seconds, not 1e-06; using 0.25" in w for w in warnings
    )


# --------------------------------------------------------------------------- backpressure


def flood(sock: socket.socket, requests: int, stop: threading.Event) -> None:
    """Pipeline ``requests`` snippets/list requests and never read an answer."""
    sock.settimeout(1.0)
    data = b"".join(
        encode({"jsonrpc": "2.0", "id": i + 100, "method": "snippets/list", "params": {}})
        for i in range(requests)
    )
    view = memoryview(data)
    while view and not stop.is_set():
        try:
            view = view[sock.send(view) :]
        except TimeoutError:
            continue  # the daemon has stopped reading us: the backpressure
        except OSError:
            return


def test_a_client_that_never_reads_costs_the_bound_and_slows_no_one(
    daemons: Callable[..., Daemon],
) -> None:
    """500 requests whose answers are ~0.5 MB each (250 MB) from a client that never reads:
    the daemon stops reading it once 8 MiB wait, and another session is answered."""
    daemon = daemons("--tcp", "--stuck-timeout", "600")
    big_settings(daemon.home)
    hog = Raw.tcp(daemon)
    hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    hog.handshake({})
    hog.send(LIST)
    assert len(json.dumps(hog.response(7))) > 400_000
    before = rss(daemon.process.pid)
    stop = threading.Event()
    sender = threading.Thread(target=flood, args=(hog.sock, 500, stop), daemon=True)
    sender.start()
    peak = before
    try:
        for _ in range(40):  # ~4 s of flood
            peak = max(peak, rss(daemon.process.pid))
            time.sleep(0.1)
        with client(daemon, "other") as other:  # answered while the hog is stuck
            for i in range(20):
                assert other.expand(f"%who {i}").text == f"other {i}"
                peak = max(peak, rss(daemon.process.pid))
    finally:
        stop.set()
        sender.join(STUCK)
    print(f"growth under a client that never reads: {(peak - before) / MIB:.1f} MiB")
    assert peak - before < 64 * MIB, f"the daemon grew by {(peak - before) // MIB} MiB"
    assert daemon.alive()


def test_a_client_stuck_past_the_timeout_is_closed(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--tcp", "--stuck-timeout", "1", "--max-unsent", "100000")
    big_settings(daemon.home)
    hog = Raw.tcp(daemon)
    hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    hog.handshake({})
    stop = threading.Event()
    sender = threading.Thread(target=flood, args=(hog.sock, 200, stop), daemon=True)
    sender.start()
    try:
        wait_until(lambda: "have not been read for 1s; closing" in daemon.log(), "the close")
    finally:
        stop.set()
        sender.join(STUCK)
    with client(daemon, "next") as session:
        assert session.expand("%who").text == "next"


# --------------------------------------------------------------------------- accept errors


def test_accept_errors_are_logged_at_most_once_a_second(daemons: Callable[..., Daemon]) -> None:
    """At the file-descriptor limit every accept() fails; the log says so once a second,
    with a count, instead of a traceback per failure."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))  # inherited by the daemon
    try:
        daemon = daemons("--tcp")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    held = []
    started = time.monotonic()
    try:
        for _ in range(120):
            try:
                held.append(socket.create_connection(("127.0.0.1", daemon.port), timeout=2))
            except OSError:
                break
        time.sleep(3)
        elapsed = time.monotonic() - started
    finally:
        for sock in held:
            sock.close()
    log = daemon.log()
    lines = [line for line in log.splitlines() if "accept" in line.lower()]
    assert lines, log[-2000:]
    assert len(lines) <= elapsed + 2, "\n".join(lines[:20])
    assert "Traceback" not in log
    time.sleep(1.5)  # the daemon accepts again once descriptors are free
    with client(daemon, "after") as session:
        assert session.expand("%who").text == "after"


def ws_initialize(ws: Any, daemon: Daemon, snippets: dict[str, str]) -> None:
    options = {
        "token": daemon.token(),
        "pollInterval": 0,
        "piSimpleSnippets": {"snippets": snippets},
    }
    params = {"capabilities": {}, "initializationOptions": options}
    ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    ws.recv(timeout=STUCK)
    ws.send(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))


def ws_expand(ws: Any, msg_id: int, text: str) -> str:
    params = {"text": text}
    ws.send(
        json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "snippets/expand", "params": params})
    )
    while True:
        message = json.loads(ws.recv(timeout=STUCK))
        if message.get("id") == msg_id:
            return str(message["result"]["text"])


def test_a_websocket_client_that_never_reads_costs_the_bound(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons("--ws", "--stuck-timeout", "600")
    big_settings(daemon.home)
    url = f"ws://127.0.0.1:{daemon.port}"
    # max_queue=1: once a message waits for recv(), the client stops reading its socket.
    hog = contextlib.ExitStack().enter_context(
        ws_client.connect(url, open_timeout=STUCK, max_queue=1, max_size=None)
    )
    ws_initialize(hog, daemon, {})
    before = rss(daemon.process.pid)
    peak = before
    stop = threading.Event()

    def send_all() -> None:
        for i in range(300):  # ~160 MB of answers, never read
            if stop.is_set():
                return
            hog.send(json.dumps({**LIST, "id": 100 + i}))

    sender = threading.Thread(target=send_all, daemon=True)
    sender.start()
    try:
        for _ in range(30):
            peak = max(peak, rss(daemon.process.pid))
            time.sleep(0.1)
        with ws_client.connect(url, open_timeout=STUCK) as other:
            ws_initialize(other, daemon, {"who": "other"})
            for i in range(10):
                assert ws_expand(other, 10 + i, f"%who {i}") == f"other {i}"
                peak = max(peak, rss(daemon.process.pid))
    finally:
        stop.set()
        hog.close_socket()
        sender.join(STUCK)
    print(f"growth under a WebSocket client that never reads: {(peak - before) / MIB:.1f} MiB")
    assert peak - before < 64 * MIB, f"the daemon grew by {(peak - before) // MIB} MiB"


# --------------------------------------------------------------------------- fairness


def test_a_large_request_does_not_hold_another_sessions_answer(
    daemons: Callable[..., Daemon],
) -> None:
    """Semantic tokens of a 3 MB line run off the event loop: another session's expand,
    sent while they are computed, is answered first (the old daemon computed them on the
    loop, quadratically: seconds during which no session got an answer). The line is
    dense with markers so the tokens take a good part of a second even now that they are
    linear and fast (of 0.5 MB they were done before the other request was sent)."""
    daemon = daemons("--tcp")
    big, other = Raw.tcp(daemon), Raw.tcp(daemon)
    big.handshake({"a": "A"})
    other.handshake({"a": "other"})
    text = ("x %a y " * 600_000)[: 3 * MIB]
    uri = "untitled:big"
    item = {"uri": uri, "languageId": "markdown", "version": 1, "text": text}
    big.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}})
    assert big.expand(2, "%a")["result"]["text"] == "A"  # the document is in
    params = {"textDocument": {"uri": uri}}
    big.send(
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/semanticTokens/full", "params": params}
    )
    time.sleep(0.05)  # the tokens are being computed
    other.send({"jsonrpc": "2.0", "id": 4, "method": "snippets/expand", "params": {"text": "%a"}})
    order: list[str] = []

    def wait(raw: Raw, msg_id: int, name: str) -> None:
        raw.response(msg_id)
        order.append(name)

    threads = [
        threading.Thread(target=wait, args=(big, 3, "tokens")),
        threading.Thread(target=wait, args=(other, 4, "expand")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(STUCK * 3)
    assert order == ["expand", "tokens"]
