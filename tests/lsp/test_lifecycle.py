"""Lifecycle, transports and bad input (docs/lsp.md, "Lifecycle", "Command line")."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from lsprotocol import types
from websockets.sync import client as ws_client

from pi_snippets_lsp.wire.framing import MessageReader
from pi_snippets_lsp.wire.framing import encode as frame

from .conftest import SERVER
from .raw import RawServer


def read_response(stream, msg_id) -> dict:
    for message in MessageReader(stream):
        if message.get("id") == msg_id and "method" not in message:
            return message
    raise EOFError("server closed the stream")


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


def run_session(messages: list[dict], tmp_path, args=()) -> tuple[int, list[dict]]:
    """Pipe framed ``messages`` into a server; every byte it writes must be a frame."""
    env = {"PI_CODING_AGENT_DIR": str(tmp_path)}
    proc = subprocess.run(
        [*SERVER, *args],
        input=b"".join(frame(m) for m in messages),
        capture_output=True,
        timeout=30,
        env={**os.environ, **env},
    )
    out = io.BytesIO(proc.stdout)
    replies = list(MessageReader(out))
    assert out.read() == b"", "every byte written is part of a frame"
    return proc.returncode, replies


def test_exit_after_shutdown_is_zero(tmp_path):
    code, replies = run_session(
        [
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ],
        tmp_path,
    )
    assert code == 0
    assert any(r.get("id") == 2 and r.get("result") is None for r in replies)


def test_exit_without_shutdown_is_one(tmp_path):
    code, _ = run_session([INITIALIZE, {"jsonrpc": "2.0", "method": "exit"}], tmp_path)
    assert code == 1


def test_stdio_accepts_the_stdio_flag(tmp_path):
    proc = subprocess.run(
        [*SERVER, "--stdio"],
        input=frame(INITIALIZE) + frame({"jsonrpc": "2.0", "method": "exit"}),
        capture_output=True,
        timeout=30,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)},
    )
    reply = MessageReader(io.BytesIO(proc.stdout)).read()
    assert reply["result"]["serverInfo"]["name"] == "pi-snippets-lsp"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_socket_server(flag: str, tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"hi": "hello"}}}))
    port = free_port()
    proc = subprocess.Popen(
        [*SERVER, flag, "--port", str(port), "--token-file", str(tmp_path / "token")],
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return proc, port


def initialize_with_token(tmp_path) -> dict:
    """``initialize`` with the daemon's token (read once it listens)."""
    token = (tmp_path / "token").read_text().strip()
    return {**INITIALIZE, "params": {"capabilities": {}, "initializationOptions": {"token": token}}}


def connect(port: int) -> socket.socket:
    deadline = time.monotonic() + 20
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=20)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_tcp_transport_serves_expand(tmp_path):
    proc, port = start_socket_server("--tcp", tmp_path)
    try:
        with connect(port) as sock:
            stream = sock.makefile("rwb")
            stream.write(frame(initialize_with_token(tmp_path)))
            stream.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            stream.write(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "snippets/expand",
                        "params": {"text": "%hi!"},
                    }
                )
            )
            stream.flush()
            reply = read_response(stream, 2)
            assert reply["result"] == {"text": "hello!", "changed": True}
    finally:
        proc.kill()
        proc.wait(10)


def test_websocket_transport_serves_expand(tmp_path):
    proc, port = start_socket_server("--ws", tmp_path)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                ws = ws_client.connect(f"ws://127.0.0.1:{port}", open_timeout=20)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        with ws:
            ws.send(json.dumps(initialize_with_token(tmp_path)))
            ws.send(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "snippets/expand",
                        "params": {"text": "%hi"},
                    }
                )
            )
            while True:
                message = json.loads(ws.recv(timeout=20))
                if message.get("id") == 2 and "method" not in message:
                    break
            assert message["result"] == {"text": "hello", "changed": True}
    finally:
        proc.kill()
        proc.wait(10)


async def test_position_past_the_end_answers_null(shared):
    session = await shared("neovim", settings={"snippets": {"a": "b"}})
    uri = session.open("a.md", "%a")
    assert await session.complete(uri, 5, 0) is None
    result = await session.complete(uri, 0, 999)  # the character is clamped to the line
    assert result is not None and result.items[0].label == "%a"
    assert await session.complete(session.uri("never-opened.md"), 0, 0) is None


def test_malformed_completion_params_get_an_error_and_server_keeps_going(tmp_path):
    (tmp_path / "settings.json").write_text(
        json.dumps({"piSimpleSnippets": {"snippets": {"a": "b"}}})
    )
    uri = (tmp_path / "a.md").as_uri()
    doc = {"uri": uri, "languageId": "markdown", "version": 1, "text": "%a"}
    code, replies = run_session(
        [
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "textDocument/completion",
                "params": {
                    "textDocument": {"uri": uri},
                    "position": {"line": "zero", "character": 0},
                },
            },
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "textDocument/completion",
                "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}},
            },
            {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ],
        tmp_path,
    )
    by_id = {r.get("id"): r for r in replies if "method" not in r}
    assert by_id[2]["error"]["code"] == -32602
    assert by_id[3]["result"]["items"][0]["label"] == "%a"
    assert code == 0


async def test_out_of_range_edit_is_clamped(shared):
    session = await shared("neovim", settings={"snippets": {"a": "b"}})
    uri = session.open("a.md", "x")
    session.change(
        uri,
        2,
        types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(9, 9), end=types.Position(9, 9)), text=" %a"
        ),
    )
    result = await session.complete(uri, 0, 4)
    assert result is not None and result.items[0].label == "%a"


def test_logging_never_reaches_stdout(tmp_path):
    (tmp_path / "settings.json").write_text('{"piSimpleSnippets": {"snippets": {"Bad": 1}}}')
    code, replies = run_session(
        [
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "snippets/expand", "params": {"text": 1}},
            {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ],
        tmp_path,
        args=["-v", "-v"],  # debug logging: plenty to leak if it went to stdout
    )
    # run_session parsed every byte of stdout as a framed JSON-RPC message
    assert code == 0 and all(r.get("jsonrpc") == "2.0" for r in replies)
    assert any(r.get("id") == 2 and r["error"]["code"] == -32602 for r in replies)


def test_help_names_the_commands():
    out = subprocess.run([*SERVER, "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    for word in ("expand", "check", "--tcp", "--ws", "--stdio"):
        assert word in out.stdout
    assert sys.executable


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_stdio_session_like_the_end_of_input(tmp_path, signum):
    """Exit status 1 (no ``shutdown`` came), no traceback, no hang."""
    server = RawServer(tmp_path)
    server.start()
    server.process.send_signal(signum)
    assert server.process.wait(30) == 1
    assert "Traceback" not in server.stderr_text()
