"""Transports: one connection's session (``Channel``), and stdio.

docs/lsp.md, "Command line" and "Framing"; the daemon (``--socket``, ``--tcp``, ``--ws``)
is ``daemon.py``. pygls's own readers are replaced, not patched: its header parser
wedges on a lowercase ``content-length``, crashes on a huge one and leaves a body that
is not JSON unanswered, and its TCP and WebSocket servers share one session between all
connections. Here:

- every byte stream goes through ``framing.FrameDecoder`` and every body through
  ``framing.parse_message`` before pygls's protocol sees it, so a broken frame is logged
  and skipped, and a broken message is answered (-32700, -32600), never a wedge;
- every connection (``Channel``) has its own ``SnippetsServer``: its session,
  documents, configuration, registrations and watchers. Connections run concurrently on
  one event loop and never see each other's messages;
- a connection may need a token (``daemon_auth.TokenGate``): its first ``initialize``
  must carry it, or it gets -32001 and is closed. Until then the connection is a
  stranger's and may cost a few KiB and a few milliseconds, whatever it sends: no
  session is made for it (``Channel.server``), a message is at most
  ``Limits.max_initialize_size`` bytes, and anything but a valid
  ``initialize`` (a broken frame, a body that is no message, a request, a notification)
  closes it, a request after one short answer (-32002) that echoes nothing but its id;
- every message read, notifications included, waits for the answers before it to be
  written (``feed_paced``), and what a session sends on its own (a large settings
  document's diagnostics) waits for room too (``Channel.room``, ``lsp.offload``): a
  client that sends without reading costs ``max_unsent``;
- ``exit``, or the end of the stream, ends that connection only; SIGINT and SIGTERM end
  the process within 2 seconds (``signals.py``), SIGHUP reloads the settings;
- stdout is written by a thread of its own, so a client that stops reading blocks
  neither the event loop nor the signals, and stdin is not read while more than
  ``Limits.max_unsent`` bytes wait to be written.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import gc
import json
import logging
import os
import queue
import select
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import IO, Any, Final, Protocol

from pi_snippets_lsp.lsp import offload
from pi_snippets_lsp.lsp.daemon_auth import UNAUTHORIZED_MESSAGE, TokenGate, Verdict
from pi_snippets_lsp.lsp.limits import MAX_IN_FLIGHT, ThrottledLog
from pi_snippets_lsp.lsp.server import SnippetsProtocol, SnippetsServer
from pi_snippets_lsp.lsp.session import ServerFlags
from pi_snippets_lsp.lsp.setup import create_server
from pi_snippets_lsp.lsp.signals import on_reload_signal, on_stop_signals
from pi_snippets_lsp.wire.errors import INTERNAL_ERROR, SERVER_NOT_INITIALIZED, UNAUTHORIZED
from pi_snippets_lsp.wire.framing import FrameDecoder, Problem, Rejection, frame, parse_message

log = logging.getLogger(__name__)
#: What a stranger (or a broken client) can make us log: a line a second per kind.
throttled = ThrottledLog(log)

#: Bytes read from a stream at a time.
CHUNK: Final = 65536
NOT_INITIALIZED_MESSAGE: Final = "the server is not initialized: send initialize first"
#: Seconds a session's handlers get to answer once it ends (``exit``, a signal).
CLOSE_TIMEOUT: Final = 1.0
#: Seconds the answers written last (``shutdown``'s) get to reach stdout at the end.
FLUSH_TIMEOUT: Final = 5.0
#: Loop turns after a request, so an answer ready at once is written before the next
#: request is read (and counted by the backpressure).
_TURNS: Final = 3
#: Seconds between looks at a stdout that has no room.
_ROOM_POLL: Final = 0.05


class Writer(Protocol):
    """What pygls's protocol writes to (``JsonRPCProtocol.set_writer``)."""

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class Channel:
    """One client's channel to the server: its own server and session, the decoder of
    its stream, its end. (The client side of a connection is ``client.transport.Connection``;
    "options" are only ever the client's ``initializationOptions``, "flags" the command
    line's.)

    ``ended`` resolves with the session's exit code: 0 after ``shutdown`` then ``exit``
    (or the end of the stream after ``shutdown``), 1 otherwise, as LSP asks.
    ``token``: the daemon's token, which the first ``initialize`` must carry (None:
    none needed). ``admitted`` is set by the ``initialize`` that opens the session.
    """

    def __init__(
        self,
        flags: ServerFlags,
        writer: Writer,
        name: str,
        *,
        framed: bool = True,
        token: str | None = None,
    ) -> None:
        self.name = name
        self.writer = writer
        self.flags = flags
        self.framed = framed
        #: Made by the first message that reaches it (``server``).
        self._server: SnippetsServer | None = None
        self.limits = flags.limits
        self.gate = TokenGate(token)
        self.decoder = FrameDecoder(max_body=self.max_body)
        self.admitted = asyncio.Event()
        self.ended: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        #: Requests being worked on (their handlers' futures).
        self.in_flight: set[asyncio.Future[Any]] = set()
        #: Messages read during the first load, not handed on yet (``_hold_back``).
        self._held: collections.deque[tuple[dict[str, Any], int]] = collections.deque()
        self._held_bytes = 0
        self._release_scheduled = False
        #: The stream ended while messages were held: it ends once they are handed on.
        self._eof = False
        self._eof_at = 0.0
        #: Whether the answers waiting to be sent leave room for more (the daemon and
        #: stdio set it to their writer's ``max_unsent`` test).
        self.has_room: Callable[[], bool] = lambda: True

    @property
    def server(self) -> SnippetsServer:
        """The session's server: made when the first message reaches it, so a connection
        that never sends a valid ``initialize`` (a stranger's) costs no session, only its
        decoder and a refusal."""
        if self._server is None:
            server = self._server = create_server(self.flags)
            server.protocol.set_writer(self.writer, include_headers=self.framed)
            server.on_end = self.end
            # What the session sends on its own (diagnostics) waits for this room too.
            offload.set_room(server, self.room)
        return self._server

    @property
    def protocol(self) -> SnippetsProtocol:
        return self.server.protocol

    def _send(self, message: dict[str, Any]) -> None:
        """An answer made here, not by the session (a refusal, a broken message's)."""
        body = json.dumps(message, separators=(",", ":")).encode("ascii")
        self.writer.write(frame(body) if self.framed else body)

    def room(self) -> bool:
        """``has_room()``, as the session's own work sees it (``lsp.offload``)."""
        return self.has_room()

    @property
    def stranger(self) -> bool:
        """Whether the connection needs the token and has not sent it yet."""
        return self.gate.token is not None and not self.gate.admitted

    @property
    def max_body(self) -> int:
        """The largest body read now: small while the connection is a stranger's."""
        if self.stranger:
            return min(self.limits.max_body, self.limits.max_initialize_size)
        return self.limits.max_body

    def feed(self, data: bytes) -> None:
        """Bytes of the client's stream: every complete message is handled."""
        self.decoder.feed(data)
        for item in self.decoder.frames():
            if self.ended.done():
                return
            if isinstance(item, Problem):
                self._problem(item.message)
            else:
                self.receive(item)

    async def feed_paced(self, data: bytes, pace: Callable[[], Awaitable[None]]) -> None:
        """``feed``, awaiting ``pace()`` after each message, notifications and broken
        frames included: the daemon's backpressure (a connection whose answers pile up
        is not read further, see ``daemon.py``; a notification can make answers too, a
        settings file's diagnostics), and the loop's turns between messages."""
        self.decoder.feed(data)
        for item in self.decoder.frames():
            if self.ended.done():
                return
            if isinstance(item, Problem):
                self._problem(item.message)
            else:
                self.receive(item)
            await pace()

    def _problem(self, problem: str) -> None:
        """A broken frame: skipped; before the token, the end of the connection."""
        if self.stranger:
            throttled("closing connections that send a broken frame before initialize", problem)
            self.end(1)
        else:
            throttled("a broken frame; skipping to the next message", f"{self.name}: {problem}")

    def receive(self, body: bytes) -> bool:
        """One message's body: checked, then handed to pygls's protocol. Whether it was a
        request now being worked on."""
        message = parse_message(body)
        if isinstance(message, Rejection):
            throttled("answering messages that are not JSON-RPC", message.message)
            if message.answer:
                self._send(message.response())
            if self.stranger:
                self.end(1)
            return False
        verdict = self.gate.check(message)
        if verdict is Verdict.REFUSE:
            self._refuse(message)
            return False
        if verdict is Verdict.HOLD:
            self._hold(message)
            return False
        if verdict is Verdict.ADMIT:
            self.admitted.set()
            self.decoder.max_body = self.max_body
        if "method" in message and (self._held or self._loading()):
            self._hold_back(message, len(body))
            return False
        return self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> bool:
        """Hand a message to pygls's protocol; whether it was a request now in flight."""
        try:
            self.protocol.handle_message(self.protocol.structure_message(message))
        except Exception:  # a bug costs one message, never the session
            log.exception("%s: a %s message failed", self.name, message.get("method", "response"))
            if "method" in message and "id" in message:
                error = Rejection(INTERNAL_ERROR, "Internal error", message["id"])
                self._send(error.response())
            return False
        return "method" in message and "id" in message and self._track(message["id"])

    async def room_for_more(self) -> None:
        """Let the request just read run, and its answer be written (a few turns of the
        loop); then wait while ``MAX_IN_FLIGHT`` requests are being worked on."""
        for _ in range(_TURNS):
            await asyncio.sleep(0)
        while len(self.in_flight) >= MAX_IN_FLIGHT and not self.ended.done():
            await asyncio.wait([*self.in_flight, self.ended], return_when=asyncio.FIRST_COMPLETED)
        # Without room, the caller's own wait for room (and its stuck test) comes first.
        while self._held_full() and self.has_room() and not self.ended.done():
            await asyncio.sleep(_ROOM_POLL)

    def _track(self, msg_id: int | str) -> bool:
        future = self.protocol._request_futures.get(msg_id)
        if not isinstance(future, asyncio.Future) or future.done():
            return False
        self.in_flight.add(future)
        future.add_done_callback(self.in_flight.discard)
        future.add_done_callback(self._release_soon)
        return True

    # ------------------------------------------------------------------ the first load

    def _loading(self) -> bool:
        """Whether the session's first load is under way: every request read now would
        wait for it, and all be answered at once when it ends."""
        if self._server is None:
            return False
        first = self._server.session.first_load
        return isinstance(first, asyncio.Future) and not first.done()

    def _hold_back(self, message: dict[str, Any], size: int) -> None:
        """A request or notification read during the first load (or behind one held):
        kept, in order, until the load is done, then handed on one at a time as the
        answers leave (``_release``). Requests piped right after ``initialized`` would
        otherwise all be answered in one burst, past ``max_unsent``. Responses (to the
        load's own requests to the client) are never held: the load waits for them."""
        self._held.append((message, size))
        self._held_bytes += size
        first = self.server.session.first_load
        if isinstance(first, asyncio.Future):
            first.add_done_callback(self._release_soon)

    def _held_full(self) -> bool:
        """Whether the messages held back are as many as a connection may have in
        flight, or as large as its unsent answers may be: the reader waits then."""
        return bool(self._held) and (
            len(self._held) >= MAX_IN_FLIGHT or self._held_bytes > self.limits.max_unsent
        )

    def _release_soon(self, *_: object) -> None:
        if self._held and not self._release_scheduled:
            self._release_scheduled = True
            asyncio.get_running_loop().call_soon(self._release)

    def _release(self) -> None:
        """Hand on the messages held back, in order: once the load is done, each request
        once the one before it is answered and its answer has room to leave."""
        self._release_scheduled = False
        while self._held and not self.ended.done():
            if self._loading() or self.in_flight:
                return  # called again when the load ends, or a request is answered
            if not self.has_room():
                loop = asyncio.get_running_loop()
                if self._eof and loop.time() - self._eof_at > self.limits.stuck_timeout:
                    # The client has closed its input and does not read: it is gone.
                    self._held.clear()
                    self._held_bytes = 0
                    break
                loop.call_later(_ROOM_POLL, self._release_soon)
                return
            message, size = self._held.popleft()
            self._held_bytes -= size
            self._dispatch(message)
        if not self._held and self._eof and not self.ended.done():
            self.end_of_stream()

    def _refuse(self, message: dict[str, Any]) -> None:
        """A missing or wrong token: -32001, nothing else, and the connection ends."""
        throttled("closing connections whose initialize has not the right token", self.name)
        if "id" in message:
            refusal = Rejection(UNAUTHORIZED, UNAUTHORIZED_MESSAGE, message["id"])
            self._send(refusal.response())
        self.end(1)

    def _hold(self, message: dict[str, Any]) -> None:
        """Before a token-checked ``initialize``: the connection ends, a request after
        -32002 (its id, and no word of its method). It reaches no handler."""
        throttled("closing connections that send a message before initialize", self.name)
        if "method" in message and "id" in message:
            refusal = Rejection(SERVER_NOT_INITIALIZED, NOT_INITIALIZED_MESSAGE, message["id"])
            self._send(refusal.response())
        self.end(1)

    def end(self, code: int) -> None:
        if not self.ended.done():
            self.ended.set_result(code)

    def end_of_stream(self) -> None:
        """The client closed its side: the session ends (once the messages held back
        are handed on: ``shutdown`` and ``exit`` piped behind requests among them)."""
        if self._held and not self.ended.done():
            if not self._eof:
                self._eof = True
                self._eof_at = asyncio.get_running_loop().time()
                self._release_soon()
            return
        if self.decoder.pending:
            log.error("%s: the stream ended inside a message", self.name)
        self.end(0 if self._shut_down() else 1)

    def _shut_down(self) -> bool:
        return self._server is not None and self._server.shutdown_requested

    def exit_code(self) -> int:
        """The code the session ends with if it ends now."""
        if self.ended.done():
            return self.ended.result()
        return 0 if self._shut_down() else 1

    def reload(self) -> None:
        """SIGHUP: read the settings again (a session not initialized yet has none)."""
        server = self._server
        if server is not None and server.session.initialized and not server.session.shut_down:
            server.spawn(server.session.reload())

    async def finish(self) -> None:
        """After the end: let the handlers still running answer (at most
        ``CLOSE_TIMEOUT``), so ``shutdown`` piped right before ``exit`` is answered."""
        deadline = asyncio.get_running_loop().time() + self.limits.initialize_timeout
        while self._held and not self.ended.done():  # the end of the stream, a load on
            if asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(_ROOM_POLL)
        if self._server is not None and (pending := self.protocol.pending_handlers()):
            await asyncio.wait(pending, timeout=CLOSE_TIMEOUT)
        for _ in range(3):  # the done-callbacks that write the answers
            await asyncio.sleep(0)

    def close(self) -> None:
        """Release what the session holds: its watcher, its work in flight, the writer,
        and a message half received (up to ``max_body``: it is dropped now, not when the
        garbage collector gets to the session)."""
        self.end(1)
        self.decoder = FrameDecoder(max_body=0)
        if self._server is not None:
            self._server.close()
        self.writer.close()


