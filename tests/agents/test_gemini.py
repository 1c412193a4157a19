"""Gemini CLI (``gemini``, pinned in tests/agents/node) with the MCP server, offline.

Gemini reads a dummy ``GEMINI_API_KEY`` and ``GOOGLE_GEMINI_BASE_URL`` (the fake model);
``~/.gemini/settings.json`` selects the API key (no auth dialog) and names the server,
``~/.gemini/trustedFolders.json`` trusts the project (Gemini starts no MCP server in an
untrusted folder). The UI runs in tmux: Gemini builds its slash commands from the
servers that answered while it started, so only the UI shows whether the snippets made it.
"""

from __future__ import annotations

import json
from typing import Any

from .conftest import PATIENCE, SNIPPETS, Place, server_command, server_env
from .fake_model import Recorded, texts


def write_gemini_settings(place: Place) -> None:
    folder = place.home / ".gemini"
    folder.mkdir(exist_ok=True)
    command = server_command(place.settings)
    settings = {
        "mcpServers": {
            "pi-snippets": {
                "command": command[0],
                "args": command[1:],
                "env": server_env(),
                "timeout": 30000,
            }
        },
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    }
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    trusted = {str(place.work): "TRUST_FOLDER"}
    (folder / "trustedFolders.json").write_text(json.dumps(trusted), encoding="utf-8")


def gemini_env(place: Place) -> dict[str, str]:
    return place.env(GEMINI_API_KEY="fake-gemini-key", GOOGLE_GEMINI_BASE_URL=place.fake.url)


def start_ui(place: Place, tmux: Any) -> Any:
    write_gemini_settings(place)
    ui = tmux([str(place.bin / "gemini")], gemini_env(place))
    ui.wait(lambda s: "Type your message" in s, "the prompt box")
    return ui


def offered(ui: Any, name: str, description: str) -> None:
    """Types ``/NAME`` and waits for the command menu to offer it with its description."""
    ui.type("/" + name)
    ui.wait(
        lambda s: any(
            line.strip().startswith(name) and description in line for line in s.splitlines()
        ),
        f"/{name} offered",
    )


def clear_line(ui: Any) -> None:
    ui.keys("C-u")


def turns(place: Place) -> list[Recorded]:
    return place.fake.posts(":streamGenerateContent")


def sent_texts(request: Recorded) -> list[str]:
    assert isinstance(request.body, dict)
    return list(texts(request.body.get("contents", [])))


def test_the_snippets_are_slash_commands_right_after_start_up(place: Place, tmux: Any) -> None:
    """Gemini builds its slash commands once, from the servers that have answered by
    then: the server must answer while Gemini starts."""
    ui = start_ui(place, tmux)
    offered(ui, "review", SNIPPETS["review"])
    clear_line(ui)
    offered(ui, "brief", SNIPPETS["brief"])


def test_a_snippet_added_later_is_offered_after_mcp_refresh(place: Place, tmux: Any) -> None:
    ui = start_ui(place, tmux)
    offered(ui, "review", SNIPPETS["review"])
    clear_line(ui)
    place.write_snippets({**SNIPPETS, "later": "Added while Gemini ran."})
    ui.type("/mcp refresh")
    ui.keys("Enter")
    ui.wait(lambda s: "pi-snippets" in s and ("Ready" in s or "refresh" in s.lower()), "refresh")
    offered(ui, "later", "Added while Gemini ran.")


def test_the_words_after_a_command_reach_the_prompt_whole(place: Place, tmux: Any) -> None:
    """``text`` is declared required to Gemini, which then passes every word typed
    after the command (joined by single spaces); the model gets the snippet, a blank
    line and the words with their markers expanded (as a JSON string: Gemini's own
    handling of MCP prompts)."""
    ui = start_ui(place, tmux)
    offered(ui, "review", SNIPPETS["review"])
    ui.type(" then check %brief")
    ui.wait(lambda s: "check %brief" in s, "the typed words")
    ui.keys("Enter")
    place.fake.wait_for(lambda _: bool(turns(place)), PATIENCE)
    expected = SNIPPETS["review"] + "\n\nthen check " + SNIPPETS["brief"]
    sent = sent_texts(turns(place)[0])
    assert json.dumps(expected) in sent or expected in sent, sent


def test_a_command_alone_sends_the_snippet(place: Place, tmux: Any) -> None:
    ui = start_ui(place, tmux)
    offered(ui, "brief", SNIPPETS["brief"])
    ui.keys("Escape")
    ui.wait(lambda s: "/brief" in s, "the command typed")
    ui.keys("Enter")
    place.fake.wait_for(lambda _: bool(turns(place)), PATIENCE)
    sent = sent_texts(turns(place)[0])
    assert json.dumps(SNIPPETS["brief"]) in sent or SNIPPETS["brief"] in sent, sent


def test_gemini_mcp_list_shows_the_server_connected(place: Place) -> None:
    write_gemini_settings(place)
    done = place.run(str(place.bin / "gemini"), "mcp", "list", **gemini_env(place))
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    line = next(x for x in output.splitlines() if "pi-snippets" in x)
    assert "Connected" in line and "Disconnected" not in line, output
