"""``snippets/expand``, ``snippets/list``, ``snippets/reload`` and ``snippets/didLoad``."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .conftest import CLIENTS, as_dict

SNIPPETS = {"use-mcp": "Use your MCP tools", "rec": "see %use-mcp"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("%use-mcp", "Use your MCP tools", id="bare-marker"),
        pytest.param("Please %use-mcp.", "Please Use your MCP tools.", id="trailing-period"),
        pytest.param("Check (%use-mcp)", "Check (Use your MCP tools)", id="wrapper"),
        pytest.param("，%use-mcp", "，Use your MCP tools", id="cjk-punctuation"),
        pytest.param("%rec", "see %use-mcp", id="no-rescan"),
        pytest.param("x%use-mcp", "x%use-mcp", id="word-before"),
        pytest.param("%unknown", "%unknown", id="unknown"),
        pytest.param("%%use-mcp", "%use-mcp", id="escape"),
        pytest.param("git log --format=%h", "git log --format=%h", id="format-string"),
        pytest.param("a\r\n%use-mcp\r\n", "a\r\nUse your MCP tools\r\n", id="crlf-kept"),
    ],
)
async def test_expand_follows_the_contract_table(shared, text, expected):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    result = as_dict(await session.request("snippets/expand", {"text": text}))
    assert result == {"text": expected, "changed": expected != text}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_expand_is_always_on_even_with_expand_on_completion(shared, kind):
    session = await shared(kind, settings={"snippets": SNIPPETS, "expandOnCompletion": True})
    result = as_dict(await session.request("snippets/expand", {"text": "%use-mcp"}))
    assert result == {"text": "Use your MCP tools", "changed": True}


async def test_expand_without_snippets_returns_text_unchanged(shared):
    session = await shared("neovim")
    result = as_dict(await session.request("snippets/expand", {"text": "%%use-mcp %x"}))
    assert result == {"text": "%%use-mcp %x", "changed": False}


async def test_expand_of_a_huge_text(shared):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    text = ("word %use-mcp, " * 200_000) + "end"
    result = as_dict(await session.request("snippets/expand", {"text": text}))
    assert result["changed"] is True
    assert result["text"] == ("word Use your MCP tools, " * 200_000) + "end"


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"text": 5}, id="text-not-a-string"),
        pytest.param({}, id="text-missing"),
        pytest.param({"text": "a", "uri": 3}, id="uri-not-a-string"),
        pytest.param(["%use-mcp"], id="params-not-an-object"),
        pytest.param(None, id="no-params"),
    ],
)
async def test_bad_expand_params_are_invalid_params_and_server_keeps_going(shared, params):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await session.request("snippets/expand", params)
    assert "snippets/expand" in str(raised.value.message)
    result = as_dict(await session.request("snippets/expand", {"text": "%use-mcp"}))
    assert result["changed"] is True


async def test_expand_with_an_unknown_uri_uses_the_default_configuration(shared):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    result = as_dict(
        await session.request("snippets/expand", {"text": "%use-mcp", "uri": "untitled:Untitled-1"})
    )
    assert result == {"text": "Use your MCP tools", "changed": True}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_list_reports_snippets_with_preview_and_source(shared, kind):
    session = await shared(
        kind, settings={"snippets": {**SNIPPETS, "Bad": "x"}, "shortcut": "CTRL+SHIFT+S"}
    )
    state = as_dict(await session.request("snippets/list", {}))
    assert state["shortcut"] == "ctrl+shift+s"
    assert state["expandOnCompletion"] is False
    assert [s["name"] for s in state["snippets"]] == ["rec", "use-mcp"]
    first = state["snippets"][0]
    assert first == {
        "name": "rec",
        "value": "see %use-mcp",
        "preview": "see %use-mcp",
        "source": str(session.settings_file),
    }
    assert len(state["warnings"]) == 1 and '"Bad" (invalid name)' in state["warnings"][0]


async def test_did_load_is_a_slim_notice_of_the_generation(start):
    session = await start(
        "neovim", settings={"snippets": {**SNIPPETS, "Bad": "x"}, "shortcut": "alt+s"}
    )
    state = as_dict(await session.request("snippets/list", {}))
    assert session.loads == [
        {
            "generation": 1,
            "count": 2,
            "shortcut": "alt+s",
            "expandOnCompletion": False,
            "warnings": state["warnings"],
        }
    ]
    assert len(state["warnings"]) == 1  # the notice carries the same problems


async def test_reload_rereads_settings_and_announces_the_new_generation(start):
    session = await start("neovim", settings={"snippets": SNIPPETS}, init={"pollInterval": 0})
    session.write_settings({"snippets": {"fresh": "new text"}, "expandOnCompletion": True})
    mark = session.mark()
    state = as_dict(await session.request("snippets/reload", {}))
    assert [s["name"] for s in state["snippets"]] == ["fresh"]
    assert (await session.next_load(mark)) == {
        "generation": 2,
        "count": 1,
        "shortcut": None,
        "expandOnCompletion": True,
        "warnings": [],
    }
    result = as_dict(await session.request("snippets/expand", {"text": "%fresh %use-mcp"}))
    assert result["text"] == "new text %use-mcp"


@pytest.mark.parametrize("kind", CLIENTS)
async def test_no_custom_notification_without_the_opt_in(start, kind):
    """Clients that do not know ``snippets/didLoad`` warn about it on every load."""
    session = await start(
        kind,
        settings={"snippets": SNIPPETS, "shortcut": "s"},
        init={"pollInterval": 0},
        opt_in=False,
    )
    session.write_settings({"snippets": {"fresh": "new text"}})
    await session.request("snippets/reload", {})
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    state = as_dict(await session.request("snippets/reload", {}))
    assert [s["name"] for s in state["snippets"]] == ["fresh"]
    assert session.loads == []
    assert session.custom_notifications() == []
    # The standard messages still arrive: the first load's warning.
    assert len(session.warnings_shown()) == 1


@pytest.mark.parametrize(
    ("notifications", "loads"),
    [
        pytest.param([], 0, id="empty-list"),
        pytest.param(["snippets/didLoad"], 1, id="opted-in"),
        pytest.param(["snippets/didload"], 0, id="wrong-case"),
    ],
)
async def test_opt_in_names_the_method_exactly(start, notifications, loads):
    session = await start(
        "plain",
        settings={"snippets": SNIPPETS},
        init={"notifications": notifications},
        opt_in=False,
    )
    await session.request("snippets/list", {})
    assert len(session.loads) == loads
