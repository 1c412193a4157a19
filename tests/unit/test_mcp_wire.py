"""The MCP server's wire, as tables: lines to messages (``mcp.jsonrpc``) and what each
protocol revision asks (``mcp.protocol``). docs/mcp.md, "Bad input"; tests/mcp drives
the same rules through the real server and the official clients."""

from __future__ import annotations

import asyncio
import os

import pytest

from pi_snippets_lsp.mcp import protocol
from pi_snippets_lsp.mcp.jsonrpc import (
    LineReader,
    Rejection,
    RpcError,
    encode,
    encode_large,
    leading_id,
    lone_surrogate_at,
    parse_line,
)

ENVELOPE = {
    protocol.PROTOCOL_VERSION_KEY: "2026-07-28",
    protocol.CLIENT_CAPABILITIES_KEY: {},
}


# --------------------------------------------------------------------------- lines


@pytest.mark.parametrize(
    ("line", "code", "id_", "answer"),
    [
        pytest.param(b"not json", -32700, None, True, id="not-json"),
        pytest.param(b"\xff\xfe{}", -32700, None, True, id="not-utf8"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"x","params":NaN}', -32700, None, True, id="nan"
        ),
        pytest.param(b"[" * 100_000, -32700, None, True, id="nested-too-deep"),
        pytest.param(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, None, True, id="batch"),
        pytest.param(b"5", -32600, None, True, id="a-number"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None, True, id="float-id"
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None, True, id="bool-id"
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":null,"result":{}}', -32600, None, False, id="null-id-response"
        ),
        pytest.param(
            b'{"jsonrpc":"1.0","id":3,"method":"ping"}', -32600, 3, True, id="jsonrpc-1.0"
        ),
        pytest.param(b'{"id":4,"method":"ping"}', -32600, 4, True, id="no-jsonrpc"),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"x"}'.replace(b'"x"', b"5"),
            -32600,
            None,
            False,
            id="method-not-a-string-notification",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":6,"method":7}', -32600, 6, True, id="method-not-a-string"
        ),
        pytest.param(b'{"jsonrpc":"2.0"}', -32600, None, True, id="neither-method-nor-id"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":8,"method":"x","params":{"a":"\\udc00"}}',
            -32602,
            8,
            True,
            id="lone-surrogate-request",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"x","params":{"a":"\\ud800"}}',
            -32602,
            None,
            False,
            id="lone-surrogate-notification",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":9,"result":{"\\ud800":1}}',
            -32602,
            9,
            False,
            id="lone-surrogate-response-key",
        ),
    ],
)
def test_a_line_that_is_no_usable_message_is_rejected(
    line: bytes, code: int, id_: object, answer: bool
) -> None:
    rejection = parse_line(line)
    assert isinstance(rejection, Rejection)
    assert (rejection.code, rejection.id, rejection.answer) == (code, id_, answer)
    assert rejection.response()["id"] == id_


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r',
        b'  {"jsonrpc":"2.0","id":"a","method":"ping","params":{}}  ',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":2,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"t":"\\ud83d\\ude00 \\\\ud800"}}',
    ],
)
def test_a_message_is_parsed(line: bytes) -> None:
    message = parse_line(line)
    assert isinstance(message, dict) and message["jsonrpc"] == "2.0"


def test_a_blank_line_is_skipped() -> None:
    assert parse_line(b"  \r") is None


def test_where_a_lone_surrogate_is() -> None:
    assert lone_surrogate_at({"a": ["ok", {"b": "x\ud800"}]}) == "a[1].b"
    assert lone_surrogate_at({"a": "\U0001f600", "b": ["é"]}) is None
    assert lone_surrogate_at("\udfff") == "the message"
    assert lone_surrogate_at({"p": {"\ud800": 1}}) == "p.(a key)"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x', 7),
        (b'{"method":"tools/call","jsonrpc":"2.0","id":"abc","params"', "abc"),
        (b' { "id" : -3 , "jsonrpc"', -3),
        (b'{"params":{"id":3},"id":4', None),  # an id inside params is no id
        (b'{"jsonrpc":"2.0","method":"x","params":{"text":"', None),
        (b'[{"id":1,', None),
    ],
)
def test_the_id_of_a_refused_line(head: bytes, expected: object) -> None:
    assert leading_id(head) == expected


def test_an_answer_with_a_lone_surrogate_still_encodes() -> None:
    assert encode({"a": "é"}) == '{"a":"é"}\n'.encode()
    assert encode({"a": "\ud800"}) == b'{"a":"\\ud800"}\n'


