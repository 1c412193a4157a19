"""``SnippetsClient``: the snippet API of a ``pi-snippets-lsp`` server in another process.

docs/agent-frontends.md, "Python: the out-of-process client". ``start`` spawns the server
over stdio, ``connect`` attaches to a ``pi-snippets-lsp --tcp`` daemon; both do the LSP
handshake and, by default, wait for the first load. Answers come back as the package's
own values (``ExpandResult``, ``SnippetsListing``, ``Suggestions``), parsed by the same
models the server answers with.
"""

from __future__ import annotations

import collections
import contextlib
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final, NamedTuple

from pi_snippets_lsp import __version__
from pi_snippets_lsp.client.answers import ENCODING, parse_listing, parse_notice, parse_suggestions
from pi_snippets_lsp.client.errors import (
    ServerExitedError,
    ServerUnavailableError,
    SnippetsClientError,
    SnippetsTimeoutError,
)
from pi_snippets_lsp.client.transport import JSON, Connection, MethodNotFound
from pi_snippets_lsp.core.completion import Suggestions
from pi_snippets_lsp.core.documents import Document
from pi_snippets_lsp.wire.messages import (
    DID_LOAD,
    EXPAND,
    LIST,
    RELOAD,
    ExpandResult,
    LoadNotice,
    SnippetsListing,
)

#: Seconds a request, the handshake or ``close`` waits by default.
DEFAULT_TIMEOUT: Final = 10.0
#: Seconds ``connect`` keeps retrying a refused connection (a daemon just started).
DEFAULT_CONNECT_RETRY: Final = 2.0
DEFAULT_DOCUMENT_URI: Final = "untitled:pi-snippets-prompt"
CLIENT_NAME: Final = "pi-snippets-lsp.client"

_STDERR_TAIL_LINES: Final = 200
_KEEP_NOTIFICATIONS: Final = 1000


class ShowMessage(NamedTuple):
    """A ``window/showMessage`` or ``window/logMessage``: LSP ``MessageType`` and text."""

    type: int
    message: str


