"""Line-delimited JSON-RPC 2.0 on stdin and stdout: MCP's stdio transport.

docs/mcp.md, "The wire". Standard library only, so the server answers its first
requests without waiting for a protocol library's import. The rules:

- A message is one line of UTF-8 JSON; the line ends at ``\\n`` (a ``\\r`` before it
  is JSON whitespace). A blank line is skipped.
- A line longer than ``max_line`` bytes is refused once it passes the cap: its bytes
  are dropped as they arrive (never buffered), it is answered with ``-32600`` (with its
  ``id`` when the line starts like a request, else ``null``), and the next line is read
  as usual.
- A line that is no message is answered with ``-32700`` (not UTF-8 JSON) or ``-32600``
  (a batch, which MCP no longer has; not an object; a bad ``id``, ``method`` or
  ``jsonrpc``), ``id: null`` when the id is unusable. A response is never answered.
- A string holding a lone UTF-16 surrogate (``"\\ud800"``: valid JSON, no Unicode
  text) is refused: a request gets ``-32602`` naming where it is; a notification or
  a response is dropped and logged.

Reading and writing each run on a thread of their own, so a client that stops reading
blocks neither the event loop nor the reader, and a signal still ends the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import re
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pi_snippets_lsp.core.serving import EXIT_GRACE, OFF_LOOP_CHARS
from pi_snippets_lsp.wire.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
)

log = logging.getLogger(__name__)

MIB: Final = 1024 * 1024
#: The longest line accepted (bytes), as the LSP server's largest body.
DEFAULT_MAX_LINE: Final = 64 * MIB
#: Bytes read from stdin at a time.
_CHUNK: Final = 1 << 16
#: How much of a refused line is kept to find its ``id``.
_HEAD: Final = 4096


#: A ``\\uD800``-``\\uDFFF`` escape: only a line holding one can decode to a lone
#: surrogate (raw bytes are read as strict UTF-8). Compiled on first use, as the next
#: pattern: neither is on the path to the first answers.
_SURROGATE_ESCAPE: Final = r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
#: The ``id`` of a line that starts like a request: ``{`` then, at most, simple
#: ``jsonrpc`` and ``method`` members, then ``"id"``. Only ever a top-level member.
_LEADING_ID: Final = (
    rb'\A\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*'
    rb'\s*"id"\s*:\s*(-?[0-9]{1,18}|"[^"\\]{0,200}")\s*[,}]'
)

Id = int | str


class RpcError(Exception):
    """A request that gets the JSON-RPC error ``code`` with ``message`` (and ``data``)."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def error(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


@dataclass(frozen=True, slots=True)
class Rejection:
    """A line that is no usable message, and the error that answers it.

    ``answer`` is False for what must get no answer (a notification, a response);
    ``id`` is the message's id when it could be read.
    """

    code: int
    message: str
    id: Id | None = None
    answer: bool = True

    def response(self) -> dict[str, object]:
        return error_response(self.id, {"code": self.code, "message": self.message})


def error_response(id_: Id | None, error: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id_, "error": error}


