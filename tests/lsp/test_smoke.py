from __future__ import annotations

import pytest

from .conftest import CLIENTS, as_dict

SNIPPETS = {"use-mcp": "Use your MCP tools", "review": "Review $HOME ${1:x}"}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_completion_and_expand(start, kind):
    session = await start(kind, settings={"snippets": SNIPPETS})
    uri = session.open("a.md", "see %us")
    result = await session.complete(uri, 0, 7)
    assert result is not None
    assert [i.label for i in result.items] == ["%use-mcp"]
    expanded = await session.request("snippets/expand", {"text": "%use-mcp now"})
    assert as_dict(expanded) == {"text": "Use your MCP tools now", "changed": True}
