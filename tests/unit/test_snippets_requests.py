"""The custom requests' handlers against a counting session: each waits for the first
generation once (docs/lsp.md, "Custom requests").

The real server's answers and their order are tested in tests/lsp/test_custom_requests.py;
here, only how often a request waits: ``Session.ensure_loaded`` queues the caller behind
every request sent before it, so a second call per request is a second turn in that queue
for nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from pi_snippets_lsp.core.config import Layer, validate_layers
from pi_snippets_lsp.lsp.setup import create_server
from pi_snippets_lsp.wire.messages import EXPAND, LIST, RELOAD


@pytest.mark.parametrize(
    ("method", "params", "answer"),
    [
        pytest.param(EXPAND, {"text": "%a b"}, {"text": "A b", "changed": True}, id="expand"),
        pytest.param(LIST, {}, None, id="list"),
        pytest.param(RELOAD, {}, None, id="reload"),
    ],
)
async def test_a_request_waits_for_the_first_load_once(
    monkeypatch: pytest.MonkeyPatch, method: str, params: dict[str, Any], answer: object
) -> None:
    server = create_server()
    session = server.session
    config = validate_layers(
        [Layer(source="s.json", settings={"piSimpleSnippets": {"snippets": {"a": "A"}}})]
    )
    waits: list[str] = []

    async def ensure_loaded() -> None:
        waits.append(method)
        session.live.configs = {session.folder_of(None): config}

    async def reload(**kwargs: object) -> object:
        return config

    monkeypatch.setattr(session, "ensure_loaded", ensure_loaded)
    monkeypatch.setattr(session, "reload", reload)
    handler = server.protocol.fm.features[method]
    result = await handler(params)
    assert waits == [method]
    if answer is not None:
        assert result == answer
    else:
        assert [s["name"] for s in result["snippets"]] == ["a"]
