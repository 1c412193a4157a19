"""``pi-snippets-lsp mcp``: the answers of ``answers.py`` served with the official SDK.

docs/mcp.md. The SDK's low-level ``Server`` is used, not ``MCPServer``: the prompts and
resources change with every generation, and each answer must be exactly ours (a prompt's
title and argument, a tool's schemas and annotations, the errors). Every handler is a
thin call into ``answers`` over the current generation (``live.LiveSnippets``); the SDK
does the rest (framing, capability negotiation, each protocol revision's fields).

The SDK speaks two eras on one stdio stream, chosen by the client's first request:

- the handshake revisions (2024-11-05 to 2025-11-25, ``initialize``): once the client
  sends ``notifications/initialized``, its session is kept, and a reload that changes the
  snippets sends ``notifications/prompts/list_changed`` and
  ``notifications/resources/list_changed`` on it; each load's problems go out on it as
  one ``notifications/message`` (filtered by ``logging/setLevel``); a trusted project
  asks the client for its roots.
- 2026-07-28 (no handshake): change notifications reach a client only on the
  ``subscriptions/listen`` stream it opened, so a reload publishes the same two events on
  the SDK's subscription bus; a log message may only ride a request whose ``_meta``
  asked for that level, so a load's problems go out once, on the next such request.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final, get_args

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from pi_snippets_lsp.core.config import MESSAGE_PREFIX, Config
from pi_snippets_lsp.mcp import answers
from pi_snippets_lsp.mcp.live import (
    LiveSnippets,
    McpFlags,
    changed_names,
    snippets_changed,
)
from pi_snippets_lsp.settings.folders import root_folder
from pi_snippets_lsp.wire.version import VERSION

log = logging.getLogger(__name__)

Context = ServerRequestContext[Any, Any]

#: A text longer than this is expanded on a worker thread, so the event loop stays free
#: for notifications while a 10 MB prompt is expanded.
_OFF_LOOP_CHARS: Final = 64 * 1024
#: Seconds a client has to answer ``roots/list``.
_ROOTS_TIMEOUT: Final = 10.0
#: Seconds a signal leaves the server to end cleanly before the process just exits (a
#: write to a client that stopped reading cannot be cancelled).
_EXIT_GRACE: Final = 1.0

INSTRUCTIONS: Final = (
    "Prompt snippets of Pi's pi-simple-snippets extension. Each snippet is a prompt "
    "(its name; title %name) and a resource snippet://NAME. In any text, %name at a word "
    "boundary stands for that snippet's text: the expand_snippets tool expands them by "
    "Pi's rules, list_snippets and get_snippet show what is configured."
)

#: The log levels, least severe first.
_LEVELS: Final[tuple[types.LoggingLevel, ...]] = get_args(types.LoggingLevel)


class SnippetsServer:
    """One stdio session: the live generation, the SDK server, and what is pending."""

    def __init__(self, flags: McpFlags) -> None:
        self.flags = flags
        self.live = LiveSnippets(flags, on_load=self._loaded, on_failure=self._failed)
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        #: The handshake-era session, once the client sent ``notifications/initialized``.
        self.session: ServerSession | None = None
        #: The lowest level ``logging/setLevel`` asked for (handshake era).
        self.min_level: types.LoggingLevel = "debug"
        #: Log messages not yet delivered: (level, text), in order.
        self.pending: list[tuple[types.LoggingLevel, str]] = []
        #: The lists of the current generation, built once (a generation never changes):
        #: method -> (the generation it was built from, the answer).
        self.lists: dict[str, tuple[Config, BaseModel]] = {}
        self.server = self._build()

    @property
    def config(self) -> Config:
        return self.live.config

    # ------------------------------------------------------------------ the SDK server

    def _build(self) -> Server[Any]:
        server: Server[Any] = Server(
            answers.SERVER_NAME,
            version=VERSION,
            title="Pi snippets",
            instructions=INSTRUCTIONS,
            on_subscriptions_listen=self.listen,
        )
        add = server.add_request_handler
        add("prompts/list", types.PaginatedRequestParams, self._list_prompts)
        add("prompts/get", types.GetPromptRequestParams, self._get_prompt)
        add("resources/list", types.PaginatedRequestParams, self._list_resources)
        add("resources/templates/list", types.PaginatedRequestParams, self._list_templates)
        add("resources/read", types.ReadResourceRequestParams, self._read_resource)
        add("tools/list", types.PaginatedRequestParams, self._list_tools)
        add("tools/call", types.CallToolRequestParams, self._call_tool)
        add("completion/complete", types.CompleteRequestParams, self._complete)
        # Registered directly, not as the constructor's on_set_logging_level, which
        # warns that 2026-07-28 dropped it: the handshake revisions still have it.
        add("logging/setLevel", types.SetLevelRequestParams, self._set_level)
        server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._initialized
        )
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self._roots_changed
        )
        return server

    def initialization_options(self) -> Any:
        return self.server.create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True)
        )

    async def _answer(
        self,
        ctx: Context,
        model: type[BaseModel],
        make: Callable[[], dict[str, object]],
        size: int = 0,
    ) -> HandlerResult:
        """Deliver what is pending (2026-07-28: on this request, if it asked), then
        answer: ``make()`` as the SDK's result ``model`` (which fills what each protocol
        revision adds, like 2026-07-28's ``resultType`` and cache fields), on a worker
        thread when the request carries a text of more than ``_OFF_LOOP_CHARS``.
        ``InvalidParams`` becomes the JSON-RPC error."""
        await self._deliver_on_request(ctx)

        def build() -> BaseModel:
            return model.model_validate(make())

        try:
            if size > _OFF_LOOP_CHARS:
                return await anyio.to_thread.run_sync(build)
            return build()
        except answers.InvalidParams as exc:
            raise MCPError(code=exc.code, message=exc.message) from None

    # ------------------------------------------------------------------ handlers

    async def _listed(
        self,
        ctx: Context,
        params: types.PaginatedRequestParams,
        model: type[BaseModel],
        make: Callable[[Config], dict[str, object]],
    ) -> HandlerResult:
        """A list: one page, built once per generation (an agent lists again on every
        ``list_changed``, and some on every turn)."""
        await self._deliver_on_request(ctx)
        try:
            answers.check_cursor(params.cursor)
        except answers.InvalidParams as exc:
            raise MCPError(code=exc.code, message=exc.message) from None
        config = self.config
        cached = self.lists.get(ctx.method)
        if cached is None or cached[0] is not config:
            cached = (config, model.model_validate(make(config)))
            self.lists[ctx.method] = cached
        return cached[1]

    async def _list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        return await self._listed(ctx, params, types.ListPromptsResult, answers.list_prompts)

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> HandlerResult:
        config = self.config
        arguments = params.arguments or {}
        return await self._answer(
            ctx,
            types.GetPromptResult,
            lambda: answers.get_prompt(config, params.name, arguments),
            size=len(arguments.get(answers.TEXT_ARGUMENT) or ""),
        )

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        return await self._listed(ctx, params, types.ListResourcesResult, answers.list_resources)

    async def _list_templates(
        self, ctx: Context, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        return await self._listed(
            ctx,
            params,
            types.ListResourceTemplatesResult,
            lambda _: answers.list_resource_templates(),
        )

    async def _read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> HandlerResult:
        config = self.config
        return await self._answer(
            ctx, types.ReadResourceResult, lambda: answers.read_resource(config, params.uri)
        )

    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        return await self._listed(
            ctx, params, types.ListToolsResult, lambda _: answers.list_tools()
        )

    async def _call_tool(self, ctx: Context, params: types.CallToolRequestParams) -> HandlerResult:
        config = self.config
        text = (params.arguments or {}).get("text")
        return await self._answer(
            ctx,
            types.CallToolResult,
            lambda: answers.call_tool(config, params.name, params.arguments),
            size=len(text) if isinstance(text, str) else 0,
        )

    async def _complete(self, ctx: Context, params: types.CompleteRequestParams) -> HandlerResult:
        config = self.config
        ref = params.ref.model_dump(by_alias=True)
        argument = params.argument
        return await self._answer(
            ctx,
            types.CompleteResult,
            lambda: answers.complete(config, ref, argument.name, argument.value),
        )

    async def _set_level(self, ctx: Context, params: types.SetLevelRequestParams) -> HandlerResult:
        self.min_level = params.level
        return types.EmptyResult()

    # ------------------------------------------------------------------ the handshake era

    async def _initialized(self, ctx: Context, params: types.NotificationParams) -> None:
        """The client is ready: keep its session for notifications, deliver what is
        pending, and (trusted projects only) ask for its roots."""
        self.session = ctx.session
        await self._deliver_on_session()
        await self._ask_roots()

    async def _roots_changed(self, ctx: Context, params: types.NotificationParams) -> None:
        await self._ask_roots()

    async def _ask_roots(self) -> None:
        session = self.session
        if not self.flags.trust_project or session is None:
            return
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return
        try:
            result = await session.send_request(
                types.ListRootsRequest(),
                types.ListRootsResult,
                request_read_timeout_seconds=_ROOTS_TIMEOUT,
            )
        except Exception as exc:  # a client that cannot answer keeps the folder we have
            log.warning("roots/list failed: %s", exc)
            return
        await self.live.set_root(root_folder([str(root.uri) for root in result.roots]))

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
                    f"{MESSAGE_PREFIX} skipped project settings {path}: the project is not "
                    "trusted (pass --trust-project to read it)",
                )
            )
        await self._deliver_on_session()
        if snippets_changed(previous, current):
            await self._announce_change(changed_names(previous, current))

    async def _failed(self, message: str) -> None:
        self.pending.append(("warning", message))
        await self._deliver_on_session()

    async def _announce_change(self, names: list[str]) -> None:
        # 2026-07-28: to every subscriptions/listen stream that asked for them (and, for
        # each snippet added, changed or removed, to those that follow its resource).
        await self.bus.publish(PromptsListChanged())
        await self.bus.publish(ResourcesListChanged())
        for name in names:
            await self.bus.publish(ResourceUpdated(uri=answers.snippet_uri(name)))
        # The handshake revisions: on the session.
        if self.session is not None:
            await _send(self.session, types.PromptListChangedNotification())
            await _send(self.session, types.ResourceListChangedNotification())

    # ------------------------------------------------------------------ log messages

    async def _deliver_on_session(self) -> None:
        """Handshake era: send what is pending now, at the levels the client wants."""
        session = self.session
        if session is None or not self.pending:
            return
        pending, self.pending = self.pending, []
        for level, text in pending:
            if _LEVELS.index(level) >= _LEVELS.index(self.min_level):
                await _send(session, _log_message(level, text))

    async def _deliver_on_request(self, ctx: Context) -> None:
        """2026-07-28: what is pending rides this request's stream, when its ``_meta``
        asked for that level (the only way that revision lets a log message out)."""
        if not self.pending or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        meta = (ctx.params or {}).get("_meta")
        allowed = allowed_log_levels(
            ctx.protocol_version, meta if isinstance(meta, Mapping) else None
        )
        deliver = [(level, text) for level, text in self.pending if level in allowed]
        if not deliver:
            return
        self.pending = [p for p in self.pending if p not in deliver]
        for level, text in deliver:
            await _send(ctx.session, _log_message(level, text), ctx.request_id)

    # ------------------------------------------------------------------ running

    async def serve(self) -> None:
        """Load the first generation, watch the files, serve stdin/stdout until the
        client closes them (or a signal)."""
        await self.live.reload()
        self.live.start()
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_stop_on_signal, group.cancel_scope)
                async with stdio_server() as (read_stream, write_stream):
                    await self.server.run(read_stream, write_stream, self.initialization_options())
                group.cancel_scope.cancel()
        finally:
            self.live.stop()
            self.listen.close()


def _log_message(level: types.LoggingLevel, text: str) -> types.LoggingMessageNotification:
    return types.LoggingMessageNotification(
        params=types.LoggingMessageNotificationParams(
            level=level,
            logger=answers.LOGGER,
            data=answers.wire_text(text),
        )
    )


async def _send(
    session: ServerSession,
    notification: types.ServerNotification,
    related: types.RequestId | None = None,
) -> None:
    """Send a notification; a client that has gone away is no error of ours."""
    try:
        await session.send_notification(notification, related_request_id=related)
    except Exception as exc:
        log.debug("notification %s not sent: %s", type(notification).__name__, exc)


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    """SIGINT and SIGTERM end the session; if it has not ended ``_EXIT_GRACE`` seconds
    later (a write blocked on a client that stopped reading), the process exits."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("signal %d: ending the session", signum)
            timer = threading.Timer(_EXIT_GRACE, _exit_now, args=(0,))
            timer.daemon = True
            timer.start()
            scope.cancel()
            return


def _exit_now(code: int) -> None:
    """End the process now: flush the log and the standard streams, skip joining
    threads (the SDK reads stdin on a worker thread that may never return)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        # A closed or broken stream has nothing left to flush.
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def serve(flags: McpFlags) -> int:
    """Serve one MCP session on stdin/stdout, then end the process: 0 when the client
    closed the stream or a signal came, 1 after an error."""
    code = 0
    try:
        anyio.run(SnippetsServer(flags).serve)
    except KeyboardInterrupt:
        pass
    except Exception:
        log.exception("the MCP session failed")
        code = 1
    _exit_now(code)
    return code  # pragma: no cover (os._exit does not return)
