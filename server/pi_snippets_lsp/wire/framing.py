"""LSP base-protocol framing: ``Content-Length`` headers around JSON bodies.

docs/lsp.md, "Framing". Standard library only, shared by the server's reader, the
out-of-process client and the tests that frame by hand, so there is one reading of the
rules:

- A message is a header block (lines ending in ``\\r\\n``; a bare ``\\n`` is accepted),
  an empty line, then exactly ``Content-Length`` bytes of body.
- Header names are case-insensitive (RFC 7230, which the LSP base protocol follows);
  headers other than ``Content-Length`` (``Content-Type``) are ignored.
- A header block without a valid ``Content-Length`` (missing, negative, not a number,
  over ``MAX_BODY``), or a header line longer than ``MAX_HEADER``, is a ``Problem``:
  the decoder reports it and resynchronizes at the next ``Content-Length`` header it
  finds, so a broken frame never wedges the stream and never buffers without limit.
  Recovery is linear in the bytes received: the search for the empty line that ends a
  block looks at most ``MAX_HEADER`` bytes ahead and never again at bytes it has already
  searched, whatever the garbage (a stream of ``Content-Length`` lines without an empty
  line included).
- A body must be one JSON-RPC 2.0 message (``parse_message``): a JSON object, with an
  ``id`` that is an integer or a string. What is not is a ``Rejection``, answered with
  -32700 (not UTF-8 JSON) or -32600 (a batch, which LSP does not have; not an object;
  a bad ``id``, ``method`` or ``jsonrpc``), ``id: null`` when the id is unusable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any, Final

from pi_snippets_lsp.wire.errors import INVALID_REQUEST, PARSE_ERROR

#: The largest body accepted (bytes). A bigger ``Content-Length`` is a problem, not an
#: allocation: a client cannot make the server buffer a petabyte.
MAX_BODY: Final = 64 * 1024 * 1024
#: The longest header block accepted (bytes).
MAX_HEADER: Final = 8 * 1024

_CONTENT_LENGTH: Final = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_DIGITS: Final = re.compile(rb"[0-9]+")
#: The empty line that ends a header block: CRLF CRLF, or a bare LF LF. The leftmost
#: of the two wins (at one position only one of them can start).
_BLANK_LINE: Final = re.compile(rb"\r\n\r\n|\n\n")


#: JSON-RPC error codes of a body that is not a message.


class FramingError(ValueError):
    """A stream that cannot be read as LSP frames (raised by ``read_message``)."""


def frame(body: bytes) -> bytes:
    """A body behind its ``Content-Length`` header."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as a frame: compact UTF-8 JSON behind its ``Content-Length``."""
    text = json.dumps(
        message,
        ensure_ascii=False,  # pragma: no mutate (None is as false: the same text)
        separators=(",", ":"),
    )
    return frame(text.encode())  # UTF-8, str.encode's own


@dataclass(frozen=True, slots=True)
class Problem:
    """A header block that could not be used; the decoder skipped it."""

    message: str


