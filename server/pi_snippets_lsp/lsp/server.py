"""The server of one session: pygls's protocol with the changes the design asks for,
and the session's documents and state.

docs/lsp.md is the specification. The handlers are in ``lsp.handlers`` (registered by
``lsp.setup``; this module imports none of them). Session state (folders, generations,
reloads, registrations) lives in ``session.Session``, which reaches the client through
``link.ClientLink``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Final, Literal

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

from pi_snippets_lsp.core.documents import Document, Encoding, Position
from pi_snippets_lsp.lsp.link import ClientLink
from pi_snippets_lsp.lsp.lspjson import lsp_json
from pi_snippets_lsp.lsp.session import MessageKind, ServerFlags, Session
from pi_snippets_lsp.lsp.translate import JsonText, honest_capabilities
from pi_snippets_lsp.settings.folders import path_of_uri
from pi_snippets_lsp.wire.errors import INVALID_REQUEST, SERVER_NOT_INITIALIZED
from pi_snippets_lsp.wire.framing import frame
from pi_snippets_lsp.wire.messages import EXPAND, LIST, RELOAD
from pi_snippets_lsp.wire.version import VERSION

log = logging.getLogger(__name__)

#: What happened to the workspace: a document opened, changed or closed, or the folders
#: changed (``SnippetsServer.workspace_changed``).
WorkspaceEvent = Literal["opened", "changed", "closed", "folders"]

SERVER_NAME: Final = "pi-snippets-lsp"


class QuietInvalidParams(logging.Filter):
    """pygls logs a full traceback for every error answer; bad params are the client's
    mistake, already answered with -32602, so one line is enough."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcInvalidParams | JsonRpcInvalidRequest):
            record.msg, record.args, record.exc_info = "%s", (exc.message,), None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def quiet_invalid_params() -> None:
    """Install ``QuietInvalidParams`` on pygls's JSON-RPC log (once per process, by the
    command that serves)."""
    rpc_log = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, QuietInvalidParams) for f in rpc_log.filters):
        rpc_log.addFilter(QuietInvalidParams())


