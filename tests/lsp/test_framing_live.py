"""The LSP base protocol against the live server (docs/lsp.md, "Framing"): header names
are case-insensitive; a broken header block is logged and skipped; a body that is not a
JSON-RPC message is answered; nothing wedges the stream, crashes the process or reaches
the client's screen as a traceback.

Each case sends its hostile bytes, then a valid request: the server must answer it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pi_snippets_lsp.wire.framing import encode, frame

from .raw import RawServer, write_settings

VALID = {"jsonrpc": "2.0", "id": 7, "method": "snippets/expand", "params": {"text": "%a"}}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    write_settings(tmp_path, {"a": "AAA"})
    raw = RawServer(tmp_path)
    raw.start()
    yield raw
    raw.close()
    assert raw.garbage == [], "the server wrote something that is not a frame"


def body(message: str) -> bytes:
    return message.encode("utf-8")


def test_a_lowercase_content_length_is_read(server: RawServer) -> None:
    data = body('{"jsonrpc":"2.0","id":1,"method":"snippets/expand","params":{"text":"%a"}}')
    server.send(b"content-length: %d\r\n\r\n" % len(data) + data)
    assert server.response(1)["result"] == {"text": "AAA", "changed": True}


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(b"Content-Type: x\r\n\r\n{}", id="no-content-length"),
        pytest.param(b"Content-Length: -5\r\n\r\n{}", id="negative"),
        pytest.param(b"Content-Length: ten\r\n\r\n{}", id="not-a-number"),
        pytest.param(b"Content-Length: 1000000000000000\r\n\r\n{}", id="1e15"),
        pytest.param(b"Content-Length: " + b"9" * 400 + b"\r\n\r\n", id="400-digits"),
        pytest.param(b"garbage without a colon\r\n\r\n", id="malformed-line"),
        pytest.param(b"Content-Length: 5" + b"A" * 100_000, id="endless-header-line"),
        pytest.param(b"\x00\xff" * 5000, id="binary-noise"),
    ],
)
def test_a_broken_header_block_is_logged_and_the_next_message_answered(
    server: RawServer, broken: bytes
) -> None:
    server.send(broken + encode(VALID))
    assert server.response(7)["result"] == {"text": "AAA", "changed": True}
    assert server.process.poll() is None
    server.wait_stderr("skipping to the next message")


@pytest.mark.parametrize(
    ("content", "code"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"x","params":"\xff"}', -32700, id="utf8"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,', -32700, id="truncated-json"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, -32700, id="nested-too-deep"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"x","params":NaN}', -32700, id="nan"),
        pytest.param(
            b'[{"jsonrpc":"2.0","id":1,"method":"snippets/list","params":{}}]', -32600, id="batch"
        ),
        pytest.param(b"[]", -32600, id="empty-batch"),
        pytest.param(b"5", -32600, id="a-number"),
        pytest.param(b'"request"', -32600, id="a-string"),
        pytest.param(b"null", -32600, id="null"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":{"a":1},"method":"snippets/list","params":{}}',
            -32600,
            id="object-id",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":[1],"method":"snippets/list","params":{}}',
            -32600,
            id="array-id",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":true,"method":"snippets/list","params":{}}',
            -32600,
            id="bool-id",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1.5,"method":"snippets/list","params":{}}',
            -32600,
            id="float-id",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":null,"method":"snippets/list","params":{}}',
            -32600,
            id="null-id",
        ),
        pytest.param(b'{"jsonrpc":"2.0","method":5}', -32600, id="method-not-a-string"),
        pytest.param(b'{"jsonrpc":"2.0"}', -32600, id="neither-method-nor-id"),
    ],
)
def test_a_body_that_is_no_message_is_answered_with_id_null(
    server: RawServer, content: bytes, code: int
) -> None:
    server.send(frame(content) + encode(VALID))
    assert server.response(7)["result"] == {"text": "AAA", "changed": True}
    (error,) = server.responses_with_null_id()
    assert error["error"]["code"] == code
    assert "data" not in error["error"]


def test_a_request_without_jsonrpc_is_answered_with_its_id(server: RawServer) -> None:
    server.send(frame(b'{"id":3,"method":"snippets/list","params":{}}') + encode(VALID))
    assert server.response(3)["error"]["code"] == -32600
    assert server.response(7)["result"]["changed"] is True


def test_a_response_with_a_bad_id_gets_no_answer(server: RawServer) -> None:
    server.send(frame(b'{"jsonrpc":"2.0","id":{"x":1},"result":null}') + encode(VALID))
    assert server.response(7)["result"]["changed"] is True
    assert server.responses_with_null_id() == []


def test_a_message_split_into_single_bytes_arrives(server: RawServer) -> None:
    for byte in encode(VALID):
        server.send(bytes([byte]))
    assert server.response(7)["result"] == {"text": "AAA", "changed": True}


def test_the_end_of_input_inside_a_message_exits_non_zero_with_a_message(tmp_path: Path) -> None:
    server = RawServer(tmp_path)
    server.start()
    server.send(b"Content-Length: 100\r\n\r\n{")
    assert server.close() == 1
    server.wait_stderr("the stream ended inside a message")
