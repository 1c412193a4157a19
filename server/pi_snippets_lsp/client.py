"""An out-of-process client: talk to ``pi-snippets-lsp`` over stdio or TCP.

For agent frontends that prefer process isolation. Standard library only (the JSON-RPC
framing is a ``Content-Length`` header and a UTF-8 JSON body), so it can be copied into
a frontend that does not want pygls::

    from pi_snippets_lsp.client import SnippetsClient

    with SnippetsClient.start(settings="examples/settings.json") as client:
        text, changed = client.expand("%use-mcp, please")
        popup = client.complete("see %us", 0, 7)

Contract (docs/agent-frontends.md):

- ``start`` spawns the server (default ``[sys.executable, "-m", "pi_snippets_lsp"]``),
  ``connect`` attaches to a ``pi-snippets-lsp --tcp`` server; both do the LSP handshake
  (``initialize`` with the minimal capabilities ``{}``, then ``initialized``) and, by
  default, wait for the first ``snippets/didLoad`` so the first request sees the
  loaded configuration.
- Thread-safe: any number of threads may have requests in flight at once over the one
  connection; a reader thread hands each response to the caller waiting for its id, a
  writer thread sends the messages in the order they were queued.
- The server never waits on us: ``client/registerCapability`` and
  ``client/unregisterCapability`` get ``null``, ``workspace/configuration`` one ``null``
  per item, ``window/showMessageRequest`` ``null``, ``workspace/workspaceFolders`` our
  folders, anything else a MethodNotFound error.
- ``window/showMessage``, ``window/logMessage`` and ``snippets/didLoad`` are collected
  (``messages``, ``log_messages``, ``loads``) and passed to callbacks, which run on the
  reader thread and must not make requests (that would wait for themselves).
- Errors: ``SnippetsError`` (an error response, with its JSON-RPC ``code``),
  ``SnippetsTimeoutError`` (no answer in time; the request is cancelled),
  ``ServerExitedError`` (the process ended or the connection closed). All derive from
  ``SnippetsClientError``.
- ``close`` sends ``shutdown`` and ``exit``, waits for the process and kills it after a
  timeout, so no process is left behind. A ``with`` block closes on exit.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import itertools
import json
import logging
import os
import queue
import re
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final, NamedTuple

log = logging.getLogger(__name__)

#: Seconds a request, the handshake or ``close`` waits by default.
DEFAULT_TIMEOUT: Final = 10.0

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800

DEFAULT_DOCUMENT_URI: Final = "untitled:pi-snippets-prompt"
CLIENT_NAME: Final = "pi-snippets-lsp.client"

_MAX_HEADER_LINE: Final = 8192
_STDERR_TAIL_LINES: Final = 200
_KEEP_NOTIFICATIONS: Final = 1000
_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")

JSON = Any


# --------------------------------------------------------------------------- errors


class SnippetsClientError(Exception):
    """Base of every error this client raises."""


class SnippetsError(SnippetsClientError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: JSON = None) -> None:
        super().__init__(f"{method}: JSON-RPC error {code}: {message}")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class SnippetsTimeoutError(SnippetsClientError, TimeoutError):
    """No answer in time (the request was cancelled with ``$/cancelRequest``)."""


class ServerExitedError(SnippetsClientError, ConnectionError):
    """The server process ended, or the connection to it closed."""

    def __init__(self, message: str, returncode: int | None = None, stderr: str = "") -> None:
        details = message
        if returncode is not None:
            details += f" (exit code {returncode})"
        if stderr.strip():
            details += "\n--- server stderr (last lines) ---\n" + stderr.rstrip()
        super().__init__(details)
        self.returncode = returncode
        self.stderr = stderr


# --------------------------------------------------------------------------- results


class Expanded(NamedTuple):
    """``snippets/expand``'s result; unpacks as ``text, changed``."""

    text: str
    changed: bool


@dataclass(frozen=True, slots=True)
class ListedSnippet:
    """One usable snippet: its name, its text, its one-line preview, the layer defining it."""

    name: str
    value: str
    preview: str
    source: str