@attrs.define
class _CustomRequest:
    """A JSON-RPC request whose params reach the handler as plain JSON."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


_CUSTOM_METHODS: Final = frozenset({EXPAND, LIST, RELOAD})


class SnippetsProtocol(LanguageServerProtocol):
    """pygls's protocol with the changes the design asks for.

    - Custom requests get their params as plain JSON, validated by ``wire.messages``.
    - A request before ``initialize`` gets -32002; after ``shutdown``, -32600.
    - Text documents are kept by ``SnippetsServer`` with LSP line rules (pygls splits
      lines the Python way, see ``documents.py``), so pygls's own copy is not kept.
    - With a client that can register completion dynamically, the static provider is
      left out of the capabilities: completion is registered only while snippets exist.
    """

    _server: SnippetsServer
    #: ``shutdown`` arrived (pygls marks it only once its handler is done).
    shutdown_received = False
    #: The ``capabilities`` of ``initialize``, as the client sent them.
    client_capabilities_json: object = None

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls drops a message whose params do not fit the method's type, and a client
        waiting for the answer hangs. Answer such a request with -32602 instead, and
        skip such a notification with a log line; the session goes on either way.

        The capabilities of ``initialize`` are kept as JSON as well: ``ClientFeatures``
        reads them from there, where converting pygls's typed copy back would cost a
        first use of cattrs's unstructuring on the way to answering ``initialize``."""
        if data.get("method") == types.INITIALIZE and isinstance(data.get("params"), dict):
            self.client_capabilities_json = data["params"].get("capabilities")
        try:
            return super().structure_message(data)
        except JsonRpcException:
            method = data.get("method")
            if "id" in data and isinstance(method, str):
                self._send_response(
                    data["id"],
                    error=JsonRpcInvalidParams(
                        f"{method}: params do not match the LSP specification"
                    ).to_response_error(),
                )
            log.warning("discarded a malformed %s message", method or "JSON-RPC")
            return JsonRPCNotification(method="$/piSnippets/discarded", jsonrpc="2.0", params=None)

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if method is not None and msg_id is not None:
            if self.shutdown_received and method != types.EXIT:
                # pygls drops requests after shutdown silently; LSP asks for an error.
                self._refuse(msg_id, INVALID_REQUEST, f"{method}: the server is shut down")
                return
            if self._workspace is None and method != types.INITIALIZE:
                self._refuse(
                    msg_id, SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized"
                )
                return
            if method == types.SHUTDOWN:
                self.shutdown_received = True
        elif method is not None and self._workspace is None and method != types.EXIT:
            log.warning("ignored %s before initialize", method)
            return
        super().handle_message(message)

    def _refuse(self, msg_id: Any, code: int, message: str) -> None:
        self._send_response(msg_id, error=types.ResponseError(code=code, message=message))

    def _send_response(
        self, msg_id: Any, result: Any = None, error: types.ResponseError | None = None
    ) -> None:
        """pygls puts an internal error's traceback (file paths, code) in ``data``; the
        client gets it only from a server started with ``-v``.

        A result is written as plain JSON: built so already (completion lists, the custom
        requests' answers), or turned so by ``lsp_json`` (lsprotocol values). pygls would
        send each through cattrs, whose first use per class generates code: time paid
        in answering ``initialize``, and the first hover or code action of a session."""
        if error is not None and error.data is not None and not self._server.flags.error_details:
            error = types.ResponseError(code=error.code, message=error.message)
        if error is None and isinstance(result, JsonText):  # encoded already
            body = f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"result":{result}}}'
            self._write(body.encode("ascii"))
            return
        if error is None and isinstance(result, dict):  # plain JSON by construction
            self._send_plain({"jsonrpc": "2.0", "id": msg_id, "result": result})
            return
        lsp_value = result is None or isinstance(result, list) or attrs.has(type(result))
        if error is None and lsp_value:
            self._send_plain({"jsonrpc": "2.0", "id": msg_id, "result": lsp_json(result)})
            return
        super()._send_response(msg_id, result, error)

    def _send_plain(self, message: dict[str, Any]) -> None:
        """A message of plain JSON, written compact: pygls pads the separators and logs
        each message's whole body at INFO (a completion list is sent on every keystroke
        after ``%``); its own path stays for the rest. Non-ASCII characters go as JSON
        escapes, as pygls sends them: the C encoder writes ASCII fastest, and a lone
        surrogate (JSON allows ``"\\ud800"`` in a settings file) needs an escape anyway."""
        try:
            body = json.dumps(message, separators=(",", ":")).encode("ascii")
        except (TypeError, ValueError):
            self._send_data(message)  # not plain after all: pygls converts it or reports
            return
        self._write(body)

    def _write(self, body: bytes) -> None:
        """One message's body, framed when the transport frames (stdio and TCP do)."""
        if self.writer is None:
            log.error("no transport to send a message on")
            return
        # Our transport's writers (transport.py) write at once and return nothing.
        self.writer.write(frame(body) if self._include_headers else body)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """``exit`` ends this connection's session, not the process: pygls calls
        ``sys.exit``, which in the daemon would end every session. The transport decides
        what ending means (``SnippetsServer.end``)."""
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        self._server.end(0 if self.shutdown_received else 1)

    def pending_handlers(self) -> set[asyncio.Future[Any]]:
        """Handlers still running (requests and notifications), but the caller's own."""
        current = asyncio.current_task()
        pending: set[asyncio.Future[Any]] = set()
        futures: list[object] = list(self._request_futures.values())
        for future in futures:  # async handlers' are asyncio futures; others are not
            if isinstance(future, asyncio.Future) and not future.done() and future is not current:
                pending.add(future)
        return pending

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """A method's message type, looked up without pygls's cache: pygls puts
        ``functools.lru_cache`` on this method, whose keys hold ``self``, and so kept the
        last 64 or so sessions of a daemon whole after their clients had gone."""
        if method in _CUSTOM_METHODS:
            return _CustomRequest
        return types.METHOD_TO_TYPES.get(method, (None,))[0]

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """As ``get_message_type``: no cache that keeps the session."""
        return types.METHOD_TO_TYPES.get(method, (None, None))[1]

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        features = self._server.session.features
        if features.completion_dynamic:
            result.capabilities.completion_provider = None
        honest_capabilities(result.capabilities, features)
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        self._server.documents[item.uri] = Document(
            uri=item.uri, text=item.text, version=item.version, language_id=item.language_id
        )
        self._server.workspace_changed(item.uri, "opened")

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        document = self._server.documents.get(params.text_document.uri)
        if document is None:
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        encoding = self._server.encoding
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = Position(change.range.start.line, change.range.start.character)
                end = Position(change.range.end.line, change.range.end.character)
                document.apply_change(change.text, start, end, encoding)
            else:
                document.apply_change(change.text)
        document.version = params.text_document.version
        self._server.workspace_changed(document.uri, "changed")

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._server.documents.pop(params.text_document.uri, None)
        self._server.workspace_changed(params.text_document.uri, "closed")


