"""``pi-snippets-lsp mcp``: the answers of ``answers.py`` served over stdio.

docs/mcp.md. Agents wait for an MCP server only briefly (Gemini CLI builds its slash
commands from the servers that have answered by then), so the path to the first
answers imports no protocol library: ``jsonrpc`` reads and writes the lines,
``protocol`` holds each revision's rules, and this module is the session. Every
handler is a thin call into ``answers`` over the current generation
(``live.LiveSnippets``); each result goes out as ``answers`` made it. With
``--allow-writes``, a call of a tool that changes the snippets goes to ``writes``,
imported then.

``initialize`` is answered at once; a request that needs the snippets waits for the
first load, so the first ``prompts/list`` already has them. Then:

- the handshake revisions: once the client sends ``notifications/initialized``, a
  reload that changes the snippets sends ``notifications/prompts/list_changed`` and
  ``notifications/resources/list_changed``; each load's problems go out as one
  ``notifications/message`` (filtered by ``logging/setLevel``); a trusted project asks
  the client for its roots.
- 2026-07-28: change notifications reach a client only on the ``subscriptions/listen``
  streams it opened (and ``notifications/resources/updated`` for the resources a
  stream follows); a log message may only ride a request whose ``_meta`` asked for
  that level, so a load's problems go out once, on the next such request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final

from pi_snippets_lsp.core.catalog import TRUST_FLAG_HINT, untrusted_note
from pi_snippets_lsp.core.config import MESSAGE_PREFIX, Config
from pi_snippets_lsp.core.serving import OFF_LOOP_CHARS
from pi_snippets_lsp.mcp import answers, protocol
from pi_snippets_lsp.mcp.jsonrpc import (
    DEFAULT_MAX_LINE,
    Id,
    LineReader,
    LineWriter,
    Rejection,
    RpcError,
    encode,
    encode_large,
    error_response,
    exit_now,
    leading_id,
    parse_line,
    stop_on_signals,
)
from pi_snippets_lsp.mcp.live import (
    Listener,
    LiveSnippets,
    McpFlags,
    changed_names,
    snippets_changed,
)
from pi_snippets_lsp.mcp.write_tools import WRITE_TOOLS
from pi_snippets_lsp.settings.folders import root_folder
from pi_snippets_lsp.wire.errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    REQUEST_TIMEOUT,
)
from pi_snippets_lsp.wire.version import VERSION

log = logging.getLogger(__name__)

#: Seconds a client has to answer ``roots/list``.
_ROOTS_TIMEOUT: Final = 10.0
#: Seconds the lines already sent have to be written when the session ends.
_DRAIN_TIMEOUT: Final = 1.0
#: Seconds the requests still running when stdin ends have to finish (their answers
#: may still be read: ``printf '...' | pi-snippets-lsp mcp``).
_EOF_GRACE: Final = 5.0

INSTRUCTIONS: Final = (
    "Prompt snippets of Pi's pi-simple-snippets extension. Each snippet is a prompt "
    "(its name; title %name) and a resource snippet://NAME. In any text, %name at a word "
    "boundary stands for that snippet's text: the expand_snippets tool expands them by "
    "Pi's rules, list_snippets and get_snippet show what is configured."
)
SERVER_INFO: Final[dict[str, object]] = {
    "name": answers.SERVER_NAME,
    "title": "Pi snippets",
    "version": VERSION,
}

#: The requests answered without the snippets (no wait for the first load).
_NO_SNIPPETS: Final = frozenset({"ping", "server/discover", "logging/setLevel"})
#: The lists a generation answers the same every time: built and encoded once.
#: Each takes the generation and the client's name (``prompts/list`` declares ``text``
#: as the client's slash commands fill it: ``answers.text_required``).
_LISTS: Final[dict[str, Callable[[Config, str | None], dict[str, object]]]] = {
    "prompts/list": answers.list_prompts,
    "resources/list": lambda config, _: answers.list_resources(config),
    "resources/templates/list": lambda _, __: answers.list_resource_templates(),
    "tools/list": lambda _, __: answers.list_tools(),
}


class McpSession:
    """One stdio session: the live generation, the era the client chose, what runs."""

    def __init__(self, flags: McpFlags, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.flags = flags
        self.max_line = max_line
        self.live = LiveSnippets(flags, on_load=self._loaded, on_failure=self._failed)
        self.loop = asyncio.get_running_loop()
        self.writer = LineWriter(self.loop, sys.stdout.fileno())
        self.stopped = asyncio.Event()
        self.first_load = asyncio.Event()
        #: None until the first request; then whether it opened the 2026-07-28 era.
        self.modern: bool | None = None
        #: Handshake era: the negotiated revision, the client's capabilities, and
        #: whether ``initialize`` (or ``notifications/initialized``) opened the session.
        self.version = protocol.LATEST_HANDSHAKE
        self.client_capabilities: Mapping[str, Any] = {}
        self.initialize_accepted = False
        self.initialized = False
        #: The lowest level ``logging/setLevel`` asked for (handshake era).
        self.min_level = "debug"
        #: Log messages not yet delivered: (level, text), in order.
        self.pending: list[tuple[str, str]] = []
        #: Requests in flight, by id (for ``notifications/cancelled``).
        self.running: dict[Id, asyncio.Task[None]] = {}
        self.listeners: dict[Id, Listener] = {}
        #: Requests this server sent (``roots/list``), by id.
        self.asked: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0
        #: Encoded lists of the current generation, by (method, modern, text required).
        self.lists: dict[tuple[str, bool, bool], tuple[Config, bytes]] = {}
        #: The handshake's ``clientInfo.name`` (``protocol.client_name``).
        self.client_name: str | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        tools = answers.list_tools(flags.allow_writes)
        self.makers = {**_LISTS, "tools/list": lambda _, __: tools}

    @property
    def config(self) -> Config:
        return self.live.config

    # ------------------------------------------------------------------ running

    async def run(self) -> None:
        """Serve stdin/stdout until the client closes stdin (or a signal), loading
        the first generation while the client says hello."""
        self.writer.start()
        LineReader(
            self.loop, sys.stdin.fileno(), self.max_line, self._line, self._too_long, self._eof
        ).start()
        try:
            await self.live.reload()
        finally:  # even a load that could not run answers the waiting requests
            self.first_load.set()
        self.live.start()
        try:
            await self.stopped.wait()
        finally:
            self.live.stop()
        # What was sent before the end is written before the process exits (a client
        # that stopped reading gets a moment, not forever).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.writer.send_bytes(b""), _DRAIN_TIMEOUT)

    def stop(self) -> None:
        self.stopped.set()

    def _spawn(self, coroutine: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = self.loop.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def _eof(self) -> None:
        """stdin ended: end the listen streams, let the other requests finish (their
        answers may still be read), then stop."""
        for listener in self.listeners.values():
            listener.closed.set()
        for waiting in self.asked.values():
            if not waiting.done():
                waiting.set_exception(RpcError(CONNECTION_CLOSED, "Connection closed"))
        self._spawn(self._finish())

    async def _finish(self) -> None:
        running = [task for task in self.running.values() if not task.done()]
        if running:
            await asyncio.wait(running, timeout=_EOF_GRACE)
        self.stop()

    # ------------------------------------------------------------------ incoming lines

    def _too_long(self, head: bytes) -> None:
        id_ = leading_id(head)
        log.warning("refused a line longer than %d bytes (id %r)", self.max_line, id_)
        message = (
            f"Invalid request: the line is longer than {self.max_line} bytes "
            "(pi-snippets-lsp mcp --max-message-size)"
        )
        self._send_now(error_response(id_, {"code": INVALID_REQUEST, "message": message}))

    def _line(self, line: bytes) -> None:
        message = parse_line(line)
        if message is None:
            return
        if isinstance(message, Rejection):
            self._rejected(message)
            return
        method = message.get("method")
        if method is None:
            self._answered(message)
        elif "id" in message:
            self._request(message["id"], method, message.get("params"))
        else:
            self._notification(method, message.get("params"))

    def _rejected(self, rejection: Rejection) -> None:
        if rejection.answer:
            log.warning("%s", rejection.message)
            self._send_now(rejection.response())
            return
        log.warning("dropped a message: %s", rejection.message)
        waiting = self.asked.get(rejection.id) if isinstance(rejection.id, int) else None
        if waiting is not None and not waiting.done():
            waiting.set_exception(RpcError(rejection.code, rejection.message))

    def _send_now(self, message: dict[str, Any]) -> None:
        self._spawn(self.writer.send(message))

    def _answered(self, message: dict[str, Any]) -> None:
        """A response to a request of ours."""
        id_ = message.get("id")
        waiting = self.asked.get(id_) if isinstance(id_, int) else None
        if waiting is None or waiting.done():
            log.debug("dropped a response to unknown request %r", id_)
            return
        error = message.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {}
            waiting.set_exception(
                RpcError(int(error.get("code") or 0), str(error.get("message") or "error"))
            )
        else:
            result = message.get("result")
            waiting.set_result(result if isinstance(result, dict) else {})

    def _request(self, id_: Id, method: str, params: object) -> None:
        if id_ in self.running:
            log.warning("request id %r is already in flight", id_)
        if self.modern is None:
            self.modern = method != "initialize" and protocol.is_modern(params)
        if method == "initialize" and not self.modern:
            # Answered in order: a request sent right behind it sees the session open.
            try:
                result = self._initialize(params)
            except RpcError as exc:
                self._send_now(error_response(id_, exc.error()))
                return
            self._send_now({"jsonrpc": "2.0", "id": id_, "result": result})
            return
        try:
            admitted = self._admit(method, params)
        except RpcError as exc:
            self._send_now(error_response(id_, exc.error()))
            return
        task = self._spawn(self._serve(id_, method, *admitted))
        self.running[id_] = task
        task.add_done_callback(lambda done: self._ended(id_, done))

    def _ended(self, id_: Id, task: asyncio.Task[None]) -> None:
        if self.running.get(id_) is task:
            del self.running[id_]

    def _notification(self, method: str, params: object) -> None:
        if params is not None and not isinstance(params, dict):
            log.warning("dropped %s: its params are no object", method)
            return
        params = params or {}
        if method == "notifications/cancelled":
            id_ = params.get("requestId")
            if not isinstance(id_, int | str) or isinstance(id_, bool):
                log.warning("dropped notifications/cancelled: its requestId is no id")
                return
            task = self.running.get(id_)
            if task is not None:
                log.info("request %r cancelled by the client", id_)
                task.cancel()
        elif self.modern:
            log.debug("ignored %s", method)
        elif method == "notifications/initialized":
            self.initialized = self.initialize_accepted = True
            self._spawn(self._opened())
        elif method == "notifications/roots/list_changed" and self.initialized:
            self._spawn(self._ask_roots())
        else:
            log.debug("ignored %s", method)

    # ------------------------------------------------------------------ requests

    async def _serve(self, id_: Id, method: str, modern: bool, params: Mapping[str, Any]) -> None:
        """Answer one admitted request; a request the client cancelled gets no answer."""
        try:
            data = await self._answer(id_, method, modern, params)
        except asyncio.CancelledError:
            if self.stopped.is_set():  # the process ends: answer without waiting
                closed = {"code": CONNECTION_CLOSED, "message": "Connection closed"}
                self.writer.post(encode(error_response(id_, closed)))
            raise
        except RpcError as exc:
            data = encode(error_response(id_, exc.error()))
        except Exception:
            log.exception("answering %s failed", method)
            error = {"code": INTERNAL_ERROR, "message": f"Internal error answering {method}"}
            data = encode(error_response(id_, error))
        await self.writer.send_bytes(data)

    def _admit(self, method: str, params: object) -> tuple[bool, Mapping[str, Any]]:
        """Decided as each line comes, in order: a request right behind ``initialize``
        sees the session open, one before it not (``protocol.admit``)."""
        modern = bool(self.modern)
        served = method in self._handlers
        opened = self.initialize_accepted
        return modern, protocol.admit(method, params, modern, served=served, opened=opened)

    async def _answer(self, id_: Id, method: str, modern: bool, params: Mapping[str, Any]) -> bytes:
        """The encoded response to an admitted request, or the ``RpcError`` that
        refuses it."""
        if method not in _NO_SNIPPETS and not self.first_load.is_set():
            await self.first_load.wait()
        if modern:
            await self._deliver_on_request(params.get("_meta"))
        listed = self.makers.get(method)
        if listed is not None:
            return self._listed(id_, method, params, listed, modern)
        result = await self._handlers[method](self, id_, params)
        response = {
            "jsonrpc": "2.0",
            "id": id_,
            "result": protocol.shape_result(method, modern, result, SERVER_INFO),
        }
        if protocol.text_size(params) >= OFF_LOOP_CHARS:  # a long answer: encoded off the loop too
            return await asyncio.to_thread(encode_large, response)
        return encode(response)

    def _listed(
        self,
        id_: Id,
        method: str,
        params: Mapping[str, Any],
        make: Callable[[Config, str | None], dict[str, object]],
        modern: bool,
    ) -> bytes:
        """A list: one page, built and encoded once per generation (an agent lists
        again on every ``list_changed``, and some on every turn)."""
        try:
            answers.check_cursor(params.get("cursor"))
        except answers.InvalidParams as exc:
            raise RpcError(exc.code, exc.message) from None
        config = self.config
        client = protocol.client_name(params, modern, self.client_name)
        key = (method, modern, answers.text_required(client))
        cached = self.lists.get(key)
        if cached is None or cached[0] is not config:
            result = protocol.shape_result(method, modern, make(config, client), SERVER_INFO)
            cached = (config, encode(result)[:-1])
            self.lists[key] = cached
        return b'{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (json.dumps(id_).encode(), cached[1])

    def _initialize(self, params: object) -> dict[str, object]:
        checked = protocol.check_params("initialize", params, False)
        self.client_name = checked["clientInfo"]["name"]
        self.version = protocol.negotiate(checked["protocolVersion"])
        self.client_capabilities = checked["capabilities"]
        self.initialize_accepted = True
        return protocol.initialize_result(self.version, SERVER_INFO, INSTRUCTIONS)

    # Each handler: (session, id, checked params) -> the result, as ``answers`` made it.

    async def _ping(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        return {}

    async def _discover(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        return protocol.discover_result(INSTRUCTIONS)

    async def _set_level(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        self.min_level = params["level"]
        return {}

    async def _get_prompt(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        config, arguments = self.config, params.get("arguments") or {}
        return await _off_loop(
            lambda: answers.get_prompt(config, params["name"], arguments),
            protocol.text_size(params),
        )

    async def _read_resource(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        config = self.config
        return await _off_loop(lambda: answers.read_resource(config, params["uri"]))

    async def _call_tool(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        if self.flags.allow_writes and params["name"] in WRITE_TOOLS:
            from pi_snippets_lsp.mcp import writes  # noqa: PLC0415 (only when one is called)

            return await writes.call(self, params)
        config, arguments, size = self.config, params.get("arguments"), protocol.text_size(params)
        return await _off_loop(lambda: answers.call_tool(config, params["name"], arguments), size)

    async def _complete(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        config, ref, argument = self.config, params["ref"], params["argument"]
        return await _off_loop(
            lambda: answers.complete(config, ref, argument["name"], argument["value"])
        )

    async def _listen(self, id_: Id, params: Mapping[str, Any]) -> dict[str, object]:
        """``subscriptions/listen``: acknowledge what is honored, then deliver the
        events that match until the stream ends (stdin closed, or cancelled)."""
        honored = protocol.listen_filter(params)
        listener = Listener(id_, honored)
        self.listeners[id_] = listener
        try:
            await self._notify(
                "notifications/subscriptions/acknowledged",
                {"_meta": listener.meta, "notifications": honored},
            )
            await listener.closed.wait()
        finally:
            self.listeners.pop(id_, None)
        return {"_meta": dict(listener.meta)}

    _handlers: Final[dict[str, Callable[..., Any]]] = {
        "ping": _ping,
        "server/discover": _discover,
        "logging/setLevel": _set_level,
        **dict.fromkeys(_LISTS, _ping),  # answered from the lists of the generation
        "prompts/get": _get_prompt,
        "resources/read": _read_resource,
        "tools/call": _call_tool,
        "completion/complete": _complete,
        "subscriptions/listen": _listen,
    }

    # ------------------------------------------------------------------ the handshake era

    async def _opened(self) -> None:
        """The client is ready: deliver what is pending, and (trusted projects only)
        ask for its roots."""
        await self._deliver_on_session()
        await self._ask_roots()

    async def _ask_roots(self) -> None:
        if not self.flags.trust_project or not isinstance(
            self.client_capabilities.get("roots"), dict
        ):
            return
        try:
            result = await self.ask("roots/list", _ROOTS_TIMEOUT)
            roots = result.get("roots")
            uris = (
                [r.get("uri") for r in roots if isinstance(r, dict)]
                if isinstance(roots, list)
                else []
            )
        except RpcError as exc:  # a client that cannot answer keeps the folder we have
            log.warning("roots/list failed: %s", exc.message)
            return
        await self.live.set_root(root_folder([uri for uri in uris if isinstance(uri, str)]))

    async def ask(
        self, method: str, timeout: float, params: dict[str, object] | None = None
    ) -> dict[str, Any]:
        """Send a request to the client and wait for its result (handshake era)."""
        self.next_id += 1
        id_ = self.next_id
        waiting: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.asked[id_] = waiting
        try:
            request = {"jsonrpc": "2.0", "id": id_, "method": method}
            await self.writer.send({**request, "params": params} if params else request)
            try:
                return await asyncio.wait_for(waiting, timeout)
            except TimeoutError:
                await self._notify(
                    "notifications/cancelled",
                    {"requestId": id_, "reason": f"timed out after {timeout}s"},
                )
                raise RpcError(REQUEST_TIMEOUT, f"Request {method!r} timed out") from None
        finally:
            self.asked.pop(id_, None)

    async def _notify(self, method: str, params: dict[str, object] | None = None) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.writer.send(message)

    # ------------------------------------------------------------------ loads

    async def _loaded(self, previous: Config, current: Config) -> None:
        """A new generation: queue its problems, and announce a changed list."""
        message = self.live.warning
        if message is not None:
            self.pending = [p for p in self.pending if p[0] != "warning"]
            self.pending.append(("warning", message))
        for path in self.live.untrusted:
            self.pending.append(
                (
                    "info",
                    f"{MESSAGE_PREFIX} {untrusted_note(path, TRUST_FLAG_HINT)}",
                )
            )
        await self._deliver_on_session()
        # The first load is no change: nothing was listed before it.
        if self.first_load.is_set() and snippets_changed(previous, current):
            await self._announce_change(changed_names(previous, current))

    async def _failed(self, message: str) -> None:
        self.pending.append(("warning", message))
        await self._deliver_on_session()

    async def _announce_change(self, names: list[str]) -> None:
        if self.initialized and not self.modern:
            await self._notify("notifications/prompts/list_changed")
            await self._notify("notifications/resources/list_changed")
        for listener in list(self.listeners.values()):
            meta: dict[str, object] = {"_meta": listener.meta}
            if listener.prompts:
                await self._notify("notifications/prompts/list_changed", meta)
            if listener.resources:
                await self._notify("notifications/resources/list_changed", meta)
            for name in names:
                uri = answers.snippet_uri(name)
                if uri in listener.uris:
                    await self._notify("notifications/resources/updated", {"uri": uri, **meta})

    # ------------------------------------------------------------------ log messages

    async def _deliver_on_session(self) -> None:
        """Handshake era: send what is pending now, at the levels the client wants."""
        if not self.initialized or self.modern or not self.pending:
            return
        pending, self.pending = self.pending, []
        least = protocol.LEVELS.index(self.min_level)
        for level, text in pending:
            if protocol.LEVELS.index(level) >= least:
                await self._notify("notifications/message", answers.log_params(level, text))

    async def _deliver_on_request(self, meta: object) -> None:
        """2026-07-28: what is pending rides this request's stream, when its ``_meta``
        asked for that level (the only way that revision lets a log message out)."""
        if not self.pending:
            return
        allowed = protocol.allowed_levels(meta)
        deliver = [(level, text) for level, text in self.pending if level in allowed]
        if not deliver:
            return
        self.pending = [p for p in self.pending if p not in deliver]
        for level, text in deliver:
            await self._notify("notifications/message", answers.log_params(level, text))


async def _off_loop(make: Callable[[], dict[str, object]], size: int = 0) -> dict[str, object]:
    """``make()``, on a worker thread when the request carries a text of more than
    ``OFF_LOOP_CHARS``; ``InvalidParams`` becomes the JSON-RPC error."""
    try:
        if size >= OFF_LOOP_CHARS:
            return await asyncio.to_thread(make)
        return make()
    except answers.InvalidParams as exc:
        raise RpcError(exc.code, exc.message) from None


# --------------------------------------------------------------------------- the process


async def _main(flags: McpFlags, max_line: int) -> None:
    session = McpSession(flags, max_line)
    stop_on_signals(session.loop, session.stop)
    await session.run()


def serve(flags: McpFlags, max_line: int = DEFAULT_MAX_LINE) -> int:
    """Serve one MCP session on stdin/stdout, then end the process: 0 when the client
    closed the stream or a signal came, 1 after an error."""
    code = 0
    try:
        asyncio.run(_main(flags, max_line))
    except KeyboardInterrupt:
        pass
    except Exception:
        log.exception("the MCP session failed")
        code = 1
    exit_now(code)
    return code  # pragma: no cover (os._exit does not return)
