"""What a connection costs the daemon before its token, and the bounds that hold after it
(docs/lsp.md, "Daemon: who may connect, and what one client may cost").

Before the token a connection is anyone's: whatever it sends, it may cost the daemon a few
KiB and a few milliseconds, and it cannot keep the daemon's user out. Memory is read from
``/proc/PID/status``; no test asserts a time.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_snippets_lsp.wire.daemon_files import FOLDER_NAME
from pi_snippets_lsp.wire.framing import encode

from .conftest import SERVER
from .daemons import STUCK, Daemon, Raw, client, daemons
from .test_daemon_limits import MIB, rss, wait_until

__all__ = ["daemons"]  # the fixture


def send_all(sock: socket.socket, data: bytes) -> None:
    """Send ``data`` without reading, until done or the daemon closes the connection."""
    sock.settimeout(STUCK)
    with contextlib.suppress(OSError):  # closed: what the daemon does to a bad stranger
        sock.sendall(data)


def flood(socks: list[socket.socket], data: bytes) -> list[threading.Thread]:
    threads = [threading.Thread(target=send_all, args=(s, data), daemon=True) for s in socks]
    for thread in threads:
        thread.start()
    return threads


def storm_growth(daemon: Daemon, hog: Raw, storm: bytes, what: str) -> int:
    """Bytes the daemon grew by while ``hog``, which never reads, sends ``storm`` for
    about 8 s; another session is answered meanwhile. ``hog`` is closed after."""
    before = rss(daemon.process.pid)
    threads = flood([hog.sock], storm)
    peak = before
    try:
        for _ in range(80):  # ~8 s of storm
            peak = max(peak, rss(daemon.process.pid))
            time.sleep(0.1)
        with client(daemon, "other") as other:
            assert other.expand("%who").text == "other"
    finally:
        hog.sock.close()
        for thread in threads:
            thread.join(STUCK)
    print(f"growth under {what}: {(peak - before) / MIB:.1f} MiB")
    return peak - before


def closed(raw: Raw) -> bool:
    """Whether the daemon has closed the connection (everything it sent is read first)."""
    try:
        while raw.sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


# --------------------------------------------------------------------------- before the token


def test_a_request_before_initialize_gets_one_short_answer_and_the_end(
    daemons: Callable[..., Daemon],
) -> None:
    """Requests before ``initialize``, never read: the first is answered -32002 (its id,
    no word of its method), and the connection is closed. The old daemon answered each,
    echoing id and method, unpaced: 597 MiB in 9 s on one connection."""
    daemon = daemons("--tcp", "--initialize-timeout", "600")
    before = rss(daemon.process.pid)
    request = {"jsonrpc": "2.0", "id": "i" * 20_000, "method": "m" * 20_000, "params": {}}
    data = encode(request) * 500  # 20 MB
    raws = [Raw.tcp(daemon, token=False) for _ in range(4)]
    threads = flood([r.sock for r in raws], data)
    first = raws[0].receive()
    assert first is not None and first["error"]["code"] == -32002
    assert first["id"] == "i" * 20_000 and "mmmm" not in first["error"]["message"]
    for raw in raws:
        assert closed(raw)
    for thread in threads:
        thread.join(STUCK)
    assert rss(daemon.process.pid) < before + 16 * MIB
    with client(daemon, "owner") as session:
        assert session.expand("%who").text == "owner"


def test_a_notification_before_initialize_ends_the_connection(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons("--tcp", "--initialize-timeout", "600")
    raw = Raw.tcp(daemon, token=False)
    raw.send({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}})
    assert raw.receive() is None


@pytest.mark.parametrize(
    "opening",
    [
        pytest.param(b"Content-Length: 60000000\r\n\r\n", id="a-large-body"),
        pytest.param(b"Content-Length: 5\r\n" * 40_000, id="headers-without-end"),
        pytest.param(b"Content-Length: x\r\n\r\n" * 20_000, id="broken-headers"),
        pytest.param(encode({"jsonrpc": "2.0", "id": 1, "method": "x" * 100_000}), id="large"),
        pytest.param(b"Content-Length: 2\r\n\r\n[]", id="not-a-message"),
    ],
)
def test_what_a_stranger_sends_costs_a_few_kib_and_closes_it(
    daemons: Callable[..., Daemon], opening: bytes
) -> None:
    """Sixteen connections without the token, each sending a body over the small limit of
    messages before ``initialize`` (64 KiB), header garbage, or a body that is no message:
    each is closed at its first error, long before the initialize timeout; the daemon keeps
    no more than a few KiB of each, and its log a line or so. (The old daemon kept 64 MiB
    of a partial body per connection until the timeout: 1 GiB for sixteen; parsed a 60 MB
    body on its event loop before looking at the token; and logged a line per 15 bytes of
    header garbage.)"""
    daemon = daemons("--tcp", "--initialize-timeout", "600")
    before = rss(daemon.process.pid)
    log_before = len(daemon.log().splitlines())
    raws = [Raw.tcp(daemon, token=False) for _ in range(16)]
    tail = b"x" * (4 * MIB) if opening.endswith(b"\r\n\r\n") else b""
    threads = flood([r.sock for r in raws], opening + tail)
    peak = before
    for raw in raws:
        assert closed(raw)
        peak = max(peak, rss(daemon.process.pid))
    for thread in threads:
        thread.join(STUCK)
    print(f"growth: {(peak - before) / MIB:.1f} MiB")
    assert peak < before + 16 * MIB
    time.sleep(0.5)  # the log's last lines reach the reading thread
    assert len(daemon.log().splitlines()) - log_before <= 8, daemon.log()[-3000:]
    with client(daemon, "owner") as session:
        assert session.expand("%who").text == "owner"


def test_strangers_cannot_keep_the_owner_out(daemons: Callable[..., Daemon]) -> None:
    """Every slot taken by connections without the token (some silent, some half-way into
    a message): the owner's connection still opens, in place of the oldest of them. (The
    old daemon refused the owner for as long as they held on: 36 times in 38.)"""
    daemon = daemons("--tcp", "--max-connections", "4", "--initialize-timeout", "600")
    strangers = [Raw.tcp(daemon, token=False) for _ in range(4)]
    strangers[1].sock.sendall(b"Content-Length: 100\r\n\r\n{")
    time.sleep(0.3)  # all four are the daemon's connections now
    with client(daemon, "owner") as session:
        assert session.expand("%who").text == "owner"
    assert closed(strangers[0]), "the oldest stranger made room"
    assert daemon.logged("to make room")


def test_websocket_strangers_cannot_keep_the_owner_out(daemons: Callable[..., Daemon]) -> None:
    ws_client = pytest.importorskip("websockets.sync.client")
    daemon = daemons("--ws", "--max-connections", "3", "--initialize-timeout", "600")
    url = f"ws://127.0.0.1:{daemon.port}"
    with contextlib.ExitStack() as stack:
        for _ in range(3):
            stack.enter_context(ws_client.connect(url, open_timeout=STUCK))
        time.sleep(0.3)
        with ws_client.connect(url, open_timeout=STUCK) as owner:
            options = {"token": daemon.token(), "pollInterval": 0,
                       "piSimpleSnippets": {"snippets": {"who": "owner"}}}  # fmt: skip
            params = {"capabilities": {}, "initializationOptions": options}
            owner.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                   "params": params}))  # fmt: skip
            assert "result" in json.loads(owner.recv(timeout=STUCK))


def test_a_large_websocket_message_before_the_token_closes_the_connection(
    daemons: Callable[..., Daemon],
) -> None:
    ws_client = pytest.importorskip("websockets.sync.client")
    daemon = daemons("--ws", "--initialize-timeout", "600")
    before = rss(daemon.process.pid)
    with (
        ws_client.connect(f"ws://127.0.0.1:{daemon.port}", open_timeout=STUCK, max_size=None) as ws,
        pytest.raises(Exception, match=r"1009|too big|closed"),
    ):
        ws.send("x" * (8 * MIB))
        ws.recv(timeout=STUCK)
    assert rss(daemon.process.pid) < before + 32 * MIB


def handshake(port: int, headers: list[str]) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    request = "\r\n".join(
        [
            "GET / HTTP/1.1",
            *headers,
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            "",
            "",
        ]
    )
    with socket.create_connection(("127.0.0.1", port), timeout=STUCK) as sock:
        sock.sendall(request.encode())
        data = b""
        while b"\r\n\r\n" not in data and (chunk := sock.recv(4096)):
            data += chunk
    return data


def test_a_handshake_with_two_host_or_origin_headers_is_a_clean_refusal(
    daemons: Callable[..., Daemon],
) -> None:
    """Two ``Host`` (or ``Origin``) headers: HTTP 400, a line in the log at most once a
    second, no traceback (the old daemon answered 500 and logged a traceback each time)."""
    pytest.importorskip("websockets")
    daemon = daemons("--ws")
    host = f"Host: 127.0.0.1:{daemon.port}"
    for _ in range(50):
        answer = handshake(daemon.port, [host, host])
        assert answer.startswith(b"HTTP/1.1 400"), answer
        answer = handshake(daemon.port, [host, "Origin: http://a", "Origin: http://b"])
        assert answer.startswith(b"HTTP/1.1 400"), answer
    time.sleep(0.5)
    assert "Traceback" not in daemon.log()
    assert daemon.log().count("more than one Host or Origin header") <= 3


# --------------------------------------------------------------------------- after the token


def storm_document(daemon: Daemon) -> tuple[str, str]:
    """The user settings file's URI, and a text whose every diagnostic is long: 200
    entries whose 2,000-character name the message quotes (a value that is no string)."""
    uri = (daemon.home / "settings.json").as_uri()
    snippets = {f"k{i}" + "x" * 2000: [1] for i in range(200)}
    return uri, json.dumps({"piSimpleSnippets": {"snippets": snippets}})


def test_a_notification_storm_from_a_client_that_never_reads_costs_the_bound(
    daemons: Callable[..., Daemon],
) -> None:
    """A one-character ``didChange`` to an open settings file, each answered by its
    diagnostics (400 KB), from a client that never reads: the daemon stops reading it
    once ``--max-unsent`` waits, as for requests (the old daemon read on: 120 MiB)."""
    daemon = daemons("--tcp", "--stuck-timeout", "600")
    hog = Raw.tcp(daemon)
    hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    hog.handshake({})
    uri, text = storm_document(daemon)
    item = {"uri": uri, "languageId": "json", "version": 1, "text": text}
    hog.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
              "params": {"textDocument": item}})  # fmt: skip
    published = hog.receive()
    while published is not None and published.get("method") != "textDocument/publishDiagnostics":
        published = hog.receive()
    assert published is not None and len(published["params"]["diagnostics"]) == 200
    at_start = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    change = b"".join(
        encode(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": v},
                    "contentChanges": [{"range": at_start, "text": " "}],
                },
            }
        )
        for v in range(2, 2002)
    )
    growth = storm_growth(daemon, hog, change, "a didChange storm")
    assert growth < 64 * MIB, f"the daemon grew by {growth // MIB} MiB"


def test_requests_piped_behind_initialized_obey_the_bound(
    daemons: Callable[..., Daemon],
) -> None:
    """64 ``snippets/list`` (2 MB each) piped right behind ``initialized``, never read:
    they wait for the first load, then are answered as the answers leave, not in one
    burst past ``--max-unsent`` (the old daemon: +118 MiB)."""
    daemon = daemons("--tcp", "--stuck-timeout", "600")
    snippets = {f"s{i}": f"{i} " + "x" * 4096 for i in range(512)}
    settings = json.dumps({"piSimpleSnippets": {"snippets": snippets}})
    (daemon.home / "settings.json").write_text(settings)
    hog = Raw.tcp(daemon)
    hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    before = rss(daemon.process.pid)
    options = {"token": daemon.token(), "pollInterval": 0}
    data = encode(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"capabilities": {}, "initializationOptions": options}}
    ) + encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}) + b"".join(
        encode({"jsonrpc": "2.0", "id": 100 + i, "method": "snippets/list", "params": {}})
        for i in range(64)
    )  # fmt: skip
    threads = flood([hog.sock], data)
    peak = before
    try:
        for _ in range(50):
            peak = max(peak, rss(daemon.process.pid))
            time.sleep(0.1)
        with client(daemon, "other") as other:
            assert other.expand("%who").text == "other"
    finally:
        hog.sock.close()
        for thread in threads:
            thread.join(STUCK)
    print(f"growth under early requests never read: {(peak - before) / MIB:.1f} MiB")
    assert peak - before < 64 * MIB, f"the daemon grew by {(peak - before) // MIB} MiB"


def test_requests_piped_behind_initialized_are_all_answered_in_order(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons("--tcp")
    raw = Raw.tcp(daemon)
    options = {"token": daemon.token(), "pollInterval": 0,
               "piSimpleSnippets": {"snippets": {"a": "A"}}}  # fmt: skip
    raw.sock.sendall(
        encode({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"capabilities": {}, "initializationOptions": options}})
        + encode({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + b"".join(
            encode({"jsonrpc": "2.0", "id": 100 + i, "method": "snippets/expand",
                    "params": {"text": f"%a {i}"}})
            for i in range(100)
        )
        + encode({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        + encode({"jsonrpc": "2.0", "method": "exit"})
    )  # fmt: skip
    answers = []
    while (message := raw.receive()) is not None:
        if "id" in message and "method" not in message:
            answers.append(message["id"])
    assert answers == [1, *range(100, 200), 2]


# --------------------------------------------------------------------------- files


def run_daemon(runtime: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A daemon expected not to start: its exit status and stderr."""
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "PI_CODING_AGENT_DIR": str(home)}
    return subprocess.run(
        [*SERVER, *args], env=env, capture_output=True, text=True, timeout=STUCK, check=False
    )