@functools.cache
def shared_converter() -> cattrs.Converter:
    """The one cattrs converter of the process, shared by every session's protocol.

    pygls would make one per server, and each generates (and keeps) its structuring
    functions for the messages its session sees: memory in every session of a daemon,
    and time in its first messages. Nothing in it belongs to a session: after pygls's own
    hooks are registered (once, here) it only caches what it generated.
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    return converter


class SnippetsServer(LanguageServer):
    """The server of one session: its documents, its session, and the link between the
    session and the client (``lsp.link``)."""

    protocol: SnippetsProtocol

    def __init__(self, flags: ServerFlags | None = None) -> None:
        super().__init__(
            SERVER_NAME,
            VERSION,
            protocol_cls=SnippetsProtocol,
            converter_factory=shared_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.documents: dict[str, Document] = {}
        #: Open documents that are settings files the session reads (they get diagnostics).
        self.settings_documents: set[str] = set()
        self.flags = flags or ServerFlags()
        self.link = ClientLink(self, lambda: self.session.features)
        self.session = Session(link=self.link, flags=self.flags)
        #: Called when a document opens, changes or closes, and when the workspace folders
        #: change (uri None): handlers that follow documents register here.
        self.workspace_listeners: list[
            Callable[[SnippetsServer, str | None, WorkspaceEvent], None]
        ] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        #: Called with the exit code when the client sends ``exit`` (set by the
        #: transport, see ``lsp.transport``).
        self.on_end: Callable[[int], None] | None = None

    def workspace_changed(self, uri: str | None, event: WorkspaceEvent) -> None:
        """Tell the listeners, after the server's own bookkeeping of the event."""
        for listener in self.workspace_listeners:
            listener(self, uri, event)

    def show(self, kind: MessageKind, text: str) -> None:
        """A message to the user (``window/showMessage``, and the log)."""
        self.link.show(kind, text)

    def end(self, code: int) -> None:
        """``exit``: end this session with ``code``, as the transport sees fit."""
        if self.on_end is None:
            raise SystemExit(code)
        self.on_end(code)

    def close(self) -> None:
        """The connection is gone: stop the session, cancel the work in flight, drop the
        documents (pygls's caches may keep this object a while)."""
        self.session.close()
        for future in [*self._tasks, *self.protocol.pending_handlers()]:
            future.cancel()
        self.documents.clear()
        self.shutdown()  # type: ignore[no-untyped-call]  # pygls: its thread pool

    @property
    def encoding(self) -> Encoding:
        return self.session.features.encoding

    @property
    def shutdown_requested(self) -> bool:
        return self.protocol.shutdown_received

    def spawn(self, work: Awaitable[Any]) -> None:
        """Run ``work`` in the background, keeping a reference until it is done."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def folder_paths(self) -> list[str]:
        """Workspace folders as file-system paths, in the client's order."""
        folders = self.workspace.folders.values()
        return [p for p in (path_of_uri(f.uri) for f in folders) if p]