class FrameDecoder:
    """Incremental decoder: ``feed`` bytes as they arrive, iterate ``frames()``.

    ``frames()`` yields each complete body (``bytes``) and each ``Problem`` in stream
    order, and stops when it needs more bytes. Memory stays bounded by ``MAX_HEADER``
    plus the body being read (at most ``max_body``).
    """

    def __init__(self, max_body: int = MAX_BODY, max_header: int = MAX_HEADER) -> None:
        self.max_body = max_body
        self.max_header = max_header
        self._buffer = bytearray()
        self._length: int | None = None
        self._resync = False  # pragma: no mutate (None: only ever tested for truth)
        #: Bytes at the front of the buffer already searched for the empty line that ends
        #: a header block, and found not to start one: never searched again.
        # (From 1 alike: byte 0 never starts an empty line, leading ones are dropped first.)
        self._searched = 0  # pragma: no mutate (see above)

    @property
    def pending(self) -> int:
        """Bytes received and not yet part of a yielded frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def _drop(self, count: int) -> None:
        """Drop ``count`` bytes from the front of the buffer."""
        del self._buffer[:count]
        self._searched = max(0, self._searched - count)  # pragma: no mutate (1 alike: __init__)

    def frames(self) -> Iterator[bytes | Problem]:
        while True:
            if self._length is not None:
                if len(self._buffer) < self._length:
                    return
                body = bytes(self._buffer[: self._length])
                self._drop(self._length)
                self._length = None
                yield body
                continue
            if self._resync and not self._skip_to_next_header():
                return
            header = self._read_header_block()
            if header is None:
                return
            if isinstance(header, Problem):
                self._resync = True
                yield header
            else:
                self._length = header

    def _skip_to_next_header(self) -> bool:
        """Drop bytes up to the next ``Content-Length`` header; False: none yet."""
        match = _CONTENT_LENGTH.search(self._buffer)
        if match is None:
            # Keep a tail that may be the start of a header split across reads.
            keep = len(b"content-length") + 16
            self._drop(max(0, len(self._buffer) - keep))
            return False
        self._drop(match.start())
        self._resync = False  # pragma: no mutate (None: only ever tested for truth)
        return True

    def _read_header_block(self) -> int | Problem | None:
        """Consume one header block: the body's length, a ``Problem``, or None when the
        block is not complete yet."""
        # Blank lines between messages are tolerated (a CRLF goes as CR, then LF).
        while self._buffer[:2] == b"\r\n" or self._buffer[:1] == b"\n":
            self._drop(1)
        blank = self._find_blank_line()
        if blank is None and len(self._buffer) <= self.max_header:
            return None
        if blank is None or blank[0] > self.max_header:
            # Drop one byte only: a valid header may start inside what was buffered, and
            # resynchronizing from the next byte finds it.
            self._drop(1)
            return Problem(f"header block longer than {self.max_header} bytes")
        start, end = blank
        block = bytes(self._buffer[:start])
        length, bad_line = _content_length(block, self.max_body)
        # A block never starts with a line end (leading ones are dropped above): its first
        # line ends at the same place whether looked for from byte 0 or 1.
        first_line_end = _line_end(block, 0)  # pragma: no mutate (see above)
        if not isinstance(length, Problem):
            self._drop(end)
        elif bad_line >= 0:
            # A valid header can only start inside the line that broke this block, or
            # after it (one starting before it would hold it whole). Dropping up to that
            # line's second byte leaves the rest to the resync: garbage glued to the front
            # of a valid header ("xyzContent-Length: 5") loses only the garbage, and the
            # lines before it are not read again.
            self._drop(bad_line + 1)
        elif _CONTENT_LENGTH.search(block, 1, first_line_end):
            self._drop(1)  # no Content-Length, unless in the first line's tail
        else:
            # Every line was well formed and none a Content-Length: no header starting
            # in this block has one.
            self._drop(end)
        return length

    def _find_blank_line(self) -> tuple[int, int] | None:
        """Where the first empty line of the buffer starts and ends, looking no further
        than one byte past ``max_header`` (a block that long is a problem whatever
        follows) and not at the bytes searched before (``_searched``)."""
        # Looking further only finds an empty line past the limit: a problem alike.
        stop = min(len(self._buffer), self.max_header + 1 + 4)  # pragma: no mutate
        blank = _BLANK_LINE.search(self._buffer, self._searched, stop)
        if blank is None:
            # An empty line is at most 4 bytes: one starting in the last 3 bytes searched
            # may end in bytes not received (or not searched) yet.
            # (From earlier: bytes searched again, the same answer.)
            self._searched = max(self._searched, stop - 3)  # pragma: no mutate
            return None
        return blank.start(), blank.end()


def _content_length(block: bytes, max_body: int) -> tuple[int | Problem, int]:
    """The body's length a header block gives, or its ``Problem``; and where the line
    with the problem starts (-1 when the problem is the block as a whole). Lines are read
    only up to the first wrong one."""
    length: int | None = None
    start = 0
    while start <= len(block):
        end = _line_end(block, start)
        line = block[start:end].rstrip(b"\r")
        name, sep, value = line.partition(b":")
        if not sep:
            return Problem(f"malformed header line {_show(line)}"), start
        if name.strip().lower() == b"content-length":
            value = value.strip()
            if not _DIGITS.fullmatch(value):
                return Problem(f"invalid Content-Length {_show(value)}"), start
            if len(value) > 20 or int(value) > max_body:
                problem = f"Content-Length {_show(value)} is over the limit of {max_body} bytes"
                return Problem(problem), start
            length = int(value)
        start = end + 1
    if length is None:
        # Any negative says "the block as a whole"; a length's line is never read.
        return Problem("header block without Content-Length"), -1  # pragma: no mutate
    return length, 0  # pragma: no mutate (see above)


def _line_end(block: bytes, start: int) -> int:
    """Where the line starting at ``start`` ends (its ``\\n``, or the block's end)."""
    end = block.find(b"\n", start)
    # (``end`` is never 0: a block never starts with a line end, so "<= 0" or "< 1" alike.)
    return len(block) if end < 0 else end  # pragma: no mutate


def _show(data: bytes) -> str:
    shown = data[:60]
    text = shown.decode("ascii", "backslashreplace")  # pragma: no mutate ("ASCII" is "ascii")
    return repr(text + ("…" if len(data) > 60 else ""))


class MessageReader:
    """Messages from a blocking byte stream, one ``read()`` at a time.

    A framing problem, or a body that is not UTF-8 JSON, raises ``FramingError``; the
    end of the stream between messages gives None (inside one, ``FramingError``).
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.decoder = FrameDecoder()

    def read(self) -> Any:
        while True:
            for item in self.decoder.frames():
                if isinstance(item, Problem):
                    raise FramingError(item.message)
                try:
                    return json.loads(item.decode())  # UTF-8, bytes.decode's own
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise FramingError(f"body is not UTF-8 JSON: {exc}") from None
            chunk = _read_some(self.stream)
            if not chunk:
                if self.decoder.pending:
                    raise FramingError("the stream ended inside a message")
                return None
            self.decoder.feed(chunk)

    def __iter__(self) -> Iterator[Any]:
        while (message := self.read()) is not None:
            yield message


def _read_some(stream: IO[bytes]) -> bytes:
    """What the stream has now (at least one byte, unless it ended)."""
    read1 = getattr(stream, "read1", None)
    if read1 is not None:
        data: bytes = read1(65536)  # pragma: no mutate (a cost choice: what is there comes)
        return data
    return stream.read(1)


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Rejection:
    """A body that is not a JSON-RPC message, and the error that answers it.

    ``id`` is the request's id when it could be read, else None (sent as ``null``).
    ``answer`` is False for what must get no answer: a response (JSON-RPC never
    answers a response).
    """

    code: int
    message: str
    id: int | str | None = None
    answer: bool = True

    def response(self) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        }


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_id(value: object) -> bool:
    """LSP ids are integers or strings (a bool is no integer, a float is not one)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse_message(body: bytes) -> dict[str, Any] | Rejection:
    """One body as a JSON-RPC 2.0 message (a dict), or why it is not one."""
    try:
        text = body.decode()  # UTF-8, bytes.decode's own
    except UnicodeDecodeError as exc:
        return Rejection(PARSE_ERROR, f"Parse error: the body is not UTF-8 (byte {exc.start})")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        return Rejection(PARSE_ERROR, f"Parse error: the body is not JSON ({_reason(exc)})")
    if isinstance(value, list):
        return Rejection(INVALID_REQUEST, "Invalid request: LSP has no batches (a JSON array)")
    if not isinstance(value, dict):
        return Rejection(INVALID_REQUEST, "Invalid request: a message is a JSON object")
    has_id = "id" in value
    msg_id = value.get("id")
    is_request = "method" in value
    if has_id and not _is_id(msg_id):
        return Rejection(
            INVALID_REQUEST,
            "Invalid request: an id is an integer or a string",
            answer=is_request,
        )
    if value.get("jsonrpc") != "2.0":
        return Rejection(
            INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', msg_id, is_request
        )
    if is_request and not isinstance(value["method"], str):
        return Rejection(INVALID_REQUEST, "Invalid request: a method is a string", msg_id)
    if not is_request and not has_id:
        return Rejection(INVALID_REQUEST, "Invalid request: neither a method nor an id")
    return value


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)
