"""The custom requests ``snippets/expand``, ``snippets/list`` and ``snippets/reload``
(docs/lsp.md, "Custom requests"): their params checked by ``wire.messages``, every
answer after the first load (and its ``snippets/didLoad``), so a frontend sees them in
the order it sent them. Each waits for that load once, before its params are checked
(a bad request's error keeps its place too), then reads the generation as it is
(``config_for``): ``loaded_config_for`` would queue it a second time."""

from __future__ import annotations

from typing import Any

from pi_snippets_lsp.core.expansion import expand
from pi_snippets_lsp.lsp.handlers.common import params_of
from pi_snippets_lsp.lsp.offload import off_loop
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.wire.messages import (
    EXPAND,
    LIST,
    RELOAD,
    ExpandParams,
    ExpandResult,
    ListParams,
    SnippetsListing,
)


def register(server: SnippetsServer) -> None:
    @server.feature(EXPAND)
    async def snippets_expand(ls: SnippetsServer, params: object) -> dict[str, Any]:
        await ls.session.ensure_loaded()
        request = params_of(ExpandParams, params, EXPAND)
        config = ls.session.config_for(request.uri)
        result = await off_loop(ls, len(request.text), expand, request.text, config.values)
        return ExpandResult(result.text, result.changed).to_json()

    @server.feature(LIST)
    async def snippets_list(ls: SnippetsServer, params: object) -> dict[str, Any]:
        await ls.session.ensure_loaded()
        request = params_of(ListParams, params, LIST)
        return SnippetsListing.of(ls.session.config_for(request.uri)).to_json()

    @server.feature(RELOAD)
    async def snippets_reload(ls: SnippetsServer, params: object) -> dict[str, Any]:
        await ls.session.ensure_loaded()
        request = params_of(ListParams, params, RELOAD)
        await ls.session.reload()
        return SnippetsListing.of(ls.session.config_for(request.uri)).to_json()