def test_a_second_daemon_on_the_same_token_file_refuses_to_start(
    daemons: Callable[..., Daemon], tmp_path: Path
) -> None:
    """Two ``--tcp``/``--ws`` daemons of one user and the default token file: the second
    says which process holds it and stops, touching nothing; the first is still reached.
    (The old second daemon overwrote the token, then removed it at its end.)"""
    first = daemons("--tcp")
    token = first.token()
    result = run_daemon(first.runtime, tmp_path, "--ws", "--port", "0")
    assert result.returncode == 1
    assert f"another daemon (pid {first.process.pid})" in result.stderr
    assert "--token-file" in result.stderr
    assert first.token() == token
    with client(first, "first") as session:
        assert session.expand("%who").text == "first"


def test_a_daemon_on_a_taken_port_writes_no_token(
    daemons: Callable[..., Daemon], tmp_path: Path
) -> None:
    """A second daemon on the first one's port, with the same token file or its own: the
    first one's token stays, and the second writes none (the old one wrote its token
    before binding, over the first one's, then removed it at its end)."""
    first = daemons("--tcp")
    token = first.token()
    result = run_daemon(first.runtime, tmp_path, "--tcp", "--port", str(first.port))
    assert result.returncode == 1
    assert first.token() == token, "the first daemon's token is where it was"
    other = tmp_path / "other-token"
    result = run_daemon(
        first.runtime, tmp_path, "--tcp", "--port", str(first.port), "--token-file", str(other)
    )
    assert result.returncode == 1 and "cannot listen" in result.stderr
    assert not other.exists()
    assert not (tmp_path / ".other-token.lock").exists()
    with client(first, "first") as session:
        assert session.expand("%who").text == "first"