# --------------------------------------------------------------------------- stdio


class _ThreadedWriter:
    """stdout, written in order by a thread of its own.

    The event loop only queues: a client that stops reading fills the pipe and blocks
    this thread, never the loop, so signals are still seen. The bytes queued are
    counted (``unsent``): the session stops reading stdin while there are more than
    ``max_unsent``. A client that has gone away (a broken pipe) ends the session through
    ``on_lost``.
    """

    def __init__(
        self, stream: IO[bytes], on_lost: Callable[[], None], max_unsent: int, stuck: float
    ) -> None:
        self.stream = stream
        self.on_lost = on_lost
        self.max_unsent = max_unsent
        self.stuck = stuck
        self.closed = False
        #: The client is gone: what is queued is not waited for at the end.
        self.abandoned = False
        self.unsent = 0
        self.progress = time.monotonic()
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):  # an in-memory stream
            self._fd = None
        self.thread = threading.Thread(target=self._run, name="stdout", daemon=True)
        self.thread.start()

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        with self._lock:
            self.unsent += len(data)
        self._queue.put(data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._queue.put(None)

    def given_up(self, stdin: int) -> bool:
        """Whether the client has closed its input (``stdin`` hung up) and not read for
        ``stuck`` seconds: it is gone, or done and not reading. A client that still holds
        its input open (an editor suspended) is waited for."""
        return time.monotonic() - self.progress > self.stuck and _hung_up(stdin)

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            try:
                self._write_all(data)
            except (OSError, ValueError) as exc:
                log.error("cannot write to the client (%s); ending the session", exc)
                self.closed = True
                self.on_lost()
                break
            with self._lock:
                self.unsent -= len(data)
                self.progress = time.monotonic()

    def _write_all(self, data: bytes) -> None:
        """Unbuffered on a real file (``os.write``): a buffered stdout left half-written by
        a blocked thread would make the interpreter's exit wait for it."""
        if self._fd is None:
            self.stream.write(data)
            self.stream.flush()
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]


