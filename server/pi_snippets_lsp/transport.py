"""Transports: stdio, and the TCP / WebSocket daemon where every connection is a session.

docs/lsp.md, "Command line" and "Framing". pygls's own readers are replaced, not
patched: its header parser wedges on a lowercase ``content-length``, crashes on a huge
one and leaves a body that is not JSON unanswered, and its TCP and WebSocket servers
share one session between all connections. Here:

- every byte stream goes through ``framing.FrameDecoder`` and every body through
  ``framing.parse_message`` before pygls's protocol sees it, so a broken frame is logged
  and skipped, and a broken message is answered (-32700, -32600), never a wedge;
- every connection (``Connection``) has its own ``SnippetsServer``: its session,
  documents, configuration, registrations and watchers. Connections run concurrently on
  one event loop and never see each other's messages;
- ``exit``, or the end of the stream, ends that connection only; a connection that opens
  and closes (a port scan, a readiness probe) ends nothing else; SIGINT and SIGTERM end
  the daemon with status 0.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import IO, Any, Final, Protocol

from pi_snippets_lsp.lsp.session import ServerOptions
from pi_snippets_lsp.lsp.setup import create_server
from pi_snippets_lsp.wire.framing import MAX_BODY, FrameDecoder, Problem, Rejection, parse_message

log = logging.getLogger(__name__)

#: Bytes read from a stream at a time.
CHUNK: Final = 65536
INTERNAL_ERROR: Final = -32603
#: Seconds the daemon gives its connections to close when it is told to stop.
CLOSE_TIMEOUT: Final = 5.0
#: Messages a WebSocket connection may have waiting to be sent before its client is
#: read again: a client that does not read its answers is not read either.
WS_BACKLOG: Final = 256
WS_EXTRA: Final = "pi-snippets-lsp[ws]"


class Writer(Protocol):
    """What pygls's protocol writes to (``JsonRPCProtocol.set_writer``)."""

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class Connection:
    """One client: its own server and session, the decoder of its stream, its end.

    ``ended`` resolves with the session's exit code: 0 after ``shutdown`` then ``exit``
    (or the end of the stream after ``shutdown``), 1 otherwise, as LSP asks.
    """

    def __init__(
        self, options: ServerOptions, writer: Writer, name: str, *, framed: bool = True
    ) -> None:
        self.name = name
        self.writer = writer
        self.server = create_server(options)
        self.protocol = self.server.protocol
        self.protocol.set_writer(writer, include_headers=framed)
        self.decoder = FrameDecoder()
        self.ended: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.server.on_end = self.end

    def feed(self, data: bytes) -> None:
        """Bytes of the client's stream: every complete message is handled."""
        self.decoder.feed(data)
        for item in self.decoder.frames():
            if self.ended.done():
                return
            if isinstance(item, Problem):
                log.error("%s: %s; skipping to the next message", self.name, item.message)
            else:
                self.receive(item)

    def receive(self, body: bytes) -> None:
        """One message's body: checked, then handed to pygls's protocol."""
        message = parse_message(body)
        if isinstance(message, Rejection):
            log.error("%s: %s", self.name, message.message)
            if message.answer:
                self.protocol._send_data(message.response())
            return
        try:
            self.protocol.handle_message(self.protocol.structure_message(message))
        except Exception:  # a bug costs one message, never the session
            log.exception("%s: a %s message failed", self.name, message.get("method", "response"))
            if "method" in message and "id" in message:
                error = Rejection(INTERNAL_ERROR, "Internal error", message["id"])
                self.protocol._send_data(error.response())

    def end(self, code: int) -> None:
        if not self.ended.done():
            self.ended.set_result(code)

    def end_of_stream(self) -> None:
        """The client closed its side: the session ends."""
        if self.decoder.pending:
            log.error("%s: the stream ended inside a message", self.name)
        self.end(0 if self.server.shutdown_requested else 1)

    async def finish(self) -> None:
        """After the end: let the handlers still running answer (at most
        ``CLOSE_TIMEOUT``), so ``shutdown`` piped right before ``exit`` is answered."""
        if pending := self.protocol.pending_handlers():
            await asyncio.wait(pending, timeout=CLOSE_TIMEOUT)
        for _ in range(3):  # the done-callbacks that write the answers
            await asyncio.sleep(0)

    def close(self) -> None:
        """Release what the session holds: its watcher, its work in flight, the writer."""
        self.end(1)
        self.server.close()
        self.writer.close()


