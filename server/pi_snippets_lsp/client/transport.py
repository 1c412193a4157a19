"""JSON-RPC over one byte-stream pair, safe to use from many threads at once.

A reader thread decodes frames (``pi_snippets_lsp.framing``) and hands each response to
the caller waiting for its id; a writer thread sends messages in the order they were
queued. Requests from the server are answered at once through ``answer`` so the server
never waits on us; notifications go to the callbacks registered for their method.
Standard library only (plus the package's own framing module).
"""

from __future__ import annotations

import builtins
import contextlib
import itertools
import logging
import queue
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

from pi_snippets_lsp.client.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    ServerExitedError,
    SnippetsClientError,
    SnippetsError,
    SnippetsTimeoutError,
)
from pi_snippets_lsp.wire.framing import FramingError, MessageReader, encode

log = logging.getLogger(__name__)

JSON = Any


class MethodNotFound(Exception):
    """Raised by an ``answer`` callback for a server request it does not handle."""


class _Pending:
    __slots__ = ("error", "event", "method", "response")

    def __init__(self, method: str) -> None:
        self.method = method
        self.event = threading.Event()
        self.response: dict[str, JSON] | None = None
        self.error: SnippetsClientError | None = None


class Connection:
    """One JSON-RPC peer at the other end of ``reader`` / ``write``.

    ``write`` must write all of its bytes (``sock.sendall``, or a pipe write and flush).
    ``answer(method, params)`` returns the result of a request from the server (or raises
    ``MethodNotFound``); ``lost(reason)`` turns the reason the connection ended into the
    error every waiting and later caller gets.
    """

    def __init__(
        self,
        reader: IO[bytes],
        write: Callable[[bytes], None],
        *,
        answer: Callable[[str, JSON], JSON],
        lost: Callable[[str], ServerExitedError],
        name: str = "pi-snippets-client",
    ) -> None:
        self._reader = reader
        self._write = write
        self._answer = answer
        self._lost = lost
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._dead: ServerExitedError | None = None
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._callbacks: dict[str, builtins.list[Callable[[JSON], None]]] = {}
        self._writer_thread = threading.Thread(
            target=self._write_loop, name=f"{name}-writer", daemon=True
        )
        self._reader_thread = threading.Thread(
            target=self._read_loop, name=f"{name}-reader", daemon=True
        )
        self._writer_thread.start()
        self._reader_thread.start()

    # ------------------------------------------------------------------ state

    @property
    def dead(self) -> ServerExitedError | None:
        """Why the connection ended, or None while it is up."""
        return self._dead

    @property
    def reader_thread(self) -> threading.Thread:
        return self._reader_thread

    # ------------------------------------------------------------------ sending

    def request(self, method: str, params: JSON = None, *, timeout: float) -> JSON:
        """Send a request and wait for its result.

        Raises ``SnippetsError`` for an error response, ``SnippetsTimeoutError`` after
        ``timeout`` seconds (the request is then cancelled), ``ServerExitedError`` when
        the connection is gone.
        """
        if threading.current_thread() is self._reader_thread:
            raise RuntimeError(
                "a notification callback cannot make requests: it runs on the reader thread"
            )
        pending = _Pending(method)
        with self._lock:
            if self._dead is not None:
                raise self._dead
            request_id = next(self._ids)
            self._pending[request_id] = pending
        message: dict[str, JSON] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        if not pending.event.wait(timeout):
            with self._lock:
                self._pending.pop(request_id, None)
            with contextlib.suppress(SnippetsClientError):
                self.notify("$/cancelRequest", {"id": request_id})
            raise SnippetsTimeoutError(f"{method}: no answer within {timeout} s")
        if pending.error is not None:
            raise pending.error
        response = pending.response or {}
        error = response.get("error")
        if error is not None:
            if not isinstance(error, dict):
                error = {"code": INTERNAL_ERROR, "message": repr(error)}
            raise SnippetsError(
                method,
                int(error.get("code", INTERNAL_ERROR)),
                str(error.get("message", "")),
                error.get("data"),
            )
        return response.get("result")

    def notify(self, method: str, params: JSON = None) -> None:
        """Send a notification."""
        message: dict[str, JSON] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        with self._lock:
            if self._dead is not None:
                raise self._dead
        self._send(message)

    def on_notification(self, method: str, callback: Callable[[JSON], None]) -> None:
        """Call ``callback(params)`` for every ``method`` notification, on the reader thread."""
        with self._lock:
            self._callbacks.setdefault(method, []).append(callback)

    def _send(self, message: Mapping[str, JSON]) -> None:
        self._outbox.put(encode(message))

    # ------------------------------------------------------------------ threads

    def _write_loop(self) -> None:
        while True:
            data = self._outbox.get()
            if data is None:
                return
            try:
                self._write(data)
            except (OSError, ValueError) as exc:
                self._connection_lost(f"cannot write to the server: {exc}")
                return

    def _read_loop(self) -> None:
        reason = "the server closed the connection"
        try:
            for message in MessageReader(self._reader):
                if not isinstance(message, dict):
                    raise FramingError(f"message is not a JSON object: {message!r}")
                self._dispatch(message)
        except (OSError, ValueError) as exc:
            reason = f"cannot read from the server: {exc}"
        self._connection_lost(reason)

    def _dispatch(self, message: dict[str, JSON]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer_request(message["id"], method, message.get("params"))
            else:
                self._notify_callbacks(method, message.get("params"))
            return
        request_id = message.get("id")
        with self._lock:
            pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            log.debug("response to no pending request: %r", message)
            return
        pending.response = message
        pending.event.set()

    def _answer_request(self, request_id: JSON, method: str, params: JSON) -> None:
        response: dict[str, JSON] = {"jsonrpc": "2.0", "id": request_id}
        try:
            response["result"] = self._answer(method, params)
        except MethodNotFound:
            response["error"] = {
                "code": METHOD_NOT_FOUND,
                "message": f"pi-snippets-lsp.client does not handle {method}",
            }
        self._send(response)

    def _notify_callbacks(self, method: str, params: JSON) -> None:
        with self._lock:
            callbacks = builtins.list(self._callbacks.get(method, ()))
        for callback in callbacks:
            try:
                callback(params)
            except Exception:
                log.exception("%s callback failed", method)

    def _connection_lost(self, reason: str) -> None:
        error = self._lost(reason)
        with self._lock:
            if self._dead is None:
                self._dead = error
            pending = builtins.list(self._pending.values())
            self._pending.clear()
        for entry in pending:
            entry.error = ServerExitedError(
                f"{entry.method}: {reason}", error.returncode, error.stderr
            )
            entry.event.set()

    # ------------------------------------------------------------------ closing

    def stop_writing(self, wait: float) -> None:
        """Send what is queued, then stop the writer thread."""
        self._outbox.put(None)
        self._writer_thread.join(wait)

    def close_reader(self, wait: float) -> None:
        """Wait for the reader thread to end, and close the stream if it did.

        A stream a thread still reads from is left alone: closing a buffered stream
        under a blocked reader can hang. The threads are daemons either way.
        """
        self._reader_thread.join(wait)
        if not self._reader_thread.is_alive():
            with contextlib.suppress(OSError, ValueError):
                self._reader.close()