def _hung_up(fd: int) -> bool:
    """Whether the writer of the pipe ``fd`` reads from has closed it."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return any(events & select.POLLHUP for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # not a pipe, or no poll()
        return False


def serve_stdio(
    flags: ServerFlags, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> int:
    """Serve one session on stdin/stdout; the process's exit status."""
    return asyncio.run(_serve_stdio(flags, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer))


async def _serve_stdio(flags: ServerFlags, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    loop = asyncio.get_running_loop()

    def lost() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone already
            loop.call_soon_threadsafe(connection.end, 1)

    limits = flags.limits
    writer = _ThreadedWriter(stdout, lost, limits.max_unsent, limits.stuck_timeout)
    connection = Channel(flags, writer, "stdio")
    connection.has_room = lambda: writer.unsent <= writer.max_unsent
    # One session in the process: what start-up made (modules, classes: most of the heap)
    # and each generation stay out of the collector's walks (``ClientLink``).
    connection.server.link.freeze_generations = True
    gc.freeze()

    fd = stdin.fileno()

    async def pace() -> None:
        await connection.room_for_more()
        while writer.unsent > writer.max_unsent and not connection.ended.done():
            if writer.abandoned or writer.given_up(fd):
                if not writer.abandoned:
                    log.error("the client closed its input and does not read; ending the session")
                writer.abandoned = True
                connection.end_of_stream()
                return
            await asyncio.sleep(_ROOM_POLL)

    async def deliver(data: bytes) -> None:
        try:
            if data:
                await connection.feed_paced(data, pace)
            else:
                connection.end_of_stream()
        except Exception:  # a bug must not stop the reading of stdin
            log.exception("stdio: handling the input failed")

    def pump() -> None:
        """stdin on its own thread (a daemon: a read that never returns cannot keep the
        process alive). It waits for each chunk to be handled, and its answers to leave
        (``pace``), before reading the next, so a client that floods the server, or does
        not read its answers, is not buffered without limit."""
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
    restore = on_stop_signals(loop, connection.end_of_stream, connection.exit_code)
    on_reload_signal(loop, connection.reload)
    try:
        code = await connection.ended
        await connection.finish()
        connection.close()
        await asyncio.to_thread(writer.thread.join, 0 if writer.abandoned else FLUSH_TIMEOUT)
    finally:
        restore()
    return code