# --------------------------------------------------------------------------- stdio


class _BlockingWriter:
    """stdout: each message written and flushed at once. A client that has gone away
    (a broken pipe) ends the session instead of raising in a handler."""

    def __init__(self, stream: IO[bytes], on_lost: Callable[[], None]) -> None:
        self.stream = stream
        self.on_lost = on_lost
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError) as exc:
            log.error("cannot write to the client (%s); ending the session", exc)
            self.closed = True
            self.on_lost()

    def close(self) -> None:
        self.closed = True


def serve_stdio(
    options: ServerOptions, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> int:
    """Serve one session on stdin/stdout; the process's exit status."""
    return asyncio.run(
        _serve_stdio(options, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)
    )


async def _serve_stdio(options: ServerOptions, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    loop = asyncio.get_running_loop()
    writer = _BlockingWriter(stdout, lambda: connection.end(1))
    connection = Connection(options, writer, "stdio")

    async def deliver(data: bytes) -> None:
        try:
            if data:
                connection.feed(data)
            else:
                connection.end_of_stream()
        except Exception:  # a bug must not stop the reading of stdin
            log.exception("stdio: handling the input failed")

    def pump() -> None:
        """stdin on its own thread (a daemon: a read that never returns cannot keep the
        process alive). It waits for each chunk to be handled before reading the next,
        so a client that floods the server is not buffered without limit."""
        fd = stdin.fileno()
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError as exc:
                log.error("cannot read from the client (%s)", exc)
                data = b""
            try:
                asyncio.run_coroutine_threadsafe(deliver(data), loop).result()
            except (RuntimeError, concurrent.futures.CancelledError):
                return  # the loop is gone: the session ended
            if not data:
                return

    threading.Thread(target=pump, name="stdin", daemon=True).start()
    _on_signals(loop, connection.end_of_stream)
    code = await connection.ended
    await connection.finish()
    connection.close()
    return code


def _on_signals(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, handler)


# --------------------------------------------------------------------------- the daemon


class _SocketWriter:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    def write(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    def close(self) -> None:
        if not self.writer.is_closing():
            self.writer.close()


class _WebSocketWriter:
    """One text message per JSON-RPC message, sent in order by one task."""

    def __init__(self, websocket: Any) -> None:
        self.websocket = websocket
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self.task = asyncio.ensure_future(self._send_all())

    def write(self, data: bytes) -> None:
        if not self.closed:
            self.queue.put_nowait(data.decode("utf-8"))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)

    async def drain(self) -> None:
        if self.queue.qsize() > WS_BACKLOG:
            await self.queue.join()

    async def _send_all(self) -> None:
        try:
            while (text := await self.queue.get()) is not None:
                await self.websocket.send(text)
                self.queue.task_done()
        except Exception as exc:  # the connection is gone: nothing left to send to
            log.info("websocket send failed: %s", exc)
        finally:
            with contextlib.suppress(Exception):
                await self.websocket.close()
            while not self.queue.empty():  # let a drain() waiting on it go
                self.queue.get_nowait()
                self.queue.task_done()


class Daemon:
    """Serves ``--tcp`` or ``--ws``: every connection its own session, until a signal."""

    def __init__(self, options: ServerOptions, host: str, port: int) -> None:
        self.options = options
        self.host = host
        self.port = port
        self.connections: set[Connection] = set()
        self.tasks: set[asyncio.Task[Any]] = set()

    def serve(self, scheme: str, listen: Callable[[], Awaitable[Any]]) -> int:
        try:
            return asyncio.run(self._serve(scheme, listen))
        except KeyboardInterrupt:  # a signal before the handlers were in place
            return 0

    async def _serve(self, scheme: str, listen: Callable[[], Awaitable[Any]]) -> int:
        stop = asyncio.Event()
        _on_signals(asyncio.get_running_loop(), stop.set)
        try:
            server = await listen()
        except OSError as exc:
            print(
                f"pi-snippets-lsp: cannot listen on {self.host}:{self.port}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return 1
        for sock in server.sockets:
            host, port = sock.getsockname()[:2]
            print(f"pi-snippets-lsp: listening on {scheme}://{host}:{port}", file=sys.stderr)
        sys.stderr.flush()
        await stop.wait()
        log.info("stopping: closing %d connection(s)", len(self.connections))
        server.close()
        for connection in list(self.connections):
            connection.end(0)
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=CLOSE_TIMEOUT)
        return 0

    def _track(self, connection: Connection) -> None:
        self.connections.add(connection)
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        log.info("%s: connected", connection.name)

    async def _forget(self, connection: Connection) -> None:
        await connection.finish()
        self.connections.discard(connection)
        task = asyncio.current_task()
        if task is not None:
            self.tasks.discard(task)
        connection.close()
        log.info("%s: session ended", connection.name)

    # ------------------------------------------------------------------ TCP

    def serve_tcp(self) -> int:
        return self.serve(
            "tcp", lambda: asyncio.start_server(self._tcp_session, self.host, self.port)
        )

    async def _tcp_session(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        connection = Connection(self.options, _SocketWriter(writer), f"tcp {_peer(writer)}")
        self._track(connection)
        try:
            while not connection.ended.done():
                data = await _until_ended(reader.read(CHUNK), connection)
                if data is None:
                    break
                if not data:
                    connection.end_of_stream()
                    break
                connection.feed(data)
                await writer.drain()
        except (ConnectionError, OSError) as exc:
            log.info("%s: connection lost (%s)", connection.name, exc)
        finally:
            await self._forget(connection)

    # ------------------------------------------------------------------ WebSocket

    def serve_ws(self) -> int:
        try:
            websockets = importlib.import_module("websockets.asyncio.server")
        except ImportError:
            print(
                f'pi-snippets-lsp: --ws needs the websockets package: pip install "{WS_EXTRA}"',
                file=sys.stderr,
            )
            return 2
        return self.serve(
            "ws",
            lambda: websockets.serve(self._ws_session, self.host, self.port, max_size=MAX_BODY),
        )

    async def _ws_session(self, websocket: Any) -> None:
        writer = _WebSocketWriter(websocket)
        address = websocket.remote_address
        name = f"ws {address[0]}:{address[1]}" if address else "ws"
        connection = Connection(self.options, writer, name, framed=False)
        self._track(connection)
        try:
            while not connection.ended.done():
                message = await _until_ended(websocket.recv(), connection)
                if message is None:
                    break
                connection.receive(message.encode("utf-8") if isinstance(message, str) else message)
                await writer.drain()
        except Exception as exc:  # websockets' ConnectionClosed: the client is gone
            log.info("%s: connection closed (%s)", name, exc)
            connection.end_of_stream()
        finally:
            await self._forget(connection)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.task, CLOSE_TIMEOUT)


async def _until_ended(read: Awaitable[Any], connection: Connection) -> Any:
    """``read``'s result, or None when the session ends first (``exit``, a signal)."""
    task = asyncio.ensure_future(read)
    await asyncio.wait({task, connection.ended}, return_when=asyncio.FIRST_COMPLETED)
    if not task.done():
        task.cancel()
        return None
    return task.result()


def _peer(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return str(peer)