@dataclass(frozen=True, slots=True)
class SnippetsListing:
    """``snippets/list``, ``snippets/reload`` and ``snippets/didLoad``: one generation."""

    snippets: tuple[ListedSnippet, ...]
    shortcut: str | None
    expand_on_completion: bool
    warnings: tuple[str, ...]

    @property
    def values(self) -> dict[str, str]:
        """Snippet name -> text."""
        return {s.name: s.value for s in self.snippets}

    @classmethod
    def from_json(cls, data: JSON) -> SnippetsListing:
        if not isinstance(data, dict):
            raise SnippetsClientError(f"unexpected snippets listing: {data!r}")
        return cls(
            snippets=tuple(
                ListedSnippet(
                    name=str(s["name"]),
                    value=str(s["value"]),
                    preview=str(s.get("preview", "")),
                    source=str(s.get("source", "")),
                )
                for s in data.get("snippets") or []
            ),
            shortcut=data.get("shortcut"),
            expand_on_completion=bool(data.get("expandOnCompletion", False)),
            warnings=tuple(str(w) for w in data.get("warnings") or []),
        )


class ShowMessage(NamedTuple):
    """A ``window/showMessage`` or ``window/logMessage``: LSP ``MessageType`` and text."""

    type: int
    message: str


class Position(NamedTuple):
    """An LSP position: zero-based line, and UTF-16 code units into that line."""

    line: int
    character: int


class Range(NamedTuple):
    start: Position
    end: Position


