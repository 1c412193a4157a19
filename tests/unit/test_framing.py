"""LSP base-protocol framing: one reader for the server, the client and the tests.

docs/lsp.md, "Framing": case-insensitive headers, a capped body, and a broken header
block that is reported and skipped, never a wedge and never an unbounded buffer.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_snippets_lsp.wire import framing
from pi_snippets_lsp.wire.errors import INVALID_REQUEST, PARSE_ERROR
from pi_snippets_lsp.wire.framing import (
    MAX_HEADER,
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
        pytest.param(
            b"Content-Length: 2\r\nContent-Type: x\r\nX-Other: y\r\n\r\n",
            id="content-length-first-then-two-more",
        ),
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


#: Nested past what ``json.loads`` parses on every supported CPython: its limit differs by
#: version (3.13 reads 5,000 levels that 3.11 refuses), 100,000 fail on each.
TOO_DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("body", "code", "msg_id", "answer"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"x\xff"}', PARSE_ERROR, None, True,
                     id="not-utf8"),
        pytest.param(b"{", PARSE_ERROR, None, True, id="not-json"),
        pytest.param(b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"n"}', PARSE_ERROR, None, True,
                     id="a-bom-is-not-json"),
        pytest.param(b'{"a": NaN}', PARSE_ERROR, None, True, id="nan"),
        pytest.param(TOO_DEEP, PARSE_ERROR, None, True, id="too-deep"),
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


def _json_error(text: str) -> str:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return str(exc)
    raise AssertionError(f"{text!r} is JSON")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b'{"method":"x\xff"}', "Parse error: the body is not UTF-8 (byte 12)",
                     id="not-utf8-names-the-byte"),
        pytest.param(b"{", f"Parse error: the body is not JSON ({_json_error('{')})",
                     id="not-json-says-why"),
        pytest.param(b'{"a": NaN}', "Parse error: the body is not JSON (NaN is not JSON)",
                     id="nan"),
        pytest.param(b'{"a": -Infinity}',
                     "Parse error: the body is not JSON (-Infinity is not JSON)", id="infinity"),
        pytest.param(TOO_DEEP,
                     "Parse error: the body is not JSON (nested too deeply)", id="too-deep"),
        pytest.param(b"[]", "Invalid request: LSP has no batches (a JSON array)", id="batch"),
        pytest.param(b'"m"', "Invalid request: a message is a JSON object", id="string"),
        pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"m"}',
                     "Invalid request: an id is an integer or a string", id="bool-id"),
        pytest.param(b'{"jsonrpc":"2","id":1,"method":"m"}',
                     'Invalid request: "jsonrpc" must be "2.0"', id="version"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":3}',
                     "Invalid request: a method is a string", id="method"),
        pytest.param(b'{"jsonrpc":"2.0","params":[]}',
                     "Invalid request: neither a method nor an id", id="neither"),
    ],
)  # fmt: skip
def test_a_rejection_tells_the_client_what_is_wrong_in_words(body: bytes, message: str) -> None:
    """The error message is what a client author reads in their log: each kind of bad
    body has its own sentence, with the detail (the byte, the JSON error) that locates it."""
    rejection = parse_message(body)
    assert isinstance(rejection, Rejection)
    assert rejection.message == message


def test_a_rejection_answers_as_a_complete_jsonrpc_error_response() -> None:
    """The answer is a JSON-RPC 2.0 error response: version, the request's id, code and
    message, nothing else, so any client library accepts it."""
    rejection = parse_message(b'{"jsonrpc":"1.0","id":7,"method":"m"}')
    assert isinstance(rejection, Rejection)
    assert rejection.response() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": INVALID_REQUEST, "message": 'Invalid request: "jsonrpc" must be "2.0"'},
    }


def test_a_response_with_a_wrong_version_gets_no_answer() -> None:
    """JSON-RPC never answers a response, even a malformed one: a bad ``jsonrpc`` on a
    message without ``method`` is rejected with ``answer`` False (and its id kept)."""
    rejection = parse_message(b'{"jsonrpc":"1.0","id":4,"result":1}')
    assert isinstance(rejection, Rejection)
    assert (rejection.id, rejection.answer) == (4, False)


@pytest.mark.parametrize("blank", [b"\r\n", b"\n", b"\r\n\r\n", b"\n\r\n"])
def test_any_blank_lines_before_a_message_are_skipped_without_eating_it(blank: bytes) -> None:
    """A blank line (CRLF or a bare LF) between messages is dropped whole, and only it:
    the header that follows keeps its first byte."""
    assert decode(blank + encode({"a": 1})) == [b'{"a":1}']
    assert decode(encode({"a": 1}) + blank + encode({"b": 2})) == [b'{"a":1}', b'{"b":2}']


def test_messages_with_bare_newline_headers_arrive_together_and_apart() -> None:
    """The header block ends at the FIRST empty line: two bare-LF framed messages read
    in one go are two messages, not one block running into the second header."""
    data = b"Content-Length: 2\n\n{}Content-Length: 3\n\n[1]"
    assert decode(data) == [b"{}", b"[1]"]


def test_a_header_block_of_exactly_max_header_bytes_is_accepted() -> None:
    """``max_header`` is the longest block accepted: a block of that many bytes is read,
    one more byte is a problem. Waiting for the end of a block also stops at the limit:
    up to ``max_header`` bytes without an empty line are kept, one more is a problem."""
    header = b"Content-Length: 2"
    assert decode(header + b"\r\n\r\n{}", max_header=len(header)) == [b"{}"]
    too_long = decode(header + b"\r\n\r\n{}", max_header=len(header) - 1)
    assert too_long[0] == Problem(f"header block longer than {len(header) - 1} bytes")
    assert b"{}" not in too_long

    decoder = FrameDecoder(max_header=len(header))
    decoder.feed(header)
    assert list(decoder.frames()) == []
    decoder.feed(b"\r")
    assert list(decoder.frames()) == [Problem(f"header block longer than {len(header)} bytes")]


def test_an_over_long_block_loses_one_byte_so_a_header_right_behind_it_is_found() -> None:
    """A block over the limit is dropped one byte at a time: a valid header that starts
    at its second byte (one byte of noise glued in front) is still found."""
    header = b"Content-Length:" + b" " * (MAX_HEADER - 17) + b" 2"
    assert len(header) == MAX_HEADER
    out = decode(b"x" + header + b"\r\n\r\n{}")
    assert out == [Problem(f"header block longer than {MAX_HEADER} bytes"), b"{}"]


def test_a_bad_block_loses_one_byte_so_a_header_right_behind_it_is_found() -> None:
    """One byte of noise glued to a header makes a block without Content-Length; only
    that byte is dropped, and the header behind it is read."""
    out = decode(b"x" + encode({"a": 1}))
    assert out == [Problem("header block without Content-Length"), b'{"a":1}']


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        pytest.param(b"BOX\r\nContent-Length: 2", "malformed header line 'BOX'", id="crlf-only"),
        pytest.param(b"no colon \r\nContent-Length: 2", "malformed header line 'no colon '",
                     id="trailing-blank-kept"),
        pytest.param(b"Content-Length: 1:2", "invalid Content-Length '1:2'",
                     id="first-colon-splits"),
        pytest.param(b"Content-Length: " + b"x" * 60, f"invalid Content-Length '{'x' * 60}'",
                     id="sixty-bytes-shown-whole"),
        pytest.param(b"Content-Length: x" + b"7" * 60, f"invalid Content-Length 'x{'7' * 59}…'",
                     id="longer-is-cut-at-sixty"),
    ],
)  # fmt: skip
def test_a_problem_quotes_the_offending_line_as_received(header: bytes, problem: str) -> None:
    """The problem shows the line without its line ending (CR LF or LF) and nothing
    else removed, split at the first colon; more than 60 bytes are cut with "…"."""
    assert decode(header + b"\r\n\r\n{}", max_body=10**40)[0] == Problem(problem)


def test_a_body_of_exactly_max_body_bytes_is_accepted() -> None:
    """``max_body`` is the largest body accepted; one byte more is a problem."""
    assert decode(frame(b"[1]"), max_body=3) == [b"[1]"]
    assert decode(frame(b"[1]"), max_body=2)[0] == Problem(
        "Content-Length '3' is over the limit of 2 bytes"
    )


def test_a_length_of_more_than_20_digits_is_refused_whatever_the_limit() -> None:
    """A length is never converted from more than 20 digits (a huge digit string costs
    time to convert, and no stream carries 10**20 bytes): 20 digits are read when the
    limit allows them, 21 are over the limit."""
    decoder = FrameDecoder(max_body=10**30)
    decoder.feed(b"Content-Length: " + b"9" * 20 + b"\r\n\r\n{}")
    assert list(decoder.frames()) == []
    assert decoder.pending == 2
    over = b"1" + b"0" * 20
    assert decode(b"Content-Length: " + over + b"\r\n\r\n", max_body=10**30) == [
        Problem(f"Content-Length '{over.decode()}' is over the limit of {10**30} bytes")
    ]


def test_hunting_for_a_header_keeps_only_what_could_start_one() -> None:
    """While resynchronizing, the decoder holds at most a header name and 16 blanks (the
    longest start of a header split across reads it still finds), not the noise."""
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: x\r\n\r\n")
    assert [type(item) for item in decoder.frames()] == [Problem]
    decoder.feed(b"n" * 1000 + b"Content-Length" + b" " * 16)
    assert list(decoder.frames()) == []
    assert decoder.pending <= len(b"Content-Length") + 16
    decoder.feed(b": 2\r\n\r\n{}")
    assert list(decoder.frames()) == [b"{}"]


def test_a_stream_that_ends_inside_a_message_says_so() -> None:
    with pytest.raises(FramingError) as caught:
        MessageReader(io.BytesIO(b"Content-Length: 10\r\n\r\n{}")).read()
    assert str(caught.value) == "the stream ended inside a message"


class Pipe(io.RawIOBase):
    """A peer that has sent ``data`` and keeps the stream open: asking for more bytes
    than were sent would block, here it fails the test."""

    def __init__(self, data: bytes, *, chunks: bool) -> None:
        self.data = data
        self.chunks = chunks
        if chunks:
            self.read1 = self._read1  # type: ignore[method-assign]

    def readable(self) -> bool:
        return True

    def _read1(self, size: int = -1) -> bytes:
        chunk, self.data = self.data, b""
        return chunk

    def read(self, size: int | None = -1) -> bytes:
        if self.chunks:
            raise AssertionError("a stream with read1 is read with read1")
        if size is None or size < 0 or size > len(self.data):
            raise AssertionError(f"would block: read({size}) with {len(self.data)} bytes sent")
        chunk, self.data = self.data[:size], self.data[size:]
        return chunk


def test_a_message_is_returned_without_waiting_for_bytes_not_sent() -> None:
    """A stream without ``read1`` is read a byte at a time: a message whose last byte
    has arrived is returned at once, the reader never asks for bytes the peer has not
    sent (which would block a pipe forever)."""
    data = encode({"od": 1})
    assert len(data) % 2 == 1
    assert MessageReader(Pipe(data, chunks=False)).read() == {"od": 1}


def test_a_stream_with_read1_is_read_in_chunks() -> None:
    """A buffered stream is read with ``read1``, what is available at once (one call
    for a whole message, not one per byte); ``read`` is never called."""
    assert MessageReader(Pipe(encode({"a": 1}) + encode({"b": 2}), chunks=True)).read() == {"a": 1}


def test_a_valid_header_after_a_bad_line_of_the_same_block_is_found() -> None:
    out = decode(b"Content-Length: x\r\n" + encode({"a": 1}))
    assert out == [Problem("invalid Content-Length 'x'"), b'{"a":1}']


def _work(data: bytes) -> tuple[int, int]:
    """Bytes the decoder's searches look at while decoding ``data`` fed in 64 KiB reads
    (counted through a buffer that records every slice and search), and its problems."""
    decoder = FrameDecoder()
    looked = 0
    problems = 0
    original = framing._BLANK_LINE

    class Counting:
        def search(self, buffer: bytearray, pos: int = 0, endpos: int | None = None) -> Any:
            nonlocal looked
            end = len(buffer) if endpos is None else min(endpos, len(buffer))
            found = original.search(buffer, pos, end)
            looked += max(0, (end if found is None else found.end()) - pos)
            return found

    framing._BLANK_LINE = Counting()  # type: ignore[assignment]
    try:
        for start in range(0, len(data), 65536):
            decoder.feed(data[start : start + 65536])
            problems += sum(isinstance(item, Problem) for item in decoder.frames())
    finally:
        framing._BLANK_LINE = original
    return looked, problems


@pytest.mark.parametrize(
    "line",
    [b"Content-Length: 5\r\n", b"Content-Length:", b"x: y\r\n", b"\r\nContent-Length: x\r\n"],
)
def test_recovery_from_garbage_is_linear_in_its_size(line: bytes) -> None:
    """Header garbage costs the decoder work in proportion to its size: the search for
    the empty line that ends a block never looks again at bytes it has searched (the old
    decoder searched the whole buffer again after each byte it dropped: quadratic)."""
    small = _work(line * (16_384 // len(line)))
    large = _work(line * (262_144 // len(line)))
    assert large[0] <= 20 * max(small[0], 1) + 65536, (small, large)
    assert large[0] <= 4 * 262_144


def test_a_header_whose_name_only_ends_in_content_length_is_no_length() -> None:
    """``X-Content-Length`` in a later line of a block without Content-Length: the block
    is a problem, and nothing in it is read as a header (the body behind it is not)."""
    out = decode(b"A: b\r\nX-Content-Length: 2\r\n\r\n{}")
    assert out == [Problem("header block without Content-Length")]


def test_an_empty_line_at_the_end_of_a_block_is_a_malformed_line() -> None:
    """LF, then CRLF CRLF: the block's last line is empty, and an empty header line is
    malformed, not skipped (the body is not read as this block's)."""
    out = decode(b"Content-Length: 2\n\r\n\r\n{}")
    assert out == [Problem("malformed header line ''")]
