"""One connection's session in-process (``transport.Channel``): how it ends, what an
internal error tells the client, answers to pipelined requests (docs/lsp.md,
"Lifecycle" and "Errors")."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_snippets_lsp.lsp import transport
from pi_snippets_lsp.lsp.session import ServerFlags
from pi_snippets_lsp.lsp.transport import Channel
from pi_snippets_lsp.wire.framing import FrameDecoder, encode


class Captured:
    """A writer that keeps what the server sends."""

    def __init__(self) -> None:
        self.decoder = FrameDecoder()
        self.closed = False

    def write(self, data: bytes) -> None:
        self.decoder.feed(data)

    def close(self) -> None:
        self.closed = True

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(b) for b in self.decoder.frames() if isinstance(b, bytes)]


def connect(tmp_path: Path, **options: Any) -> tuple[Channel, Captured]:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"a": "AAA"}}}))
    writer = Captured()
    connection = Channel(ServerFlags(user_settings=str(settings), **options), writer, "test")
    return connection, writer


def request(msg_id: int, method: str, params: object = None) -> bytes:
    return encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def notification(method: str, params: object = None) -> bytes:
    return encode({"jsonrpc": "2.0", "method": method, "params": params or {}})


INITIALIZE = request(
    1,
    "initialize",
    {"capabilities": {}, "initializationOptions": {"notifications": ["snippets/didLoad"]}},
)


async def settle(connection: Channel) -> None:
    for _ in range(200):
        if not connection.protocol.pending_handlers():
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0)


@pytest.mark.parametrize("details", [False, True])
async def test_an_internal_error_carries_a_traceback_only_with_v(
    tmp_path: Path, details: bool
) -> None:
    connection, writer = connect(tmp_path, error_details=details)

    @connection.server.feature("test/fail")
    def fail(ls: Any, params: Any) -> None:
        raise RuntimeError("a bug in /home/someone/secret.py")

    connection.feed(INITIALIZE + request(2, "test/fail", {}))
    await settle(connection)
    (error,) = [m for m in writer.messages() if m.get("id") == 2]
    assert error["error"]["code"] == -32603
    assert "RuntimeError" in error["error"]["message"]
    if details:
        assert "traceback" in error["error"]["data"]
    else:
        assert "data" not in error["error"]
    connection.close()


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 1)])
async def test_exit_ends_the_connection_not_the_process(
    tmp_path: Path, shutdown: bool, code: int
) -> None:
    """pygls's ``exit`` calls ``sys.exit``; in the daemon that would end every session."""
    connection, writer = connect(tmp_path)
    messages = INITIALIZE + notification("initialized")
    if shutdown:
        messages += request(2, "shutdown")
    connection.feed(messages + notification("exit"))  # no SystemExit escapes
    assert await asyncio.wait_for(connection.ended, 10) == code
    await connection.finish()
    connection.close()
    assert writer.closed


async def test_requests_piped_before_shutdown_are_all_answered(tmp_path: Path) -> None:
    """A transcript piped in one go: every request gets its answer before ``shutdown``'s,
    and the first generation's ``snippets/didLoad`` comes before them."""
    connection, writer = connect(tmp_path)
    connection.feed(
        INITIALIZE
        + notification("initialized")
        + b"".join(request(10 + i, "snippets/expand", {"text": f"%a {i}"}) for i in range(20))
        + request(30, "snippets/expand", {"text": 5})
        + request(40, "shutdown")
        + notification("exit")
    )
    assert await asyncio.wait_for(connection.ended, 10) == 0
    await connection.finish()
    connection.close()
    messages = writer.messages()
    order = [m.get("method") or m["id"] for m in messages if m.get("method") != "window/logMessage"]
    assert order[:2] == [1, "snippets/didLoad"]
    answers = {m["id"]: m for m in messages if "id" in m and "method" not in m}
    assert [answers[10 + i]["result"]["text"] for i in range(20)] == [f"AAA {i}" for i in range(20)]
    assert answers[30]["error"]["code"] == -32602
    assert answers[40] == {"jsonrpc": "2.0", "id": 40, "result": None}
    assert order.index(40) == len(order) - 1