def test_a_long_answer_encodes_each_long_text_once_and_the_same() -> None:
    text = 'é"\n' * 40_000
    other = "x" * 70_000
    message = {
        "id": 1,
        "result": {"content": [{"text": text}], "structured": {"text": text, "o": other}},
        "short": "s",
    }
    assert encode_large(message) == encode(message)
    assert encode_large({"a": "short"}) == encode({"a": "short"})
    assert encode_large({"a": "\ud800" * 70_000}) == encode({"a": "\ud800" * 70_000})


def read_lines(data: list[bytes], max_line: int) -> list[tuple[str, bytes]]:
    """What a ``LineReader`` reports for ``data`` written to a pipe in pieces."""
    events: list[tuple[str, bytes]] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        read_fd, write_fd = os.pipe()
        reader = LineReader(
            loop,
            read_fd,
            max_line,
            lambda line: events.append(("line", line)),
            lambda head: events.append(("too long", head)),
            done.set,
        )
        reader.start()
        for piece in data:
            os.write(write_fd, piece)
        os.close(write_fd)
        await asyncio.wait_for(done.wait(), 10)
        os.close(read_fd)

    asyncio.run(run())
    return events


def test_the_reader_splits_lines_and_refuses_a_long_one_once() -> None:
    events = read_lines(
        [b"one\ntw", b"o\n", b'{"id":5,' + b"x" * 30, b"x" * 30, b"x\nthree\n", b"four"], 32
    )
    # The refused line's head is what was read of it (how the pipe cut it varies).
    assert [kind for kind, _ in events] == ["line", "line", "too long", "line", "line"]
    assert events[2][1].startswith(b'{"id":5,xxx') and len(events[2][1]) <= 4096
    assert [line for kind, line in events if kind == "line"] == [b"one", b"two", b"three", b"four"]


def test_a_line_of_exactly_the_cap_is_read() -> None:
    assert read_lines([b"x" * 8 + b"\n" + b"y" * 9 + b"\n"], 8) == [
        ("line", b"x" * 8),
        ("too long", b"y" * 9),
    ]


# --------------------------------------------------------------------------- revisions


@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2024-11-05", "2024-11-05"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),  # no handshake at 2026-07-28
        ("1999-01-01", "2025-11-25"),
    ],
)
def test_a_handshake_answers_the_clients_revision_or_the_latest(
    requested: str, answered: str
) -> None:
    assert protocol.negotiate(requested) == answered


def refused(method: str, params: object, modern: bool, *, opened: bool = True) -> RpcError:
    with pytest.raises(RpcError) as caught:
        protocol.admit(method, params, modern, served=True, opened=opened)
    return caught.value


def test_what_each_era_admits() -> None:
    assert refused("prompts/list", {}, False, opened=False).code == -32602
    assert protocol.admit("ping", None, False, served=True, opened=False) == {}
    assert refused("server/discover", {}, False).code == -32601
    assert refused("subscriptions/listen", {}, False).code == -32601
    assert refused("prompts/list", {"_meta": ENVELOPE}, False).code == -32600
    assert refused("ping", {"_meta": ENVELOPE}, True).code == -32601
    assert refused("logging/setLevel", {"_meta": ENVELOPE, "level": "info"}, True).code == -32601
    error = refused("initialize", {"protocolVersion": "2025-11-25"}, True)
    assert (error.code, error.data) == (
        -32022,
        {"supported": ["2026-07-28"], "requested": "2025-11-25"},
    )
    assert refused("prompts/list", {}, True).code == -32602
    missing = refused("prompts/list", {"_meta": {protocol.PROTOCOL_VERSION_KEY: "x"}}, True)
    assert protocol.CLIENT_CAPABILITIES_KEY in missing.message
    later = {"_meta": {**ENVELOPE, protocol.PROTOCOL_VERSION_KEY: "2099-01-01"}}
    assert refused("prompts/list", later, True).data == {
        "supported": ["2026-07-28"],
        "requested": "2099-01-01",
    }
    bad_level = {"_meta": {**ENVELOPE, protocol.LOG_LEVEL_KEY: "loud"}}
    assert refused("prompts/list", bad_level, True).code == -32602
    with pytest.raises(RpcError):
        protocol.admit("prompts/list", {}, False, served=False, opened=True)