def _is_id(value: object) -> bool:
    """An id is an integer or a string (a bool is no integer, a float is not one)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def lone_surrogate_at(value: object) -> str | None:
    """Where in ``value`` a string (or an object's key) holds a lone surrogate, as a
    path like ``params.arguments.text``; None when every string is Unicode text."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and not _encodes(item):
                return path or "the message"
        elif isinstance(item, dict):
            for key, sub in item.items():
                where = f"{path}.{key}" if path else str(key)
                if not key.isascii() and not _encodes(key):
                    return (path + "." if path else "") + "(a key)"
                stack.append((where, sub))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", sub) for i, sub in enumerate(item))
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_line(line: bytes) -> dict[str, Any] | Rejection | None:
    """One line as a JSON-RPC 2.0 message (a dict), why it is not one, or None for a
    blank line."""
    line = line.strip()
    if not line:
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection(PARSE_ERROR, f"Parse error: the line is not UTF-8 (byte {exc.start})")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return Rejection(PARSE_ERROR, "Parse error: the line is not JSON (nested too deeply)")
    except ValueError as exc:
        return Rejection(PARSE_ERROR, f"Parse error: the line is not JSON ({exc})")
    if isinstance(value, list):
        return Rejection(
            INVALID_REQUEST, "Invalid request: MCP has no batches (a JSON array); send one per line"
        )
    if not isinstance(value, dict):
        return Rejection(INVALID_REQUEST, "Invalid request: a message is a JSON object")
    has_id = "id" in value
    msg_id = value.get("id")
    is_request = "method" in value
    if has_id and not _is_id(msg_id):
        return Rejection(
            INVALID_REQUEST, "Invalid request: an id is an integer or a string", answer=is_request
        )
    if value.get("jsonrpc") != "2.0":
        return Rejection(
            INVALID_REQUEST,
            'Invalid request: "jsonrpc" must be "2.0"',
            msg_id,
            is_request and has_id,
        )
    if is_request and not isinstance(value["method"], str):
        return Rejection(INVALID_REQUEST, "Invalid request: a method is a string", msg_id, has_id)
    if not is_request and not has_id:
        return Rejection(INVALID_REQUEST, "Invalid request: neither a method nor an id")
    if "\\u" in text and re.search(_SURROGATE_ESCAPE, text):
        where = lone_surrogate_at(value)
        if where is not None:
            return Rejection(
                INVALID_PARAMS,
                f"Invalid params: {where} holds a lone surrogate (a \\ud800-\\udfff escape "
                "that is no Unicode text)",
                msg_id,
                is_request and has_id,
            )
    return value


def leading_id(head: bytes) -> Id | None:
    """The id of a line that starts like a request (``head``: its first bytes)."""
    found = re.match(_LEADING_ID, head)
    if found is None:
        return None
    value = json.loads(found.group(1))
    return value if _is_id(value) else None


def encode(message: dict[str, Any]) -> bytes:
    """One message as a line: compact UTF-8 JSON and ``\\n``. A lone surrogate that
    reached an answer goes out as its ``\\u`` escape (UTF-8 cannot carry it)."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


#: A string at least this long is encoded once however often an answer holds it
#: (``encode_large``), off the loop like any work on a long text.
_LARGE_STRING: Final = OFF_LOOP_CHARS


def encode_large(message: dict[str, Any]) -> bytes:
    """``encode(message)`` for an answer that holds long texts, often twice (a tool's
    text content and its structured content): each distinct long string is encoded
    once and spliced in."""
    large: dict[int, str] = {}
    token = os.urandom(8).hex()

    def swap(value: object) -> object:
        if isinstance(value, str):
            if len(value) < _LARGE_STRING:
                return value
            large.setdefault(id(value), value)
            return f"{token}:{id(value)}:{token}"
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, list):
            return [swap(item) for item in value]
        return value

    skeleton = encode(swap(message))  # type: ignore[arg-type]
    if not large:
        return skeleton
    encoded = {key: encode_value(text) for key, text in large.items()}
    parts = re.split(rb'"%s:([0-9]+):%s"' % (token.encode(), token.encode()), skeleton)
    return b"".join(encoded[int(part)] if index % 2 else part for index, part in enumerate(parts))


def encode_value(value: str) -> bytes:
    """One JSON string, as ``encode`` writes it."""
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value).encode("ascii")


# --------------------------------------------------------------------------- the threads


class LineReader:
    """Reads ``fd`` on a thread of its own, and hands each line to the event loop:
    ``on_line(bytes)``, ``on_too_long(head)`` for a line refused at ``max_line``,
    ``on_eof()`` once the stream ends."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        fd: int,
        max_line: int,
        on_line: Callable[[bytes], None],
        on_too_long: Callable[[bytes], None],
        on_eof: Callable[[], None],
    ) -> None:
        self.loop = loop
        self.fd = fd
        self.max_line = max_line
        self.on_line = on_line
        self.on_too_long = on_too_long
        self.on_eof = on_eof
        self.thread = threading.Thread(target=self._run, name="mcp-stdin", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _post(self, callback: Callable[..., None], *args: object) -> None:
        # A loop that has closed has nobody listening any more.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(callback, *args)

    def _run(self) -> None:
        try:
            self._read()
        except Exception:  # a reader that dies must still end the session
            log.exception("reading stdin failed")
        self._post(self.on_eof)

    def _read(self) -> None:
        parts: list[bytes] = []  # the line so far
        size = 0
        head = b""  # the line's first bytes, to name a refused line's id
        skipping = False
        while True:
            try:
                chunk = os.read(self.fd, _CHUNK)
            except OSError as exc:
                log.info("stdin: %s", exc)
                break
            if not chunk:
                break
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if not skipping:
                    if len(head) < _HEAD:
                        head += piece[: _HEAD - len(head)]
                    if size + len(piece) > self.max_line:
                        parts, size, skipping = [], 0, True  # release the line's memory now
                        self._post(self.on_too_long, head)
                    else:
                        parts.append(piece)
                        size += len(piece)
                if end < 0:
                    break
                if not skipping:
                    self._post(self.on_line, parts[0] if len(parts) == 1 else b"".join(parts))
                parts, size, head, skipping = [], 0, b"", False
                start = end + 1
        if parts and not skipping:
            self._post(self.on_line, b"".join(parts))


class LineWriter:
    """Writes lines to ``fd`` on a thread of its own, in the order they were sent.

    ``await send(message)`` returns once the line is written (or the stream is
    gone), so a client that stops reading holds back only the writers waiting on it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self.loop = loop
        self.fd = fd
        self.broken = False
        self._queue: queue.SimpleQueue[tuple[bytes, asyncio.Future[None] | None] | None] = (
            queue.SimpleQueue()
        )
        self.thread = threading.Thread(target=self._run, name="mcp-stdout", daemon=True)

    def start(self) -> None:
        self.thread.start()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_bytes(encode(message))

    async def send_bytes(self, data: bytes) -> None:
        if self.broken:
            return
        done: asyncio.Future[None] = self.loop.create_future()
        self._queue.put((data, done))
        await done

    def post(self, data: bytes) -> None:
        """Queue a line without waiting for it (the process is ending)."""
        if not self.broken:
            self._queue.put((data, None))

    def close(self) -> None:
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            data, done = item
            if not self.broken:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self.fd, view) :]
                except OSError as exc:
                    log.info("stdout: %s; answers are dropped from here on", exc)
                    self.broken = True
            if done is None:
                continue
            try:
                self.loop.call_soon_threadsafe(_settle, done)
            except RuntimeError:  # the loop has closed
                return


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


# --------------------------------------------------------------------------- the process


def exit_now(code: int) -> None:
    """End the process now: flush the log and the standard streams, skip joining
    threads (stdin is read on a thread that may never return)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        # A closed or broken stream has nothing left to flush.
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def stop_on_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
    """SIGINT and SIGTERM call ``stop`` on the loop; if the process has not ended
    ``EXIT_GRACE`` seconds later (a write blocked on a client that stopped reading), it
    exits. A plain handler, not the loop's: it runs even while the loop waits."""

    def handler(signum: int, frame: object) -> None:
        log.info("signal %d: ending the session", signum)
        timer = threading.Timer(EXIT_GRACE, exit_now, args=(0,))
        timer.daemon = True
        timer.start()
        with contextlib.suppress(RuntimeError):  # the loop has already closed
            loop.call_soon_threadsafe(stop)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handler)