def test_the_lock_of_a_daemon_that_died_does_not_keep_the_next_out(
    daemons: Callable[..., Daemon],
) -> None:
    first = daemons("--tcp")
    first.process.kill()
    first.process.wait(STUCK)
    second = daemons("--tcp", runtime=first.runtime)
    assert second.token() != ""
    with client(second, "second") as session:
        assert session.expand("%who").text == "second"


@pytest.mark.parametrize("flag", ["--tcp", "--socket"])
def test_a_forced_exit_removes_the_daemons_files(daemons: Callable[..., Daemon], flag: str) -> None:
    """A stop signal while the event loop is busy (a large settings document's
    diagnostics): the process ends at the grace's end, and its files are gone even so.
    (The old forced exit left ``token`` or ``lsp.sock`` behind.)"""
    daemon = daemons(flag)
    raw = Raw.unix(daemon.path) if flag == "--socket" else Raw.tcp(daemon)
    raw.handshake({})
    uri = (daemon.home / "settings.json").as_uri()
    snippets = {f"Bad Name {i}": "v" for i in range(150_000)}
    text = json.dumps({"piSimpleSnippets": {"snippets": snippets}})
    item = {"uri": uri, "languageId": "json", "version": 1, "text": text}
    raw.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
              "params": {"textDocument": item}})  # fmt: skip
    time.sleep(1.0)  # the document is being diagnosed
    daemon.process.send_signal(signal.SIGTERM)
    daemon.process.wait(STUCK)
    print("forced" if "ending now" in daemon.log() else "orderly")
    wait_until(lambda: not any((daemon.runtime / FOLDER_NAME).iterdir()), "the files removed")
