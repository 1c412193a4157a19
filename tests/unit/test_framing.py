"""LSP base-protocol framing: one reader for the server, the client and the tests.

docs/lsp.md, "Framing": case-insensitive headers, a capped body, and a broken header
block that is reported and skipped, never a wedge and never an unbounded buffer.
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_snippets_lsp.framing import (
    INVALID_REQUEST,
    MAX_HEADER,
    PARSE_ERROR,
    FrameDecoder,
    FramingError,
    MessageReader,
    Problem,
    Rejection,
    encode,
    frame,
    parse_message,
)


def decode(data: bytes, step: int | None = None, **caps: int) -> list[bytes | Problem]:
    decoder = FrameDecoder(**caps)
    out: list[bytes | Problem] = []
    step = step or max(1, len(data))
    for i in range(0, len(data), step):
        decoder.feed(data[i : i + step])
        out.extend(decoder.frames())
    return out


def test_encode_is_compact_utf8_counted_in_bytes() -> None:
    assert encode({"a": "é"}) == b'Content-Length: 10\r\n\r\n{"a":"\xc3\xa9"}'
    assert frame(b"{}") == b"Content-Length: 2\r\n\r\n{}"


@pytest.mark.parametrize(
    "header",
    [
        pytest.param(b"Content-Length: 2\r\n\r\n", id="canonical"),
        pytest.param(b"content-length: 2\r\n\r\n", id="lowercase"),
        pytest.param(b"CONTENT-LENGTH:2\r\n\r\n", id="uppercase-no-space"),
        pytest.param(b"Content-Length:   2  \r\n\r\n", id="padded"),
        pytest.param(
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n",
            id="content-type-first",
        ),
        pytest.param(b"Content-Length: 2\n\n", id="bare-newlines"),
    ],
)
def test_header_names_are_case_insensitive_and_other_headers_ignored(header: bytes) -> None:
    assert decode(header + b"{}") == [b"{}"]


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        pytest.param(b"Content-Type: x\r\n\r\n", "header block without Content-Length", id="none"),
        pytest.param(b"Content-Length: -1\r\n\r\n", "invalid Content-Length '-1'", id="negative"),
        pytest.param(b"Content-Length: ten\r\n\r\n", "invalid Content-Length 'ten'", id="word"),
        pytest.param(b"Content-Length: \r\n\r\n", "invalid Content-Length ''", id="empty"),
        pytest.param(b"Content-Length: 1.5\r\n\r\n", "invalid Content-Length '1.5'", id="float"),
        pytest.param(
            b"Content-Length: 1000000000000000\r\n\r\n",
            "Content-Length '1000000000000000' is over the limit of 100 bytes",
            id="over-the-cap",
        ),
        pytest.param(
            b"Content-Length: " + b"9" * 40 + b"\r\n\r\n",
            f"Content-Length '{'9' * 40}' is over the limit of 100 bytes",
            id="absurdly-long-number",
        ),
        pytest.param(b"garbage\r\n\r\n", "malformed header line 'garbage'", id="no-colon"),
    ],
)
def test_a_bad_header_block_is_a_problem_and_the_next_message_still_arrives(
    header: bytes, problem: str
) -> None:
    data = header + b"{}" + encode({"next": 1})
    assert decode(data, max_body=100) == [Problem(problem), b'{"next":1}']


@pytest.mark.parametrize("step", [1, 3, 7, 1000])
def test_resynchronization_works_whatever_the_read_sizes(step: int) -> None:
    data = b"".join(
        [
            encode({"a": 1}),
            b"Content-Length: -5\r\n\r\n{garbage}",
            encode({"b": 2}),
            b"X" * (MAX_HEADER + 10),
            encode({"c": 3}),
        ]
    )
    out = decode(data, step)
    bodies = [json.loads(b) for b in out if isinstance(b, bytes)]
    assert bodies == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert sum(isinstance(b, Problem) for b in out) == 2


def test_a_header_line_without_end_is_not_buffered_without_limit() -> None:
    decoder = FrameDecoder()
    problems = 0
    for _ in range(100):
        decoder.feed(b"Content-Length: 5" + b"A" * 10_000)
        problems += sum(isinstance(item, Problem) for item in decoder.frames())
    assert problems >= 1
    assert decoder.pending <= MAX_HEADER + 64
    decoder.feed(b"\r\n\r\n" + encode({"after": True}))
    assert [item for item in decoder.frames() if isinstance(item, bytes)][-1] == b'{"after":true}'


def test_a_body_is_read_exactly_and_waits_for_its_last_byte() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: 4\r\n\r\nab")
    assert list(decoder.frames()) == []
    decoder.feed(b"cdContent-Length: 1\r\n\r\n")
    assert list(decoder.frames()) == [b"abcd"]
    decoder.feed(b"x")
    assert list(decoder.frames()) == [b"x"]
    assert decoder.pending == 0


def test_blank_lines_between_messages_are_tolerated() -> None:
    assert decode(b"\r\n\n" + encode({"a": 1})) == [b'{"a":1}']


@given(
    st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=3), max_size=5),
    st.integers(min_value=1, max_value=50),
)
def test_any_messages_split_anywhere_come_back_whole(
    messages: list[dict[str, str]], step: int
) -> None:
    data = b"".join(encode(m) for m in messages)
    assert [json.loads(b) for b in decode(data, step)] == messages  # type: ignore[arg-type]


def test_message_reader_reads_one_message_at_a_time() -> None:
    stream = io.BytesIO(encode({"a": 1}) + encode({"b": 2}))
    reader = MessageReader(stream)
    assert reader.read() == {"a": 1}
    assert reader.read() == {"b": 2}
    assert reader.read() is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"Content-Length: x\r\n\r\n", "invalid Content-Length", id="bad-header"),
        pytest.param(frame(b"{not json"), "body is not UTF-8 JSON", id="bad-json"),
        pytest.param(frame(b'"\xff"'), "body is not UTF-8 JSON", id="bad-utf8"),
        pytest.param(b"Content-Length: 10\r\n\r\n{}", "ended inside a message", id="truncated"),
    ],
)
def test_message_reader_raises_on_a_broken_stream(data: bytes, message: str) -> None:
    with pytest.raises(FramingError, match=message):
        list(MessageReader(io.BytesIO(data)))


class OneByteAtATime(io.RawIOBase):
    """A stream without ``read1``: the reader must still get every message."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk, self.data = self.data[:1], self.data[1:]
        return chunk


