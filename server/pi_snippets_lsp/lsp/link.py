"""The session's link to its client (``session.Link``), over a pygls server.

docs/lsp.md, "Messages to the user", "Completion registration" and "Watched files". The
session talks to its client only through these methods: messages, server notifications,
``workspace/configuration``, and (un)registering completion and file watchers. A request
to the client is given up after ``CLIENT_REQUEST_TIMEOUT`` seconds, never cancelled: a
client that answers late must find a live future, and one that never answers must not
stall the session.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pi_snippets_lsp.lsp.options import ClientFeatures
from pi_snippets_lsp.lsp.session import MessageKind
from pi_snippets_lsp.lsp.translate import TRIGGER_CHARACTERS

COMPLETION_REGISTRATION_ID: Final = "pi-snippets-completion"
WATCHER_REGISTRATION_ID: Final = "pi-snippets-settings-watcher"
#: Seconds a request to the client may take before the server goes on without it.
CLIENT_REQUEST_TIMEOUT: Final = 5.0

_MESSAGE_TYPES: Final = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
}


class ClientLink:
    """``session.Link`` through a pygls server: what the session may ask of its client.

    ``features`` gives the client's features once ``initialize`` has told them."""

    def __init__(self, server: LanguageServer, features: Callable[[], ClientFeatures]) -> None:
        self.server = server
        self.features = features
        #: The process serves this session alone (stdio): each generation is frozen out
        #: of the garbage collector's walks (``gc.freeze``). A full collection walks every
        #: tracked object, and a large generation (its snippets and its index) makes each
        #: walk long: a pause of whatever request met it, for objects
        #: that live until the next load (and are freed by their counts then: they hold
        #: no cycles). A daemon does not: it collects its ended sessions (``lsp.daemon``).
        self.freeze_generations = False
        #: Called after each new generation is in place (handlers whose answers depend on
        #: it and are pushed, not asked for: the unknown-marker hints).
        self.reload_listeners: list[Callable[[], None]] = []

    def show(self, kind: MessageKind, text: str) -> None:
        message_type = _MESSAGE_TYPES[kind]
        self.server.window_show_message(types.ShowMessageParams(type=message_type, message=text))
        self.server.window_log_message(types.LogMessageParams(type=message_type, message=text))

    def notify(self, method: str, params: object) -> None:
        self.server.protocol.notify(method, params)

    async def pull_configuration(self) -> object:
        return await _ask_client(
            self.server.workspace_configuration_async(
                types.ConfigurationParams(
                    items=[types.ConfigurationItem(section="piSimpleSnippets")]
                )
            )
        )

    async def register_completion(self) -> None:
        await self._register(
            COMPLETION_REGISTRATION_ID,
            types.TEXT_DOCUMENT_COMPLETION,
            types.CompletionRegistrationOptions(
                document_selector=None,
                trigger_characters=TRIGGER_CHARACTERS,
                resolve_provider=False,
            ),
        )

    async def unregister_completion(self) -> None:
        await _ask_client(
            self.server.client_unregister_capability_async(
                types.UnregistrationParams(unregisterations=[_COMPLETION_UNREGISTRATION])
            )
        )

    async def register_watchers(self, globs: Sequence[str]) -> None:
        watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in globs]
        await self._register(
            WATCHER_REGISTRATION_ID,
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )

    def reloaded(self) -> None:
        if self.freeze_generations:
            gc.freeze()
        if self.features().semantic_tokens_refresh:
            self.server.workspace_semantic_tokens_refresh(None)
        for listener in self.reload_listeners:
            listener()

    def unregister_all(self, completion: bool, watchers: bool) -> None:
        unregister = [_COMPLETION_UNREGISTRATION] if completion else []
        if watchers:
            unregister.append(_WATCHER_UNREGISTRATION)
        # Not awaited: after ``shutdown`` pygls drops every message but ``exit``.
        self.server.client_unregister_capability(
            types.UnregistrationParams(unregisterations=unregister)
        )

    async def _register(self, registration_id: str, method: str, options: Any) -> None:
        registration = types.Registration(
            id=registration_id, method=method, register_options=options
        )
        await _ask_client(
            self.server.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        )


_COMPLETION_UNREGISTRATION: Final = types.Unregistration(
    id=COMPLETION_REGISTRATION_ID, method=types.TEXT_DOCUMENT_COMPLETION
)
_WATCHER_UNREGISTRATION: Final = types.Unregistration(
    id=WATCHER_REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES
)


async def _ask_client(request: Awaitable[Any]) -> Any:
    """Await a request to the client, giving up after a while without cancelling it:
    a late answer must land on a live future, not on a cancelled one."""
    return await asyncio.wait_for(asyncio.shield(request), CLIENT_REQUEST_TIMEOUT)