@dataclass(frozen=True, slots=True)
class RemoteCompletionItem:
    """One LSP ``CompletionItem`` as plain data.

    ``insert_text`` is ``textEdit.newText`` (or ``insertText``, or the label), which this
    client, declaring no snippet support, gets as plain text; ``range`` is the edit's
    range (from the ``%`` to the cursor). ``raw`` is the item as received.
    """

    label: str
    insert_text: str
    range: Range | None
    sort_text: str | None
    filter_text: str | None
    detail: str | None
    description: str | None
    documentation: str | None
    insert_text_format: int | None
    kind: int | None
    raw: Mapping[str, JSON] = field(compare=False, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> RemoteCompletionItem:
        edit = data.get("textEdit")
        edit_range: Range | None = None
        insert: str
        if isinstance(edit, dict):
            insert = str(edit.get("newText", ""))
            raw_range = edit.get("range") or edit.get("replace")
            if isinstance(raw_range, dict):
                edit_range = Range(
                    Position(raw_range["start"]["line"], raw_range["start"]["character"]),
                    Position(raw_range["end"]["line"], raw_range["end"]["character"]),
                )
        else:
            insert = str(data.get("insertText") or data.get("label", ""))
        documentation = data.get("documentation")
        if isinstance(documentation, dict):
            documentation = documentation.get("value")
        details = data.get("labelDetails")
        return cls(
            label=str(data.get("label", "")),
            insert_text=insert,
            range=edit_range,
            sort_text=data.get("sortText"),
            filter_text=data.get("filterText"),
            detail=data.get("detail"),
            description=details.get("description") if isinstance(details, dict) else None,
            documentation=documentation if isinstance(documentation, str) else None,
            insert_text_format=data.get("insertTextFormat"),
            kind=data.get("kind"),
            raw=data,
        )


@dataclass(frozen=True, slots=True)
class RemoteCompletionList:
    """The server's answer to ``textDocument/completion`` when it is not ``null``."""

    items: tuple[RemoteCompletionItem, ...]
    is_incomplete: bool


def lsp_position(text: str, index: int) -> Position:
    """The LSP position (line, UTF-16 character) of code-point ``index`` in ``text``.

    Lines end at ``\\n``, ``\\r\\n`` and ``\\r`` only, as in LSP. Handy for
    ``complete(text, *lsp_position(text, cursor))``.
    """
    index = max(0, min(index, len(text)))
    line = 0
    line_start = 0
    for match in _LINE_BREAK.finditer(text, 0, index):
        line += 1
        line_start = match.end()
    before = text[line_start:index]
    return Position(line, len(before.encode("utf-16-le")) // 2)


# --------------------------------------------------------------------------- transport


class _Pending:
    __slots__ = ("error", "event", "method", "response")

    def __init__(self, method: str) -> None:
        self.method = method
        self.event = threading.Event()
        self.response: dict[str, JSON] | None = None
        self.error: SnippetsClientError | None = None


def _frame(message: Mapping[str, JSON]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_message(stream: IO[bytes]) -> dict[str, JSON] | None:
    """One framed message, or None at the end of the stream."""
    length: int | None = None
    seen_header = False
    while True:
        line = stream.readline(_MAX_HEADER_LINE)
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if seen_header:
                break
            continue
        seen_header = True
        name, sep, value = line.decode("ascii", "replace").partition(":")
        if not sep:
            raise SnippetsClientError(f"malformed header line {line!r}")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise SnippetsClientError("message without a Content-Length header")
    chunks: list[bytes] = []
    remaining = length
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    message = json.loads(b"".join(chunks).decode("utf-8"))
    if not isinstance(message, dict):
        raise SnippetsClientError(f"message is not a JSON object: {message!r}")
    return message


def _connect_with_retry(host: str, port: int, timeout: float) -> socket.socket:
    """Connect, retrying a refused connection until ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection((host, port), timeout=timeout)
        except ConnectionRefusedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


class SnippetsClient:
    """A JSON-RPC/LSP session with one ``pi-snippets-lsp`` server.

    Make one with ``SnippetsClient.start(...)`` (a child process over stdio) or
    ``SnippetsClient.connect(host, port)`` (a ``--tcp`` server). Every method is safe to
    call from several threads at once.
    """

    def __init__(
        self,
        reader: IO[bytes],
        write: Callable[[bytes], None],
        *,
        process: subprocess.Popen[bytes] | None = None,
        sock: socket.socket | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """Wrap an open byte stream pair; ``start`` and ``connect`` are the usual ways in.

        ``write`` must write all of its bytes (``sock.sendall``, or a pipe write and
        flush). No handshake happens here: call ``initialize`` next.
        """
        self.process = process
        self.timeout = timeout
        self._reader = reader
        self._write = write
        self._sock = sock
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._dead: ServerExitedError | None = None
        self._closed = False
        self._shutdown_sent = False
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._load_condition = threading.Condition()
        self._load_count = 0
        self._last_load: SnippetsListing | None = None
        self._callbacks: dict[str, builtins.list[Callable[[JSON], None]]] = {}
        self._documents: dict[str, tuple[int, str]] = {}
        self._document_locks: dict[str, threading.Lock] = {}
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._workspace_folders: builtins.list[dict[str, str]] | None = None
        #: ``window/showMessage`` notifications, oldest first (the last 1000).
        self.messages: collections.deque[ShowMessage] = collections.deque(
            maxlen=_KEEP_NOTIFICATIONS
        )
        #: ``window/logMessage`` notifications, oldest first (the last 1000).
        self.log_messages: collections.deque[ShowMessage] = collections.deque(
            maxlen=_KEEP_NOTIFICATIONS
        )
        #: ``snippets/didLoad`` notifications, oldest first (the last 1000).
        self.loads: collections.deque[SnippetsListing] = collections.deque(
            maxlen=_KEEP_NOTIFICATIONS
        )
        #: The ``initialize`` result: ``capabilities`` and ``serverInfo``.
        self.server_info: dict[str, JSON] = {}

        self._writer_thread = threading.Thread(
            target=self._write_loop, name="pi-snippets-client-writer", daemon=True
        )
        self._reader_thread = threading.Thread(
            target=self._read_loop, name="pi-snippets-client-reader", daemon=True
        )
        self._stderr_thread: threading.Thread | None = None
        if process is not None and process.stderr is not None:
            self._stderr_thread = threading.Thread(
                target=self._drain_stderr,
                args=(process.stderr,),
                name="pi-snippets-client-stderr",
                daemon=True,
            )
            self._stderr_thread.start()
        self._writer_thread.start()
        self._reader_thread.start()

    # ------------------------------------------------------------------ constructors

    @classmethod
    def start(
        cls,
        command: Sequence[str] | str | None = None,
        *,
        settings: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        init_options: Mapping[str, JSON] | None = None,
        project: str | os.PathLike[str] | None = None,
        trust_project: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        wait_loaded: bool = True,
    ) -> SnippetsClient:
        """Start the server as a child process over stdio and do the handshake.

        ``command``: the server command, a list or a shell-style string (default
        ``[sys.executable, "-m", "pi_snippets_lsp"]``); ``settings`` appends
        ``--settings FILE``. ``env`` holds variables set over the current environment
        (e.g. ``PI_CODING_AGENT_DIR``). ``init_options`` are the
        ``initializationOptions`` (``{"piSimpleSnippets": {...}, "pollInterval": 0}``);
        ``project`` becomes the workspace folder, whose ``.pi/settings.json`` is read
        when ``trust_project`` (sent as ``trustProjectSettings: true``). ``timeout``
        bounds the handshake and is the default for every later request.
        """
        if command is None:
            argv = [sys.executable, "-m", "pi_snippets_lsp"]
        elif isinstance(command, str):
            argv = shlex.split(command)
        else:
            argv = [str(part) for part in command]
        if settings is not None:
            argv += ["--settings", os.fspath(settings)]
        environ = dict(os.environ)
        if env is not None:
            environ.update(env)
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=environ,
        )
        assert process.stdin is not None and process.stdout is not None
        stdin = process.stdin

        def write(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        client = cls(process.stdout, write, process=process, timeout=timeout)
        client._handshake(init_options, project, trust_project, wait_loaded)
        return client

    @classmethod
    def connect(
        cls,
        host: str = "127.0.0.1",
        port: int = 2087,
        *,
        init_options: Mapping[str, JSON] | None = None,
        project: str | os.PathLike[str] | None = None,
        trust_project: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        wait_loaded: bool = True,
    ) -> SnippetsClient:
        """Connect to ``pi-snippets-lsp --tcp`` and do the handshake.

        A refused connection is retried until ``timeout`` (a server just started may not
        listen yet). Do not probe the port with a connection of your own first: a
        ``--tcp`` server serves one session, and the first connection that closes,
        probe or not, ends it; ``close`` (``shutdown`` + ``exit``) ends it too. The
        other arguments are those of ``start``.
        """
        sock = _connect_with_retry(host, port, timeout)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = cls(sock.makefile("rb"), sock.sendall, sock=sock, timeout=timeout)
        client._handshake(init_options, project, trust_project, wait_loaded)
        return client

    def _handshake(
        self,
        init_options: Mapping[str, JSON] | None,
        project: str | os.PathLike[str] | None,
        trust_project: bool,
        wait_loaded: bool,
    ) -> None:
        try:
            options = dict(init_options or {})
            if trust_project:
                options["trustProjectSettings"] = True
            root_uri = None
            if project is not None:
                folder = Path(project).resolve()
                root_uri = folder.as_uri()
                self._workspace_folders = [{"uri": root_uri, "name": folder.name}]
            self.initialize(options, root_uri=root_uri, workspace_folders=self._workspace_folders)
            if wait_loaded:
                self.wait_for_load(1)
        except BaseException:
            self._abort()
            raise

    def initialize(
        self,
        initialization_options: Mapping[str, JSON] | None = None,
        *,
        root_uri: str | None = None,
        workspace_folders: Sequence[Mapping[str, str]] | None = None,
    ) -> dict[str, JSON]:
        """``initialize`` with the minimal capabilities ``{}``, then ``initialized``."""
        from . import __version__

        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": CLIENT_NAME, "version": __version__},
                "rootUri": root_uri,
                "workspaceFolders": (
                    [dict(f) for f in workspace_folders] if workspace_folders else None
                ),
                "capabilities": {},
                "initializationOptions": dict(initialization_options or {}),
            },
        )
        self.server_info = result if isinstance(result, dict) else {}
        self.notify("initialized", {})
        return self.server_info

    # ------------------------------------------------------------------ JSON-RPC

    def request(self, method: str, params: JSON = None, *, timeout: float | None = None) -> JSON:
        """Send a request and wait for its result.

        Raises ``SnippetsError`` for an error response, ``SnippetsTimeoutError`` after
        ``timeout`` seconds (default: the client's), ``ServerExitedError`` when the
        connection is gone.
        """
        if threading.current_thread() is self._reader_thread:
            raise RuntimeError(
                "a notification callback cannot make requests: it runs on the reader thread"
            )
        wait = self.timeout if timeout is None else timeout
        message: dict[str, JSON] = {"jsonrpc": "2.0", "method": method}
        pending = _Pending(method)
        with self._lock:
            if self._dead is not None:
                raise self._dead
            if self._closed and method not in ("shutdown",):
                raise SnippetsClientError("the client is closed")
            request_id = next(self._ids)
            self._pending[request_id] = pending
            if method == "shutdown":
                self._shutdown_sent = True
        message["id"] = request_id
        if params is not None:
            message["params"] = params
        self._send(message)
        if not pending.event.wait(wait):
            with self._lock:
                self._pending.pop(request_id, None)
            with contextlib.suppress(SnippetsClientError):
                self.notify("$/cancelRequest", {"id": request_id})
            raise SnippetsTimeoutError(f"{method}: no answer within {wait} s")
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
        self._outbox.put(_frame(message))

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
            while True:
                message = _read_message(self._reader)
                if message is None:
                    break
                self._dispatch(message)
        except (OSError, ValueError, SnippetsClientError) as exc:
            reason = f"cannot read from the server: {exc}"
        self._connection_lost(reason)

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in stream:
                self._stderr_tail.append(line.decode("utf-8", "replace"))

    def _dispatch(self, message: dict[str, JSON]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer(message["id"], method, message.get("params"))
            else:
                self._on_notification(method, message.get("params"))
            return
        request_id = message.get("id")
        with self._lock:
            pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            log.debug("response to no pending request: %r", message)
            return
        pending.response = message
        pending.event.set()

    def _answer(self, request_id: JSON, method: str, params: JSON) -> None:
        """Answer a server->client request at once, so the server never waits."""
        response: dict[str, JSON] = {"jsonrpc": "2.0", "id": request_id}
        if method in (
            "client/registerCapability",
            "client/unregisterCapability",
            "window/showMessageRequest",
            "window/workDoneProgress/create",
        ):
            response["result"] = None
        elif method == "workspace/configuration":
            items = params.get("items") if isinstance(params, dict) else None
            response["result"] = [None] * (len(items) if isinstance(items, list) else 1)
        elif method == "workspace/workspaceFolders":
            response["result"] = self._workspace_folders
        else:
            response["error"] = {
                "code": METHOD_NOT_FOUND,
                "message": f"{CLIENT_NAME} does not handle {method}",
            }
        self._send(response)

    def _on_notification(self, method: str, params: JSON) -> None:
        if method in ("window/showMessage", "window/logMessage") and isinstance(params, dict):
            entry = ShowMessage(int(params.get("type", 0)), str(params.get("message", "")))
            target = self.messages if method == "window/showMessage" else self.log_messages
            target.append(entry)
        elif method == "snippets/didLoad":
            try:
                listing = SnippetsListing.from_json(params)
            except (KeyError, TypeError, SnippetsClientError):
                log.warning("malformed snippets/didLoad: %r", params)
            else:
                with self._load_condition:
                    self.loads.append(listing)
                    self._last_load = listing
                    self._load_count += 1
                    self._load_condition.notify_all()
        with self._lock:
            callbacks = builtins.list(self._callbacks.get(method, ()))
        for callback in callbacks:
            try:
                callback(params)
            except Exception:
                log.exception("%s callback failed", method)

    def _connection_lost(self, reason: str) -> None:
        returncode: int | None = None
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                returncode = self.process.wait(timeout=1.0)
            if self._stderr_thread is not None:
                self._stderr_thread.join(timeout=1.0)
        error = ServerExitedError(reason, returncode, "".join(self._stderr_tail))
        with self._lock:
            if self._dead is None:
                self._dead = error
            pending = builtins.list(self._pending.values())
            self._pending.clear()
        for entry in pending:
            entry.error = ServerExitedError(
                f"{entry.method}: {reason}", returncode, "".join(self._stderr_tail)
            )
            entry.event.set()
        with self._load_condition:
            self._load_condition.notify_all()

    # ------------------------------------------------------------------ state

    @property
    def alive(self) -> bool:
        """Whether the connection is up (the server may still be shutting down)."""
        return self._dead is None

    @property
    def load_count(self) -> int:
        """How many ``snippets/didLoad`` notifications arrived so far."""
        with self._load_condition:
            return self._load_count

    def wait_for_load(self, count: int = 1, timeout: float | None = None) -> SnippetsListing:
        """Wait until ``count`` ``snippets/didLoad`` arrived in all; return the latest.

        Useful after editing a settings file: ``n = client.load_count``, edit, then
        ``client.wait_for_load(n + 1)``.
        """
        wait = self.timeout if timeout is None else timeout
        with self._load_condition:
            ready = self._load_condition.wait_for(
                lambda: self._load_count >= count or self._dead is not None, wait
            )
            if self._load_count >= count and self._last_load is not None:
                return self._last_load
        if self._dead is not None:
            raise self._dead
        if not ready:
            raise SnippetsTimeoutError(f"snippets/didLoad #{count}: none within {wait} s")
        raise SnippetsClientError("snippets/didLoad: no listing")  # pragma: no cover

    def stderr_tail(self) -> str:
        """The last lines the server process wrote to stderr (its log)."""
        return "".join(self._stderr_tail)

    # ------------------------------------------------------------------ snippets

    def expand(
        self, text: str, uri: str | None = None, *, timeout: float | None = None
    ) -> Expanded:
        """``snippets/expand``: the prompt with its ``%name`` markers expanded.

        ``uri`` picks the workspace folder whose configuration applies (default: the
        first folder). Unpacks as ``text, changed``.
        """
        params: dict[str, JSON] = {"text": text}
        if uri is not None:
            params["uri"] = uri
        result = self.request("snippets/expand", params, timeout=timeout)
        if not isinstance(result, dict):
            raise SnippetsClientError(f"snippets/expand: unexpected result {result!r}")
        return Expanded(str(result["text"]), bool(result["changed"]))

    def list(self, uri: str | None = None, *, timeout: float | None = None) -> SnippetsListing:
        """``snippets/list``: the current generation's snippets, shortcut and warnings."""
        params: dict[str, JSON] = {} if uri is None else {"uri": uri}
        return SnippetsListing.from_json(self.request("snippets/list", params, timeout=timeout))

    def reload(self, *, timeout: float | None = None) -> SnippetsListing:
        """``snippets/reload``: read the settings again (Pi's ``/reload``)."""
        return SnippetsListing.from_json(self.request("snippets/reload", {}, timeout=timeout))

    def complete(
        self,
        text: str,
        line: int,
        character: int,
        *,
        uri: str | None = None,
        timeout: float | None = None,
    ) -> RemoteCompletionList | None:
        """``textDocument/completion`` at (``line``, ``character``) of ``text``.

        ``character`` counts UTF-16 code units (see ``lsp_position``). The text is put in
        an in-memory document (``uri``, default ``untitled:pi-snippets-prompt``) with
        ``didOpen`` the first time and ``didChange`` after. Requests on one document are
        serialized; use distinct ``uri`` values for parallel completions. None when the
        server answers ``null`` (no snippet token at the cursor, or no snippets).
        """
        doc = uri or DEFAULT_DOCUMENT_URI
        with self._lock:
            doc_lock = self._document_locks.setdefault(doc, threading.Lock())
        with doc_lock:
            self._sync_document(doc, text)
            result = self.request(
                "textDocument/completion",
                {
                    "textDocument": {"uri": doc},
                    "position": {"line": line, "character": character},
                },
                timeout=timeout,
            )
        if result is None:
            return None
        if isinstance(result, builtins.list):
            return RemoteCompletionList(
                tuple(RemoteCompletionItem.from_json(i) for i in result), False
            )
        if not isinstance(result, dict):
            raise SnippetsClientError(f"textDocument/completion: unexpected result {result!r}")
        return RemoteCompletionList(
            tuple(RemoteCompletionItem.from_json(i) for i in result.get("items") or []),
            bool(result.get("isIncomplete", False)),
        )

    def _sync_document(self, uri: str, text: str) -> None:
        known = self._documents.get(uri)
        if known is None:
            self.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "plaintext",
                        "version": 1,
                        "text": text,
                    }
                },
            )
            self._documents[uri] = (1, text)
        elif known[1] != text:
            version = known[0] + 1
            self.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text}],
                },
            )
            self._documents[uri] = (version, text)

    def close_document(self, uri: str | None = None) -> None:
        """``didClose`` a document ``complete`` opened (default: the default one)."""
        doc = uri or DEFAULT_DOCUMENT_URI
        with self._lock:
            doc_lock = self._document_locks.setdefault(doc, threading.Lock())
        with doc_lock:
            if self._documents.pop(doc, None) is not None:
                self.notify("textDocument/didClose", {"textDocument": {"uri": doc}})

    # ------------------------------------------------------------------ shutdown

    def close(self, timeout: float | None = None) -> int | None:
        """``shutdown`` then ``exit``; wait for the process and kill it if it lingers.

        Idempotent, never raises for a server that is already gone. Returns the
        process's exit code (0 after a clean shutdown), or None for a TCP connection.
        """
        wait = self.timeout if timeout is None else timeout
        with self._lock:
            if self._closed:
                already = True
            else:
                already = False
                self._closed = True
        if not already and self._dead is None:
            if not self._shutdown_sent:
                with contextlib.suppress(SnippetsClientError):
                    self.request("shutdown", None, timeout=wait)
            with contextlib.suppress(SnippetsClientError):
                self.notify("exit")
        return self._finish(wait)

    def _abort(self) -> None:
        """Tear down without the LSP goodbye (a failed handshake)."""
        with self._lock:
            self._closed = True
        self._finish(0.5)

    def _finish(self, wait: float) -> int | None:
        self._outbox.put(None)
        self._writer_thread.join(wait)
        returncode: int | None = None
        if self.process is not None:
            with contextlib.suppress(OSError, ValueError):
                if self.process.stdin is not None:
                    self.process.stdin.close()
            try:
                returncode = self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                log.warning("pi-snippets-lsp did not exit within %s s; killing it", wait)
                self.process.kill()
                returncode = self.process.wait(timeout=wait)
        if self._sock is not None:
            # Wait for the server to close its side after ``exit``, then close ours
            # (shutting the socket down first wakes the reader thread).
            self._reader_thread.join(wait)
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self._sock.close()
        self._reader_thread.join(wait)
        if self._stderr_thread is not None:
            self._stderr_thread.join(wait)
        # A stream a thread still reads from is left alone: closing a buffered stream
        # under a blocked reader can hang. The threads are daemons either way.
        streams: builtins.list[IO[bytes] | None] = []
        if not self._reader_thread.is_alive():
            streams.append(self._reader)
        if self._stderr_thread is None or not self._stderr_thread.is_alive():
            streams.append(self.process.stderr if self.process else None)
        for stream in streams:
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        return returncode

    def __enter__(self) -> SnippetsClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
