"""The session's link to its client (``session.Link``), over pygls.

docs/lsp.md, "Messages to the user", "Completion registration" and "Watched files". The
session talks to its client only through these methods: messages, server notifications,
``workspace/configuration``, and (un)registering completion and file watchers. A request
to the client is given up after ``CLIENT_REQUEST_TIMEOUT`` seconds, never cancelled: a
client that answers late must find a live future, and one that never answers must not
stall the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, Final

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pi_snippets_lsp.lsp.session import MessageKind, Session
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


class ClientLink(LanguageServer):
    """``session.Link`` for a pygls server (``server.SnippetsServer``)."""

    session: Session

    def show(self, kind: MessageKind, text: str) -> None:
        message_type = _MESSAGE_TYPES[kind]
        self.window_show_message(types.ShowMessageParams(type=message_type, message=text))
        self.window_log_message(types.LogMessageParams(type=message_type, message=text))

    def notify(self, method: str, params: object) -> None:
        self.protocol.notify(method, params)

    async def pull_configuration(self) -> object:
        return await _ask_client(
            self.workspace_configuration_async(
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
            self.client_unregister_capability_async(
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
        if self.session.features.semantic_tokens_refresh:
            self.workspace_semantic_tokens_refresh(None)

    def unregister_all(self, completion: bool, watchers: bool) -> None:
        unregister = [_COMPLETION_UNREGISTRATION] if completion else []
        if watchers:
            unregister.append(_WATCHER_UNREGISTRATION)
        # Not awaited: after ``shutdown`` pygls drops every message but ``exit``.
        self.client_unregister_capability(types.UnregistrationParams(unregisterations=unregister))

    async def _register(self, registration_id: str, method: str, options: Any) -> None:
        registration = types.Registration(
            id=registration_id, method=method, register_options=options
        )
        await _ask_client(
            self.client_register_capability_async(
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
