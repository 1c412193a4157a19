"""The daemon: ``--socket``, ``--tcp`` and ``--ws``, every connection a session of its own,
reachable by its user only, and no client able to wedge, starve or outgrow it.

docs/lsp.md, "Daemon: who may connect, and what one client may cost".

Who may connect:

- ``--socket``: a Unix socket, mode 0600, in the user's private folder
  (``daemon_folder.py``); a peer of another uid (``SO_PEERCRED``) is closed at once.
- ``--tcp``/``--ws``: the first ``initialize`` must carry the token the daemon wrote to
  its token file (``daemon_auth.TokenGate``); ``--ws`` also refuses, with 403 at the
  handshake, a foreign ``Origin`` or ``Host`` (``daemon_auth.handshake_refusal``).

What one client may cost (``limits.Limits``): connections at once; the time to a valid
``initialize``; the body size; the answers waiting to be sent. A connection is read only
while its answers leave: after each request the reader lets the answer be written, and
stops while more than ``max_unsent`` bytes wait (or ``MAX_IN_FLIGHT`` requests are being
worked on), closing the connection after ``stuck_timeout`` seconds stuck. A bare connect
costs nothing until its first byte: the session is made then.

What a session leaves: nothing, and soon. A session is a web of reference cycles (pygls's
server, protocol and handlers point at one another), which only a full collection of
the garbage collector frees, and Python runs one only once the long-lived objects have
grown by a quarter: a daemon whose clients come and go held a hundred ended sessions
(~10 MB) at times. A collection therefore follows the end of sessions (one a second at
most, ``COLLECT_DELAY``), and the objects of the start (modules, classes: most of the
heap) are frozen out of the collector's walks (``gc.freeze``), so it walks the sessions'
objects only: a few milliseconds, not the ~60 ms of the whole heap.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
import os
import socket
import stat
import struct
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final, Literal

from pi_snippets_lsp.lsp import offload
from pi_snippets_lsp.lsp.daemon_auth import allowed_hosts, handshake_refusal
from pi_snippets_lsp.lsp.daemon_streams import (
    SocketWriter,
    StuckError,
    WebSocketWriter,
    abort,
    room_in,
    set_max_message,
    stream_pacer,
    ws_pacer,
)
from pi_snippets_lsp.lsp.limits import ThrottledLog
from pi_snippets_lsp.lsp.session import ServerFlags
from pi_snippets_lsp.lsp.signals import on_reload_signal, on_stop_signals
from pi_snippets_lsp.lsp.transport import CHUNK, CLOSE_TIMEOUT, Channel
from pi_snippets_lsp.wire.daemon_files import (
    UnsafeFolderError,
    default_socket_path,
    default_token_path,
    ensure_private_folder,
    lock_token_file,
    new_token,
    remove_if_holding,
    runtime_folder,
    unlock_token_file,
    write_private_file,
)

log = logging.getLogger(__name__)

WS_EXTRA: Final = "pi-snippets-lsp[ws]"
#: WebSocket messages websockets may hold received before the server reads them (it
#: stops reading the socket past that): with ``max_body`` each, the most held per client.
WS_MAX_QUEUE: Final = 4
#: Seconds from the end of a session to the collection of its garbage; the sessions that
#: end meanwhile share that collection.
COLLECT_DELAY: Final = 1.0

Kind = Literal["unix", "tcp", "ws"]


@dataclass(frozen=True)
class Listen:
    """Where and how the daemon listens (the command line's transport choice)."""

    kind: Kind
    host: str = "127.0.0.1"
    port: int = 2087
    #: ``--socket PATH`` (None: the default socket in the daemon's folder).
    path: Path | None = None
    #: ``--token-file FILE`` (None: the default token file in the daemon's folder).
    token_file: Path | None = None
    #: ``--allow-origin``: web origins a ``--ws`` handshake may come from.
    allow_origins: tuple[str, ...] = ()


class Daemon:
    """Serves one ``Listen`` until SIGINT or SIGTERM; SIGHUP reloads every session."""

    def __init__(self, flags: ServerFlags, listen: Listen) -> None:
        self.flags = flags
        self.listen = listen
        self.limits = flags.limits
        self.token: str | None = None
        self.token_file: Path | None = None
        self.socket_path: Path | None = None
        self.connections: set[Channel] = set()
        self.tasks: set[asyncio.Task[Any]] = set()
        #: Connections open (sessions, and connections that have not sent a byte yet).
        self.open = 0
        self.throttled = ThrottledLog(log)
        self._collect: asyncio.TimerHandle | None = None
        #: Connections that need the token and have not sent it, oldest first: how to
        #: close each one to make room for a new connection (``_admit``).
        self.strangers: dict[object, Callable[[], None]] = {}
        #: What ``_prepare`` made and the end must remove: a lock on the token file.
        self._token_lock: int | None = None
        self._wrote_token = False
        #: The socket is ours (bound by this daemon): the end removes it.
        self._bound = False
        self._removing = threading.Lock()

    # ------------------------------------------------------------------ start and stop

    def serve(self) -> int:
        """Listen until a signal; the process's exit status."""
        websockets: Any = None
        if self.listen.kind == "ws":
            try:
                websockets = importlib.import_module("websockets.asyncio.server")
            except ImportError:
                return _fail(
                    f'--ws needs the websockets package: pip install "{WS_EXTRA}" '
                    f'(a pipx install: pipx inject pi-snippets-lsp "{WS_EXTRA}")',
                    2,
                )
        try:
            self._prepare()
        except (UnsafeFolderError, OSError) as exc:
            return _fail(str(exc) if isinstance(exc, UnsafeFolderError) else _os_reason(exc), 1)
        try:
            return asyncio.run(self._serve(websockets))
        except KeyboardInterrupt:  # a signal before the handlers were in place
            return 0
        finally:
            self._remove_files()

    def _prepare(self) -> None:
        """The daemon's folder, and its socket path or token file."""
        kind = self.listen.kind
        needs_folder = (kind == "unix" and self.listen.path is None) or (
            kind != "unix" and self.listen.token_file is None
        )
        if needs_folder:
            ensure_private_folder(runtime_folder())
        if kind == "unix":
            self.socket_path = self.listen.path or default_socket_path()
            _clear_stale_socket(self.socket_path)
            return
        # One daemon per token file: a second one stops here, before it binds a port or
        # writes a token (the file is written once the port is ours, ``_write_token``).
        self.token = new_token()
        self.token_file = self.listen.token_file or default_token_path()
        self._token_lock = lock_token_file(self.token_file)

    def _write_token(self) -> None:
        assert self.token_file is not None and self.token is not None
        write_private_file(self.token_file, self.token + "\n")
        self._wrote_token = True
        # Where, never what: the token itself is in no log and on no screen.
        print(f"pi-snippets-lsp: the token for clients is in {self.token_file}", file=sys.stderr)

    def _remove_files(self) -> None:
        """Remove what this daemon made, and only that: its token file (if it still
        holds this daemon's token), its lock, its socket. Safe from any thread, any
        number of times (the forced exit after a stop signal calls it too)."""
        with self._removing:
            if self.token_file is not None and self.token is not None:
                if self._wrote_token:
                    remove_if_holding(self.token_file, self.token)
                if self._token_lock is not None:
                    unlock_token_file(self.token_file, self._token_lock)
                    self._token_lock = None
                self.token_file = None
            if self.socket_path is not None and self._bound:
                with contextlib.suppress(OSError):
                    if stat.S_ISSOCK(os.lstat(self.socket_path).st_mode):
                        os.unlink(self.socket_path)
                self.socket_path = None

    def _forced_exit_code(self) -> int:
        """The forced end after a stop signal (``signals.on_stop_signals``): the files go
        first, as in the orderly end."""
        self._remove_files()
        return 0

    async def _serve(self, websockets: Any) -> int:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(self.throttled.exception_handler)
        # The loop gets the GIL back from a worker soon (``offload.SWITCH_INTERVAL``).
        sys.setswitchinterval(offload.SWITCH_INTERVAL)
        stop = asyncio.Event()
        restore = on_stop_signals(loop, stop.set, self._forced_exit_code)
        on_reload_signal(loop, self.reload_all)
        try:
            try:
                server = await self._start(websockets)
            except OSError as exc:
                where = self.socket_path or f"{self.listen.host}:{self.listen.port}"
                return _fail(f"cannot listen on {where}: {exc.strerror or exc}", 1)
            if self.token is not None:
                try:
                    self._write_token()
                except OSError as exc:
                    server.close()
                    return _fail(_os_reason(exc), 1)
            # Out of the collector's walks from now on: what the start made lives on.
            gc.collect()
            gc.freeze()
            for address in self._addresses(server):
                print(f"pi-snippets-lsp: listening on {address}", file=sys.stderr)
            sys.stderr.flush()
            await stop.wait()
            log.info("stopping: closing %d connection(s)", len(self.connections))
            self._remove_files()  # first: the forced end after the grace skips the rest
            server.close()
            for connection in list(self.connections):
                connection.end(0)
            if self.tasks:
                await asyncio.wait(self.tasks, timeout=CLOSE_TIMEOUT)
            return 0
        finally:
            restore()

    async def _start(self, websockets: Any) -> Any:
        kind = self.listen.kind
        if kind == "unix":
            assert self.socket_path is not None
            old = os.umask(0o177)  # the socket is created 0600: no moment open to others
            try:
                server = await asyncio.start_unix_server(
                    self._stream_session, path=str(self.socket_path), limit=CHUNK
                )
            finally:
                os.umask(old)
            self._bound = True
            os.chmod(self.socket_path, 0o600)
            return server
        if kind == "tcp":
            return await asyncio.start_server(
                self._stream_session, self.listen.host, self.listen.port, limit=CHUNK
            )
        return await websockets.serve(
            self._ws_session,
            self.listen.host,
            self.listen.port,
            # A stranger's messages: small (raised once the token is in, _ws_session).
            max_size=min(self.limits.max_body, self.limits.max_initialize_size),
            max_queue=WS_MAX_QUEUE,
            process_request=self._ws_handshake,
        )

    def _addresses(self, server: Any) -> list[str]:
        if self.listen.kind == "unix":
            return [f"unix:{self.socket_path}"]
        addresses = []
        for sock in server.sockets:
            host, port = sock.getsockname()[:2]
            addresses.append(f"{self.listen.kind}://{host}:{port}")
        return addresses

    def reload_all(self) -> None:
        """SIGHUP: every session reads its settings again."""
        log.info("SIGHUP: reloading the settings of %d session(s)", len(self.connections))
        for connection in list(self.connections):
            connection.reload()

    # ------------------------------------------------------------------ sessions

    def _admit(self, name: str) -> bool:
        """Whether one more connection may open (``max_connections``).

        At the limit, the oldest connection that has not sent the token yet is closed to
        make room, if there is one: connections without the token cannot keep the
        daemon's user out, they can only take one another's place (a client with the
        token sends it at once, in its first message)."""
        if self.open < self.limits.max_connections:
            return True
        if self.strangers:
            oldest = next(iter(self.strangers))
            self.strangers.pop(oldest)()
            self.throttled(
                "closing the oldest connection without the token to make room for a new one",
                name,
            )
            return True
        self.throttled(
            f"refusing connections over the limit of {self.limits.max_connections} at once",
            name,
        )
        return False

    def _track(self, connection: Channel) -> None:
        self.connections.add(connection)
        log.info("%s: connected", connection.name)

    async def _forget(self, connection: Channel) -> None:
        await connection.finish()
        self.connections.discard(connection)
        connection.close()
        log.info("%s: session ended", connection.name)
        self._collect_soon()

    def _collect_soon(self) -> None:
        """Collect the garbage of ended sessions ``COLLECT_DELAY`` from now (see the
        module's docstring), once for every session that ends meanwhile."""
        if self._collect is None:
            loop = asyncio.get_running_loop()
            self._collect = loop.call_later(COLLECT_DELAY, self._collect_now)

    def _collect_now(self) -> None:
        self._collect = None
        gc.collect()

    def _task(self) -> Callable[[], None]:
        """Track the current task (the daemon waits for it at the end); what untracks it."""
        task = asyncio.current_task()
        if task is None:
            return lambda: None
        self.tasks.add(task)
        self.open += 1

        def untrack() -> None:
            self.tasks.discard(task)
            self.open -= 1

        return untrack

    async def _stream_session(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """One ``--socket`` or ``--tcp`` connection."""
        name = _stream_name(self.listen.kind, writer)
        if not self._admit(name) or not self._same_user(writer, name):
            writer.transport.abort()
            return
        untrack = self._task()
        key = object()
        if self.token is not None:
            self.strangers[key] = writer.transport.abort
        writer.transport.set_write_buffer_limits(high=self.limits.max_unsent)
        connection: Channel | None = None
        pace: Callable[[], Awaitable[None]] | None = None
        deadline = asyncio.get_running_loop().time() + self.limits.initialize_timeout
        try:
            while connection is None or not connection.ended.done():
                data = await self._read(reader.read(CHUNK), connection, deadline, name)
                if data is None:
                    break
                if connection is None:
                    if not data:  # a probe: connected and closed
                        break
                    connection = Channel(self.flags, SocketWriter(writer), name, token=self.token)
                    self._track(connection)
                    pace = stream_pacer(connection, writer, self.limits)
                    connection.has_room = room_in(writer.transport, self.limits.max_unsent)
                if not data:
                    connection.end_of_stream()
                    break
                assert pace is not None
                await connection.feed_paced(data, pace)
                if connection.admitted.is_set():
                    self.strangers.pop(key, None)
        except StuckError:
            self._stuck(name)
            writer.transport.abort()  # what it did not read is dropped, not kept
        except (ConnectionError, OSError) as exc:
            log.info("%s: connection lost (%s)", name, exc)
        finally:
            self.strangers.pop(key, None)
            if connection is not None:
                await self._forget(connection)
            else:
                writer.transport.abort()
            untrack()

    async def _read(
        self, read: Awaitable[Any], connection: Channel | None, deadline: float, name: str
    ) -> Any:
        """``read``'s result; None when the session ended first (``exit``, a signal) or
        no valid ``initialize`` came before ``deadline``."""
        task = asyncio.ensure_future(read)
        waiting: set[asyncio.Future[Any]] = {task}
        if connection is not None:
            waiting.add(connection.ended)
        timeout = None
        if connection is None or not connection.admitted.is_set():
            timeout = max(0.0, deadline - asyncio.get_running_loop().time())
        await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        task.cancel()
        if connection is None or not connection.ended.done():
            self.throttled(
                f"no valid initialize within {self.limits.initialize_timeout:g}s; closing",
                name,
            )
            if connection is not None:
                connection.end(1)
        return None

    def _stuck(self, name: str) -> None:
        timeout = self.limits.stuck_timeout
        log.warning("%s: its answers have not been read for %gs; closing", name, timeout)

    def _same_user(self, writer: asyncio.StreamWriter, name: str) -> bool:
        """On a Unix socket, the peer must be our own uid (``SO_PEERCRED``)."""
        if self.listen.kind != "unix":
            return True
        uid = peer_uid(writer.get_extra_info("socket"))
        if uid is None or uid == os.geteuid():
            return True
        self.throttled(f"closing connections from other users (uid {uid})", name)
        return False

    # ------------------------------------------------------------------ WebSocket

    def _ws_handshake(self, connection: Any, request: Any) -> Any:
        """websockets' ``process_request``: 403 for a foreign ``Origin`` or ``Host``, 503
        over the connection limit; None lets the handshake go on."""
        port = connection.local_address[1] if connection.local_address else self.listen.port
        hosts = allowed_hosts(self.listen.host, port)
        headers = request.headers
        hosts_given, origins_given = headers.get_all("Host"), headers.get_all("Origin")
        if len(hosts_given) > 1 or len(origins_given) > 1:
            # Which one would a proxy, or the browser, have meant? Neither is trusted.
            twice = "more than one Host or Origin header"
            self.throttled("refusing WebSocket handshakes", twice)
            return connection.respond(HTTPStatus.BAD_REQUEST, twice + "\n")
        refusal = handshake_refusal(
            hosts_given[0] if hosts_given else None,
            origins_given[0] if origins_given else None,
            hosts,
            self.listen.allow_origins,
        )
        if refusal is not None:
            self.throttled("refusing WebSocket handshakes", refusal)
            return connection.respond(HTTPStatus.FORBIDDEN, refusal + "\n")
        if not self._admit("ws"):
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections\n")
        return None

    async def _ws_session(self, websocket: Any) -> None:
        address = websocket.remote_address
        name = f"ws {address[0]}:{address[1]}" if address else "ws"
        untrack = self._task()
        key = object()
        self.strangers[key] = lambda: abort(websocket)
        writer = WebSocketWriter(websocket, self.limits.max_unsent)
        connection = Channel(self.flags, writer, name, framed=False, token=self.token)
        self._track(connection)
        deadline = asyncio.get_running_loop().time() + self.limits.initialize_timeout
        pace = ws_pacer(connection, writer, self.limits)
        connection.has_room = writer.room.is_set
        try:
            while not connection.ended.done():
                message = await self._read(websocket.recv(), connection, deadline, name)
                if message is None:
                    break
                body = message.encode("utf-8") if isinstance(message, str) else message
                connection.receive(body)
                if connection.admitted.is_set() and key in self.strangers:
                    del self.strangers[key]
                    set_max_message(websocket, self.limits.max_body)
                await pace()
        except StuckError:
            self._stuck(name)
            with contextlib.suppress(Exception):
                websocket.transport.abort()
        except Exception as exc:  # websockets' ConnectionClosed: the client is gone
            log.info("%s: connection closed (%s)", name, exc)
            connection.end_of_stream()
        finally:
            self.strangers.pop(key, None)
            await self._forget(connection)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.task, CLOSE_TIMEOUT)
            untrack()


# --------------------------------------------------------------------------- helpers


def peer_uid(sock: socket.socket | None) -> int | None:
    """The uid of a Unix socket's peer (``SO_PEERCRED``); None where the platform cannot
    tell (the socket's mode 0600 still keeps others out)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


def _clear_stale_socket(path: Path) -> None:
    """A socket file left by a daemon that died is removed; a live daemon's, or a file
    that is no socket, is an error (nothing of the user's is ever deleted)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise UnsafeFolderError(f"cannot listen on {path}: it exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(str(path))
    except OSError:
        os.unlink(path)  # nobody listens: a leftover
        return
    finally:
        probe.close()
    raise UnsafeFolderError(f"cannot listen on {path}: another server is listening there")


def _stream_name(kind: Kind, writer: asyncio.StreamWriter) -> str:
    if kind == "unix":
        return "unix"
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"tcp {peer[0]}:{peer[1]}"
    return f"tcp {peer}"


def _os_reason(exc: OSError) -> str:
    where = f" {exc.filename}" if exc.filename else ""
    return f"cannot prepare the daemon's files:{where} {exc.strerror or exc}"


def _fail(message: str, code: int) -> int:
    print(f"pi-snippets-lsp: {message}", file=sys.stderr)
    return code