async def test_two_connections_share_nothing(tmp_path: Path) -> None:
    one, _ = connect(tmp_path)
    two, _ = connect(tmp_path)
    doc = {"uri": "untitled:x", "languageId": "md", "version": 1, "text": "%"}
    one.feed(
        INITIALIZE
        + notification("initialized")
        + notification("textDocument/didOpen", {"textDocument": doc})
    )
    two.feed(INITIALIZE + notification("initialized"))
    assert set(one.server.documents) == {"untitled:x"}
    assert two.server.documents == {}
    assert one.server.session is not two.server.session
    await settle(one)
    await settle(two)
    for connection in (one, two):
        connection.close()


async def test_a_connection_leaves_its_generations_to_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon's connection (the default) does not freeze: the daemon collects its
    ended sessions, and frozen objects are never collected."""
    frozen: list[None] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(None))
    connection, _ = connect(tmp_path)
    connection.feed(INITIALIZE + notification("initialized"))
    await settle(connection)
    assert connection.server.session.generation == 1
    assert frozen == []
    connection.close()


def test_a_stdio_server_freezes_its_start_and_each_generation(tmp_path: Path) -> None:
    """Serving stdio, the process has one session: what start-up made, and each
    generation, are frozen out of the collector's walks (``gc.freeze``): full
    collections walking a large generation paused requests for tens of milliseconds."""
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"a": "AAA"}}}))
    script = (
        "import gc, sys\n"
        "from pi_snippets_lsp.lsp.session import ServerFlags\n"
        "from pi_snippets_lsp.lsp.transport import serve_stdio\n"
        "calls = []\n"
        "gc.freeze = lambda: calls.append(None)\n"
        f"code = serve_stdio(ServerFlags(user_settings={str(settings)!r}))\n"
        "print('freezes', len(calls), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    stdin = (
        INITIALIZE
        + notification("initialized")
        + request(2, "snippets/reload", {})
        + request(3, "shutdown")
        + notification("exit")
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=stdin, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    # The start, the first generation, the reload's.
    assert "freezes 3" in done.stderr.decode()


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"Content-Length: 60000000\r\n\r\nxxxx", id="a-body-over-the-limit"),
        pytest.param(b"Content-Length: x\r\n\r\n", id="a-broken-header"),
        pytest.param(request(1, "snippets/list"), id="a-request"),
        pytest.param(notification("initialized"), id="a-notification"),
        pytest.param(encode([1]), id="not-a-message"),
        pytest.param(
            request(1, "initialize", {"initializationOptions": {"token": "no"}}),
            id="a-wrong-token",
        ),
    ],
)
async def test_a_stranger_costs_no_session(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    """A connection that needs the token and sends anything but an ``initialize`` with it
    is refused and ended without a session ever being made for it (each made one, at its
    first byte: a millisecond or more of the daemon's loop per connection)."""
    made: list[object] = []
    real = transport.create_server
    monkeypatch.setattr(transport, "create_server", lambda flags: made.append(1) or real(flags))
    writer = Captured()
    connection = Channel(ServerFlags(), writer, "stranger", token="secret")
    connection.feed(data)
    assert connection.ended.done() and connection.exit_code() == 1
    await connection.finish()
    connection.close()
    assert made == []
    for message in writer.messages():
        assert message["error"]["code"] in (-32001, -32002, -32600, -32700)
    admitted = Channel(ServerFlags(), Captured(), "owner", token="secret")
    params = {"capabilities": {}, "initializationOptions": {"token": "secret"}}
    admitted.feed(request(1, "initialize", params))
    assert made == [1]
    admitted.close()
