"""What a daemon connection writes, and how its reading is paced by what it has not
sent (docs/lsp.md, "Daemon": backpressure). A connection whose answers have not left for
``stuck_timeout`` seconds is stuck (``StuckError``), and the daemon closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pi_snippets_lsp.lsp.transport import Channel

log = logging.getLogger(__name__)


class StuckError(Exception):
    """A connection whose answers have not left for ``stuck_timeout`` seconds."""


# --------------------------------------------------------------------------- writers


class SocketWriter:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    def write(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    def close(self) -> None:
        if not self.writer.is_closing():
            self.writer.close()


class WebSocketWriter:
    """One text message per JSON-RPC message, sent in order by one task; ``unsent`` counts
    the bytes queued, ``room`` is set while they are at most half the limit."""

    def __init__(self, websocket: Any, max_unsent: int) -> None:
        self.websocket = websocket
        self.max_unsent = max_unsent
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.unsent = 0
        self.room = asyncio.Event()
        self.room.set()
        self.closed = False
        self.task = asyncio.ensure_future(self._send_all())

    def write(self, data: bytes) -> None:
        if not self.closed:
            self.unsent += len(data)
            if self.unsent > self.max_unsent:
                self.room.clear()
            self.queue.put_nowait(data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)

    async def _send_all(self) -> None:
        try:
            while (data := await self.queue.get()) is not None:
                await self.websocket.send(data.decode("utf-8"))
                self.unsent -= len(data)
                if self.unsent <= self.max_unsent // 2:
                    self.room.set()
        except Exception as exc:  # the connection is gone: nothing left to send to
            log.info("websocket send failed: %s", exc)
        finally:
            self.closed = True
            self.room.set()
            with contextlib.suppress(Exception):
                await self.websocket.close()
            while not self.queue.empty():
                self.queue.get_nowait()


# --------------------------------------------------------------------------- backpressure


def stream_pacer(
    connection: Channel, writer: asyncio.StreamWriter, limits: Any
) -> Callable[[], Awaitable[None]]:
    transport = writer.transport

    async def pace() -> None:
        await connection.room_for_more()
        if transport.get_write_buffer_size() > limits.max_unsent:
            try:  # drain() waits while the transport is past its high-water mark
                await asyncio.wait_for(writer.drain(), limits.stuck_timeout)
            except TimeoutError:
                raise StuckError from None

    return pace


def ws_pacer(
    connection: Channel, writer: WebSocketWriter, limits: Any
) -> Callable[[], Awaitable[None]]:
    async def pace() -> None:
        await connection.room_for_more()
        if not writer.room.is_set():
            try:
                await asyncio.wait_for(writer.room.wait(), limits.stuck_timeout)
            except TimeoutError:
                raise StuckError from None

    return pace


def room_in(transport: asyncio.WriteTransport, max_unsent: int) -> Callable[[], bool]:
    """Whether what ``transport`` has not sent yet leaves room for more."""
    return lambda: transport.get_write_buffer_size() <= max_unsent


def abort(websocket: Any) -> None:
    with contextlib.suppress(Exception):
        websocket.transport.abort()


def set_max_message(websocket: Any, size: int) -> None:
    """The largest message a WebSocket connection takes from now on (websockets reads
    its protocol's limit at each frame: ``max_message_size`` since 15, ``max_size``
    before)."""
    protocol = websocket.protocol
    name = "max_message_size" if hasattr(protocol, "max_message_size") else "max_size"
    setattr(protocol, name, size)