@pytest.mark.parametrize(
    ("method", "params", "says"),
    [
        ("prompts/get", {"name": 7}, "'name' must be a string"),
        ("prompts/get", {}, "'name' is required"),
        ("prompts/get", {"name": "a", "arguments": {"text": 5}}, "arguments.text"),
        ("prompts/get", {"name": "a", "arguments": []}, "arguments must be an object"),
        ("resources/read", {}, "'uri' is required"),
        ("tools/call", {"name": "x", "arguments": "text"}, "arguments must be an object"),
        ("prompts/list", {"cursor": 3}, "'cursor' must be a string"),
        ("prompts/list", [], "params must be an object"),
        ("prompts/list", {"_meta": {"progressToken": True}}, "progressToken"),
        ("logging/setLevel", {"level": "loud"}, "'level' must be one of"),
        ("completion/complete", {"ref": {"type": "ref/x"}}, "ref.type"),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "a"}}, "argument"),
        (
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": "u"}, "argument": {"name": "n", "value": 1}},
            "'value' must be a string",
        ),
        ("initialize", {"protocolVersion": "x", "capabilities": {}}, "clientInfo"),
        ("subscriptions/listen", {"notifications": {"promptsListChanged": 1}}, "boolean"),
    ],
)
def test_params_that_do_not_fit_say_what(method: str, params: object, says: str) -> None:
    with pytest.raises(RpcError) as caught:
        protocol.check_params(method, params, modern=False)
    assert caught.value.code == -32602
    assert method in caught.value.message and says in caught.value.message


INFO: dict[str, object] = {"name": "pi-snippets", "version": "1"}


def test_results_per_era() -> None:
    listed = {"prompts": []}
    assert protocol.shape_result("prompts/list", False, listed, INFO) == listed
    assert protocol.shape_result("prompts/list", True, listed, INFO) == {
        "ttlMs": 0,
        "cacheScope": "private",
        "prompts": [],
        "resultType": "complete",
        "_meta": {protocol.SERVER_INFO_KEY: INFO},
    }
    called = protocol.shape_result("tools/call", False, {"content": []}, INFO)
    assert called == {"content": [], "isError": False}
    stream = protocol.shape_result("subscriptions/listen", True, {"_meta": {"s": 1}}, INFO)
    assert stream["_meta"] == {"s": 1, protocol.SERVER_INFO_KEY: INFO}
    assert "ttlMs" not in stream


def test_capabilities_and_log_levels_per_era() -> None:
    assert protocol.capabilities(False)["resources"] == {"listChanged": True, "subscribe": False}
    assert protocol.discover_result("i")["capabilities"]["tools"] == {"listChanged": True}  # type: ignore[index]
    assert protocol.allowed_levels({protocol.LOG_LEVEL_KEY: "error"}) == (
        "error",
        "critical",
        "alert",
        "emergency",
    )
    assert protocol.allowed_levels({}) == ()
    assert protocol.allowed_levels(None) == ()


def test_a_listen_filter_honors_what_was_asked() -> None:
    asked = {
        "notifications": {
            "promptsListChanged": True,
            "toolsListChanged": False,
            "resourceSubscriptions": ["snippet://a"],
        }
    }
    assert protocol.listen_filter(asked) == {
        "promptsListChanged": True,
        "resourceSubscriptions": ["snippet://a"],
    }


@pytest.mark.parametrize(
    ("params", "modern", "handshake", "name"),
    [
        pytest.param({}, False, "gemini-cli-mcp-client", "gemini-cli-mcp-client", id="handshake"),
        pytest.param({"_meta": {"x": 1}}, False, None, None, id="handshake-unnamed"),
        pytest.param(
            {"_meta": {**ENVELOPE, protocol.CLIENT_INFO_KEY: {"name": "claude-code"}}},
            True,
            "ignored",
            "claude-code",
            id="modern-meta",
        ),
        pytest.param({"_meta": ENVELOPE}, True, "ignored", None, id="modern-unnamed"),
        pytest.param({"_meta": "x"}, True, None, None, id="modern-meta-not-an-object"),
        pytest.param(
            {"_meta": {protocol.CLIENT_INFO_KEY: {"name": 3}}}, True, None, None, id="not-text"
        ),
    ],
)
def test_the_client_name_comes_from_its_era(
    params: dict[str, object], modern: bool, handshake: str | None, name: str | None
) -> None:
    """The name that decides how ``text`` is declared (``answers.text_required``):
    the handshake's ``initialize``, or each 2026-07-28 request's ``_meta``."""
    assert protocol.client_name(params, modern, handshake) == name