def test_message_reader_works_on_a_stream_without_read1() -> None:
    assert list(MessageReader(OneByteAtATime(encode({"a": [1, 2]})))) == [{"a": [1, 2]}]


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"xyz", id="glued-to-the-header"),
        pytest.param(b"\x00\xff junk: here", id="a-line-with-a-colon"),
        pytest.param(b"Content-Length: 99999999999999999999999", id="a-bad-header-first"),
    ],
)
def test_a_valid_header_glued_behind_garbage_is_found(garbage: bytes) -> None:
    """The bad block loses one byte, not its whole length: the resync finds the valid
    ``Content-Length`` inside what was read as one broken header block."""
    out = decode(garbage + encode({"found": True}), max_body=100)
    assert [b for b in out if isinstance(b, bytes)] == [b'{"found":true}']


@given(st.binary(max_size=300), st.integers(min_value=1, max_value=64))
def test_any_bytes_before_a_message_never_hide_the_message_for_good(
    noise: bytes, step: int
) -> None:
    """Whatever came before, a valid message followed by enough valid messages gets
    through: the decoder resynchronizes, never wedges. (Noise may declare a body that
    swallows some of what follows, up to its length.)"""
    marker = encode({"m": 1})
    data = noise + b"\r\n\r\n" + marker * 40
    bodies = [b for b in decode(data, step, max_body=2000) if isinstance(b, bytes)]
    assert b'{"m":1}' in bodies


@pytest.mark.parametrize(
    ("body", "code", "msg_id", "answer"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"x\xff"}', PARSE_ERROR, None, True,
                     id="not-utf8"),
        pytest.param(b"{", PARSE_ERROR, None, True, id="not-json"),
        pytest.param(b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"n"}', PARSE_ERROR, None, True,
                     id="a-bom-is-not-json"),
        pytest.param(b'{"a": NaN}', PARSE_ERROR, None, True, id="nan"),
        pytest.param(b"[" * 5000 + b"]" * 5000, PARSE_ERROR, None, True, id="too-deep"),
        pytest.param(b"[]", INVALID_REQUEST, None, True, id="batch"),
        pytest.param(b"7", INVALID_REQUEST, None, True, id="number"),
        pytest.param(b'{"jsonrpc":"2.0","id":{},"method":"m"}', INVALID_REQUEST, None, True,
                     id="object-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":[],"method":"m"}', INVALID_REQUEST, None, True,
                     id="array-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":false,"method":"m"}', INVALID_REQUEST, None, True,
                     id="bool-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":2.5,"method":"m"}', INVALID_REQUEST, None, True,
                     id="float-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":null,"method":"m"}', INVALID_REQUEST, None, True,
                     id="null-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":{},"result":1}', INVALID_REQUEST, None, False,
                     id="a-response-is-never-answered"),
        pytest.param(b'{"jsonrpc":"1.0","id":4,"method":"m"}', INVALID_REQUEST, 4, True,
                     id="wrong-version-keeps-the-id"),
        pytest.param(b'{"id":"s","method":"m"}', INVALID_REQUEST, "s", True, id="no-version"),
        pytest.param(b'{"jsonrpc":"2.0","id":4,"method":[]}', INVALID_REQUEST, 4, True,
                     id="method-not-a-string"),
        pytest.param(b'{"jsonrpc":"2.0"}', INVALID_REQUEST, None, True, id="empty-message"),
    ],
)  # fmt: skip
def test_a_body_that_is_no_message_is_rejected(
    body: bytes, code: int, msg_id: object, answer: bool
) -> None:
    rejection = parse_message(body)
    assert isinstance(rejection, Rejection)
    assert (rejection.code, rejection.id, rejection.answer) == (code, msg_id, answer)
    response = rejection.response()
    assert response["id"] == msg_id and response["error"]["code"] == code
    assert set(response["error"]) == {"code", "message"}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}', id="request"),
        pytest.param(b'{"jsonrpc":"2.0","id":"a-string","method":"m"}', id="string-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":-3,"method":"m"}', id="negative-id"),
        pytest.param(b'{"jsonrpc":"2.0","method":"n"}', id="notification"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"result":null}', id="response"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}', id="error"),
    ],
)
def test_a_message_is_parsed(body: bytes) -> None:
    assert parse_message(body) == json.loads(body)
