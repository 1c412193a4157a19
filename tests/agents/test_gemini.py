"""Gemini CLI (``gemini``, pinned in tests/agents/node) with the MCP server, offline.

Gemini reads a dummy ``GEMINI_API_KEY`` and ``GOOGLE_GEMINI_BASE_URL`` (the fake model);
``~/.gemini/settings.json`` selects the API key (no auth dialog) and names the server,
``~/.gemini/trustedFolders.json`` trusts the project (Gemini starts no MCP server in an
untrusted folder). The UI runs in tmux: Gemini builds its slash commands from the
servers that answered while it started, so only the UI shows whether the snippets made it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .conftest import PATIENCE, SNIPPETS, Place, server_command
from .fake_model import Recorded, texts

#: Seconds between two tries of typing a command (see ``offered``).
RETYPE = 3.0


def write_gemini_settings(place: Place) -> None:
    folder = place.home / ".gemini"
    folder.mkdir(exist_ok=True)
    command = server_command(place.settings)
    settings = {
        "mcpServers": {
            "pi-snippets": {
                "command": command[0],
                "args": command[1:],
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
    """Types ``/NAME`` until the command menu offers it with its description.

    Gemini shows its prompt box while it still initializes ("Prompts will be queued"),
    and its menu follows the commands known at the last keystroke, so the command is
    typed again (the line cleared first) every few seconds until it is offered or
    ``PATIENCE`` runs out."""

    def shown(screen: str) -> bool:
        return any(
            line.strip().startswith(name) and description in line for line in screen.splitlines()
        )

    deadline = time.monotonic() + PATIENCE
    while True:
        ui.keys("C-u")
        ui.type("/" + name)
        try:
            ui.wait(shown, f"/{name} offered", timeout=RETYPE)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise


def clear_line(ui: Any) -> None:
    ui.keys("C-u")


def submit(ui: Any, place: Place) -> None:
    """Enter until the model gets a request: the first Enter may only take the menu's
    selection (the command, or an argument's name), as Gemini's menu does."""
    for _ in range(3):
        ui.keys("Enter")
        try:
            place.fake.wait_for(lambda _: bool(turns(place)), PATIENCE / 3)
            return
        except AssertionError:
            pass
    raise AssertionError(f"the model got no request:\n{ui.screen()}")


def turns(place: Place) -> list[Recorded]:
    return place.fake.posts(":streamGenerateContent")


def sent_texts(request: Recorded) -> list[str]:
    assert isinstance(request.body, dict)
    return list(texts(request.body.get("contents", [])))


@pytest.mark.xfail(
    reason="issue 34, open: Gemini CLI rebuilds its commands when a server connects, "
    "before that server's prompts are listed, and once more when its own start-up ends; "
    "a server must have answered initialize, prompts/list, tools/list and resources/list "
    "by then (about 0.1 s after its spawn). This one takes 0.15-0.3 s on this machine: "
    "its snippets appear after /mcp refresh (tested below).",
    strict=False,
)
def test_the_snippets_are_slash_commands_right_after_start_up(place: Place, tmux: Any) -> None:
    """Gemini builds its slash commands once, from the servers that have answered by
    then: the server must answer while Gemini starts."""
    ui = start_ui(place, tmux)
    offered(ui, "review", SNIPPETS["review"])
    clear_line(ui)
    offered(ui, "brief", SNIPPETS["brief"])


def refresh(ui: Any) -> None:
    """``/mcp refresh``: Gemini asks its servers again and rebuilds its commands."""
    ui.keys("C-u")
    ui.type("/mcp refresh")
    ui.wait(lambda s: "/mcp refresh" in s, "the command typed")
    ui.keys("Enter")
    ui.wait(lambda s: "pi-snippets - Ready" in s, "the server ready again")
    ui.keys("C-u")


def test_a_snippet_added_later_is_offered_after_mcp_refresh(place: Place, tmux: Any) -> None:
    ui = start_ui(place, tmux)
    place.write_snippets({**SNIPPETS, "later": "Added while Gemini ran."})
    refresh(ui)
    offered(ui, "later", "Added while Gemini ran.")
    offered(ui, "review", SNIPPETS["review"])


def test_the_words_after_a_command_reach_the_prompt_whole(place: Place, tmux: Any) -> None:
    """``text`` is declared required to Gemini, which then passes every word typed
    after the command (joined by single spaces); the model gets the snippet, a blank
    line and the words with their markers expanded (as a JSON string: Gemini's own
    handling of MCP prompts). ``/mcp refresh`` first: whether the commands are there
    right after start-up is the test above."""
    ui = start_ui(place, tmux)
    refresh(ui)
    offered(ui, "review", SNIPPETS["review"])
    ui.type(" then check %brief")
    ui.wait(lambda s: "check %brief" in s, "the typed words")
    submit(ui, place)
    expected = SNIPPETS["review"] + "\n\nthen check " + SNIPPETS["brief"]
    sent = sent_texts(turns(place)[0])
    assert json.dumps(expected) in sent or expected in sent, sent


def test_a_command_alone_sends_the_snippet(place: Place, tmux: Any) -> None:
    ui = start_ui(place, tmux)
    refresh(ui)
    offered(ui, "brief", SNIPPETS["brief"])
    submit(ui, place)
    sent = sent_texts(turns(place)[0])
    assert json.dumps(SNIPPETS["brief"]) in sent or SNIPPETS["brief"] in sent, sent


def test_gemini_mcp_list_shows_the_server_connected(place: Place) -> None:
    write_gemini_settings(place)
    done = place.run(str(place.bin / "gemini"), "mcp", "list", env=gemini_env(place))
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    line = next(x for x in output.splitlines() if "pi-snippets:" in x)
    assert "Connected" in line and "Disconnected" not in line, output
