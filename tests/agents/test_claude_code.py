"""Claude Code (``claude``, pinned in tests/agents/node) with the MCP server, offline.

Claude Code reads ``ANTHROPIC_BASE_URL`` and a dummy ``ANTHROPIC_API_KEY``; its
``~/.claude.json`` says onboarding is done, the key is approved and the project folder is
trusted, so no dialog stands between start-up and the prompt box. The UI runs in tmux:
the interactive path is the one whose first request races the MCP servers' start-up.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .conftest import API_KEY, PATIENCE, SNIPPETS, Place, server_command, server_env
from .fake_model import FakeModel, Recorded, texts

MCP_TOOLS = {
    "mcp__pi-snippets__expand_snippets",
    "mcp__pi-snippets__list_snippets",
    "mcp__pi-snippets__get_snippet",
}


def claude_json(place: Place, servers: bool = True) -> dict[str, Any]:
    config: dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(place.work): {"hasTrustDialogAccepted": True, "allowedTools": []}},
    }
    if servers:
        command = server_command(place.settings)
        config["mcpServers"] = {
            "pi-snippets": {
                "type": "stdio",
                "command": command[0],
                "args": command[1:],
                "env": server_env(),
            }
        }
    return config


def write_claude_json(place: Place, servers: bool = True) -> Path:
    path = place.home / ".claude.json"
    path.write_text(json.dumps(claude_json(place, servers)), encoding="utf-8")
    return path


def claude_env(place: Place) -> dict[str, str]:
    return place.env(
        ANTHROPIC_BASE_URL=place.fake.url,
        ANTHROPIC_API_KEY=API_KEY,
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )


def turns(fake: FakeModel) -> list[Recorded]:
    """The model turns: Messages requests carrying tools (side requests, such as a title
    or a quota check, carry none)."""
    return [
        r for r in fake.posts("/v1/messages") if isinstance(r.body, dict) and r.body.get("tools")
    ]


def tool_names(request: Recorded) -> set[str]:
    assert isinstance(request.body, dict)
    return {tool.get("name", "") for tool in request.body.get("tools", [])}


def user_texts(request: Recorded) -> str:
    assert isinstance(request.body, dict)
    return "\n".join(texts(request.body.get("messages", [])))


#: Seconds between the prompt box showing and the first prompt being submitted: a
#: person reads the screen and types for at least this long. Claude Code does not wait
#: for MCP servers before its first request, so a server must be listed by then.
FIRST_WORDS = 2.0


def start_ui(place: Place, tmux: Any) -> Any:
    ui = tmux([str(place.bin / "claude")], claude_env(place))
    ui.wait(lambda s: "❯" in s and "Claude Code" in s, "the prompt box")
    time.sleep(FIRST_WORDS)
    return ui


def submit(ui: Any, text: str) -> None:
    ui.type(text)
    ui.wait(lambda s: text[:20] in s, "the typed prompt")
    ui.keys("Enter")


def test_the_mcp_tools_are_in_the_first_request(place: Place, tmux: Any) -> None:
    """Claude Code sends its first request as soon as the person submits one, without
    the tools of MCP servers still starting; a server that answers fast is in it."""
    write_claude_json(place)
    ui = start_ui(place, tmux)
    submit(ui, "Say hi")
    place.fake.wait_for(lambda _: bool(turns(place.fake)), PATIENCE)
    first = turns(place.fake)[0]
    assert tool_names(first) >= MCP_TOOLS, sorted(tool_names(first))
    assert "Say hi" in user_texts(first)


def test_claude_mcp_list_shows_the_server_connected(place: Place) -> None:
    write_claude_json(place)
    done = place.run(str(place.bin / "claude"), "mcp", "list", env=claude_env(place))
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("pi-snippets:"))
    assert "Connected" in line, done.stdout


COMMAND = "/mcp__pi-snippets__review"


def offered(ui: Any) -> None:
    """Types the command and waits for the menu to offer it (``pi-snippets:review
    (MCP)`` with its description): the server's prompts are loaded."""
    ui.type(COMMAND)
    ui.wait(
        lambda s: any(
            "pi-snippets:review" in x and SNIPPETS["review"] in x for x in s.splitlines()
        ),
        "the snippet command offered",
    )


def submit_command(ui: Any, fake: FakeModel) -> None:
    """Enter until the model gets a turn: the first Enter may only take the menu's
    selection (a prompt with arguments is inserted, not run, when selected)."""
    for _ in range(3):
        ui.keys("Enter")
        try:
            fake.wait_for(lambda _: bool(turns(fake)), PATIENCE / 3)
            return
        except AssertionError:
            pass
    raise AssertionError(f"the model got no turn:\n{ui.screen()}")


def snippet_block(request: Recorded) -> str:
    """The one text of the request's messages that holds the review snippet."""
    assert isinstance(request.body, dict)
    return next(t for t in texts(request.body.get("messages", [])) if SNIPPETS["review"] in t)


def test_a_snippet_command_alone_sends_the_snippet(place: Place, tmux: Any) -> None:
    write_claude_json(place)
    ui = start_ui(place, tmux)
    offered(ui)
    submit_command(ui, place.fake)
    assert SNIPPETS["review"] in snippet_block(turns(place.fake)[0])


def test_the_words_after_a_command_reach_the_model_whole(place: Place, tmux: Any) -> None:
    """Claude Code gives argument i the i-th word typed after the command and drops the
    rest (docs/agents-mcp.md): with the one argument ``text``, the prompt ends with the
    first word. It also sends the model everything typed after the command, as typed, in
    the ``<command-args>`` beside the prompt: so the words arrive whole. Written to notice
    the day either changes (then docs/agents-mcp.md changes)."""
    write_claude_json(place)
    ui = start_ui(place, tmux)
    offered(ui)
    ui.type(" then check %brief")
    ui.wait(lambda s: "check %brief" in s, "the typed words")
    submit_command(ui, place.fake)
    request = turns(place.fake)[0]
    block = snippet_block(request)
    assert SNIPPETS["review"] + "\n\nthen" in block
    assert "check" not in block.split(SNIPPETS["review"], 1)[1]
    assert "<command-args>then check %brief</command-args>" in user_texts(request)
