"""``initialize``, ``initialized`` and ``shutdown`` (docs/lsp.md, "Lifecycle"); ``exit``
is the protocol's (``lsp.server``): it ends the session, not the process."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from pi_snippets_lsp.lsp.link import CLIENT_REQUEST_TIMEOUT
from pi_snippets_lsp.lsp.options import ClientFeatures
from pi_snippets_lsp.lsp.server import SnippetsServer


def register(server: SnippetsServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: SnippetsServer, params: types.InitializeParams) -> None:
        ls.session.initialize(
            params.initialization_options,
            ClientFeatures.from_json(ls.protocol.client_capabilities_json),
            ls.folder_paths(),
            ls.workspace.root_path,
        )

    @server.feature(types.INITIALIZED)
    async def initialized(ls: SnippetsServer, params: types.InitializedParams) -> None:
        await ls.session.start()

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: SnippetsServer, params: None) -> None:
        # Every request received before ``shutdown`` is answered before it (pygls would
        # cancel what is still running), so a client that pipelines its last requests
        # and ``shutdown`` gets every answer.
        if pending := ls.protocol.pending_handlers():
            await asyncio.wait(pending, timeout=CLIENT_REQUEST_TIMEOUT + 1)
        ls.session.stop()
