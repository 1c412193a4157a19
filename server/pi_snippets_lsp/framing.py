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
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any, Final

#: The largest body accepted (bytes). A bigger ``Content-Length`` is a problem, not an
#: allocation: a client cannot make the server buffer a petabyte.
MAX_BODY: Final = 64 * 1024 * 1024
#: The longest header block accepted (bytes).
MAX_HEADER: Final = 8 * 1024

_CONTENT_LENGTH: Final = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_DIGITS: Final = re.compile(rb"[0-9]+")


class FramingError(ValueError):
    """A stream that cannot be read as LSP frames (raised by ``read_message``)."""


def frame(body: bytes) -> bytes:
    """A body behind its ``Content-Length`` header."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as a frame: compact UTF-8 JSON behind its ``Content-Length``."""
    return frame(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


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
        self._resync = False

    @property
    def pending(self) -> int:
        """Bytes received and not yet part of a yielded frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def frames(self) -> Iterator[bytes | Problem]:
        while True:
            if self._length is not None:
                if len(self._buffer) < self._length:
                    return
                body = bytes(self._buffer[: self._length])
                del self._buffer[: self._length]
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
            if len(self._buffer) > keep:
                del self._buffer[:-keep]
            return False
        del self._buffer[: match.start()]
        self._resync = False
        return True

    def _read_header_block(self) -> int | Problem | None:
        """Consume one header block: the body's length, a ``Problem``, or None when the
        block is not complete yet."""
        # Blank lines between messages are tolerated.
        while self._buffer[:2] == b"\r\n" or self._buffer[:1] == b"\n":
            del self._buffer[: 2 if self._buffer[:1] == b"\r" else 1]
        end, separator = _block_end(self._buffer)
        if end < 0 and len(self._buffer) <= self.max_header:
            return None
        if end < 0 or end > self.max_header:
            # Drop one byte only: a valid header may start inside what was buffered, and
            # resynchronizing from the next byte finds it.
            del self._buffer[:1]
            return Problem(f"header block longer than {self.max_header} bytes")
        block = bytes(self._buffer[:end])
        del self._buffer[: end + separator]
        return _content_length(block, self.max_body)


def _block_end(buffer: bytearray) -> tuple[int, int]:
    """Index of the empty line ending the header block, and its length; (-1, 0) if none."""
    crlf = buffer.find(b"\r\n\r\n")
    lf = buffer.find(b"\n\n")
    candidates = [(i, n) for i, n in ((crlf, 4), (lf, 2)) if i >= 0]
    if not candidates:
        return -1, 0
    return min(candidates)


def _content_length(block: bytes, max_body: int) -> int | Problem:
    length: int | None = None
    for raw_line in block.split(b"\n"):
        line = raw_line.rstrip(b"\r")
        name, sep, value = line.partition(b":")
        if not sep:
            return Problem(f"malformed header line {_show(line)}")
        if name.strip().lower() != b"content-length":
            continue
        value = value.strip()
        if not _DIGITS.fullmatch(value):
            return Problem(f"invalid Content-Length {_show(value)}")
        if len(value) > 20 or int(value) > max_body:
            return Problem(f"Content-Length {_show(value)} is over the limit of {max_body} bytes")
        length = int(value)
    if length is None:
        return Problem("header block without Content-Length")
    return length


def _show(data: bytes) -> str:
    text = data[:60].decode("ascii", "backslashreplace")
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
                    return json.loads(item.decode("utf-8"))
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
        data: bytes = read1(65536)
        return data
    return stream.read(1)