class SnippetsClient:
    """A JSON-RPC/LSP session with one ``pi-snippets-lsp`` server.

    Make one with ``SnippetsClient.start(...)`` (a child process over stdio) or
    ``SnippetsClient.connect(host, port)`` (a ``--tcp`` daemon). Every method is safe to
    call from several threads at once.

    The server never waits on us: ``client/registerCapability`` and
    ``client/unregisterCapability`` get ``null``, ``workspace/configuration`` one ``null``
    per item, ``window/showMessageRequest`` ``null``, ``workspace/workspaceFolders`` our
    folders, anything else a MethodNotFound error. ``window/showMessage``,
    ``window/logMessage`` and ``snippets/didLoad`` (the client opts in to it) are
    collected (``messages``, ``log_messages``, ``loads``); callbacks run on the reader
    thread and must not make requests (that would wait for themselves).
    """

    def __init__(
        self,
        reader: IO[bytes],
        write: Any,
        *,
        process: subprocess.Popen[bytes] | None = None,
        sock: socket.socket | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """Wrap an open byte stream pair; ``start`` and ``connect`` are the usual ways in.

        ``write`` must write all of its bytes. No handshake happens here: call
        ``initialize`` next.
        """
        self.process = process
        self.timeout = timeout
        self._sock = sock
        self._lock = threading.Lock()
        self._closed = False
        self._shutdown_sent = False
        self._lost: ServerExitedError | None = None
        self._load_condition = threading.Condition()
        self._load_count = 0
        self._last_load: LoadNotice | None = None
        self._documents: dict[str, tuple[int, str]] = {}
        self._document_locks: dict[str, threading.Lock] = {}
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._workspace_folders: list[dict[str, str]] | None = None
        #: ``window/showMessage`` notifications, oldest first (the last 1000).
        self.messages: collections.deque[ShowMessage] = collections.deque(
            maxlen=_KEEP_NOTIFICATIONS
        )
        #: ``window/logMessage`` notifications, oldest first (the last 1000).
        self.log_messages: collections.deque[ShowMessage] = collections.deque(
            maxlen=_KEEP_NOTIFICATIONS
        )
        #: ``snippets/didLoad`` notices, oldest first (the last 1000).
        self.loads: collections.deque[LoadNotice] = collections.deque(maxlen=_KEEP_NOTIFICATIONS)
        #: The ``initialize`` result: ``capabilities`` and ``serverInfo``.
        self.server_info: dict[str, JSON] = {}

        self._stderr_thread: threading.Thread | None = None
        if process is not None and process.stderr is not None:
            self._stderr_thread = threading.Thread(
                target=self._drain_stderr,
                args=(process.stderr,),
                name="pi-snippets-client-stderr",
                daemon=True,
            )
            self._stderr_thread.start()
        self._connection = Connection(
            reader, write, answer=self._answer_server, lost=self._connection_lost
        )
        self._connection.on_notification("window/showMessage", self._on_message)
        self._connection.on_notification("window/logMessage", self._on_log_message)
        self._connection.on_notification(DID_LOAD, self._on_did_load)

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
        retry: float = DEFAULT_CONNECT_RETRY,
        wait_loaded: bool = True,
    ) -> SnippetsClient:
        """Connect to a ``pi-snippets-lsp --tcp`` daemon and do the handshake.

        A refused connection is retried for ``retry`` seconds (a daemon just started may
        not listen yet), then ``ServerUnavailableError`` names the address. Every
        connection is a session of its own; ``close`` ends this one only. The other
        arguments are those of ``start``.
        """
        sock = _connect_with_retry(host, port, retry, timeout)
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
        """``initialize`` with the minimal capabilities ``{}``, then ``initialized``.

        The options always opt in to ``snippets/didLoad`` (``notifications``), which
        ``loads`` and ``wait_for_load`` rely on.
        """
        options = dict(initialization_options or {})
        wanted = options.get("notifications")
        wanted = list(wanted) if isinstance(wanted, list | tuple) else []
        if DID_LOAD not in wanted:
            options["notifications"] = [*wanted, DID_LOAD]

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
                "initializationOptions": options,
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
        with self._lock:
            if self._closed and method != "shutdown":
                raise SnippetsClientError("the client is closed")
            if method == "shutdown":
                self._shutdown_sent = True
        wait = self.timeout if timeout is None else timeout
        return self._connection.request(method, params, timeout=wait)

    def notify(self, method: str, params: JSON = None) -> None:
        """Send a notification."""
        self._connection.notify(method, params)

    def on_notification(self, method: str, callback: Any) -> None:
        """Call ``callback(params)`` for every ``method`` notification, on the reader thread."""
        self._connection.on_notification(method, callback)

    def _answer_server(self, method: str, params: JSON) -> JSON:
        """Answer a server->client request at once, so the server never waits."""
        if method in (
            "client/registerCapability",
            "client/unregisterCapability",
            "window/showMessageRequest",
            "window/workDoneProgress/create",
        ):
            return None
        if method == "workspace/configuration":
            items = params.get("items") if isinstance(params, dict) else None
            return [None] * (len(items) if isinstance(items, list) else 1)
        if method == "workspace/workspaceFolders":
            return self._workspace_folders
        raise MethodNotFound(method)

    def _on_message(self, params: JSON) -> None:
        if isinstance(params, dict):
            self.messages.append(_show_message(params))

    def _on_log_message(self, params: JSON) -> None:
        if isinstance(params, dict):
            self.log_messages.append(_show_message(params))

    def _on_did_load(self, params: JSON) -> None:
        try:
            notice = parse_notice(params)
        except SnippetsClientError:
            return
        with self._load_condition:
            self.loads.append(notice)
            self._last_load = notice
            self._load_count += 1
            self._load_condition.notify_all()

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in stream:
                self._stderr_tail.append(line.decode("utf-8", "replace"))

    def _connection_lost(self, reason: str) -> ServerExitedError:
        returncode: int | None = None
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                returncode = self.process.wait(timeout=1.0)
            if self._stderr_thread is not None:
                self._stderr_thread.join(timeout=1.0)
        error = ServerExitedError(reason, returncode, "".join(self._stderr_tail))
        with self._load_condition:
            self._lost = error
            self._load_condition.notify_all()
        return error

    # ------------------------------------------------------------------ state

    @property
    def alive(self) -> bool:
        """Whether the connection is up (the server may still be shutting down)."""
        return self._connection.dead is None

    @property
    def load_count(self) -> int:
        """How many ``snippets/didLoad`` notifications arrived so far."""
        with self._load_condition:
            return self._load_count

    def wait_for_load(self, count: int = 1, timeout: float | None = None) -> LoadNotice:
        """Wait until ``count`` ``snippets/didLoad`` arrived in all; return the latest.

        Useful after editing a settings file: ``n = client.load_count``, edit, then
        ``client.wait_for_load(n + 1)``. The notice has the generation, the snippet
        count, shortcut, ``expandOnCompletion`` and warnings; ``list()`` gives the
        snippets themselves.
        """
        wait = self.timeout if timeout is None else timeout
        with self._load_condition:
            self._load_condition.wait_for(
                lambda: self._load_count >= count or self._lost is not None, wait
            )
            if self._load_count >= count and self._last_load is not None:
                return self._last_load
            lost = self._lost
        if lost is not None:
            raise lost
        raise SnippetsTimeoutError(f"snippets/didLoad #{count}: none within {wait} s")

    def stderr_tail(self) -> str:
        """The last lines the server process wrote to stderr (its log)."""
        return "".join(self._stderr_tail)

    # ------------------------------------------------------------------ snippets

    def expand(
        self, text: str, uri: str | None = None, *, timeout: float | None = None
    ) -> ExpandResult:
        """``snippets/expand``: the prompt with its ``%name`` markers expanded.

        ``uri`` picks the workspace folder whose configuration applies (default: the
        first folder). Unpacks as ``text, changed``.
        """
        params: dict[str, JSON] = {"text": text}
        if uri is not None:
            params["uri"] = uri
        result = self.request(EXPAND, params, timeout=timeout)
        if not isinstance(result, dict):
            raise SnippetsClientError(f"{EXPAND}: unexpected result {result!r}")
        return ExpandResult(str(result["text"]), bool(result["changed"]))

    def list(self, uri: str | None = None, *, timeout: float | None = None) -> SnippetsListing:
        """``snippets/list``: the current generation's snippets, shortcut and warnings."""
        params: dict[str, JSON] = {} if uri is None else {"uri": uri}
        return parse_listing(LIST, self.request(LIST, params, timeout=timeout))

    def reload(self, *, timeout: float | None = None) -> SnippetsListing:
        """``snippets/reload``: read the settings again (Pi's ``/reload``)."""
        return parse_listing(RELOAD, self.request(RELOAD, {}, timeout=timeout))

    def complete(
        self,
        text: str,
        cursor: int | None = None,
        *,
        uri: str | None = None,
        timeout: float | None = None,
    ) -> Suggestions | None:
        """``textDocument/completion`` at code-point index ``cursor`` of ``text``.

        ``cursor`` defaults to the end of ``text``. The text is put in an in-memory
        document (``uri``, default ``untitled:pi-snippets-prompt``) with ``didOpen`` the
        first time and ``didChange`` after. Requests on one document are serialized; use
        distinct ``uri`` values for parallel completions. None when the server answers
        ``null`` (no snippet token at the cursor, or no snippets); otherwise the same
        ``Suggestions`` the in-process ``complete`` returns, with ``replace_start`` and
        ``replace_end`` as code-point indices into ``text``.
        """
        doc = uri or DEFAULT_DOCUMENT_URI
        document = Document(uri=doc, text=text)
        cursor = len(text) if cursor is None else max(0, min(cursor, len(text)))
        at = document.position_at(cursor, ENCODING)
        with self._lock:
            doc_lock = self._document_locks.setdefault(doc, threading.Lock())
        with doc_lock:
            self._sync_document(doc, text)
            result = self.request(
                "textDocument/completion",
                {
                    "textDocument": {"uri": doc},
                    "position": {"line": at.line, "character": at.character},
                },
                timeout=timeout,
            )
        if result is None:
            return None
        try:
            return parse_suggestions(result, document, cursor)
        except (KeyError, TypeError, ValueError) as exc:
            raise SnippetsClientError(
                f"textDocument/completion: unexpected result {result!r}"
            ) from exc

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
            already = self._closed
            self._closed = True
        if not already and self.alive:
            if not self._shutdown_sent:
                with contextlib.suppress(SnippetsClientError):
                    self._connection.request("shutdown", None, timeout=wait)
            with contextlib.suppress(SnippetsClientError):
                self.notify("exit")
        return self._finish(wait)

    def _abort(self) -> None:
        """Tear down without the LSP goodbye (a failed handshake)."""
        with self._lock:
            self._closed = True
        self._finish(0.5)

    def _finish(self, wait: float) -> int | None:
        self._connection.stop_writing(wait)
        returncode: int | None = None
        if self.process is not None:
            with contextlib.suppress(OSError, ValueError):
                if self.process.stdin is not None:
                    self.process.stdin.close()
            try:
                returncode = self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self.process.kill()
                returncode = self.process.wait(timeout=wait)
        if self._sock is not None:
            # Wait for the server to close its side after ``exit``, then close ours
            # (shutting the socket down first wakes the reader thread).
            self._connection.reader_thread.join(wait)
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self._sock.close()
        self._connection.close_reader(wait)
        if self._stderr_thread is not None:
            self._stderr_thread.join(wait)
            if not self._stderr_thread.is_alive() and self.process is not None:
                with contextlib.suppress(OSError, ValueError):
                    if self.process.stderr is not None:
                        self.process.stderr.close()
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


# --------------------------------------------------------------------------- helpers


def _show_message(params: Mapping[str, JSON]) -> ShowMessage:
    return ShowMessage(int(params.get("type", 0)), str(params.get("message", "")))


def _connect_with_retry(host: str, port: int, retry: float, timeout: float) -> socket.socket:
    """Connect, retrying a refused connection for ``retry`` seconds."""
    deadline = time.monotonic() + retry
    while True:
        try:
            return socket.create_connection((host, port), timeout=timeout)
        except ConnectionRefusedError as exc:
            if time.monotonic() >= deadline:
                raise ServerUnavailableError(
                    f"no pi-snippets-lsp server listens at {host}:{port} "
                    f"(connection refused for {retry} s; start one with "
                    f"`pi-snippets-lsp --tcp --port {port}`)"
                ) from exc
            time.sleep(0.05)
        except OSError as exc:
            raise ServerUnavailableError(f"cannot connect to {host}:{port}: {exc}") from exc
