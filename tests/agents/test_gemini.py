"""Gemini CLI (``gemini``, pinned in tests/agents/node) with the MCP server, offline.

Gemini reads a dummy ``GEMINI_API_KEY`` and ``GOOGLE_GEMINI_BASE_URL`` (the fake model);
``~/.gemini/settings.json`` selects the API key (no auth dialog) and
``~/.gemini/trustedFolders.json`` trusts the project (Gemini starts no MCP server in an
untrusted folder). Then the real ``pi-snippets-lsp setup gemini`` sets Gemini up as a
person's does: it writes our extension and links it with Gemini's own ``gemini
extensions link``. The snippets are the user's own settings
(``$PI_CODING_AGENT_DIR/settings.json``), which the server reads by default.

The UI runs in tmux: Gemini builds its slash commands when its start-up ends and again
when an extension has started (after that extension's servers are listed), so only the
UI shows whether the snippets made it.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from .conftest import PATIENCE, SNIPPETS, Place
from .fake_model import Recorded, texts

#: Seconds between two tries of typing a command (see ``offered``).
RETYPE = 3.0
#: How many times the start-up test starts Gemini afresh: the race it guards against
#: is lost now and then, not every time (the count of 10 runs is in the commit).
STARTS = 3
SETUP = [sys.executable, "-m", "pi_snippets_lsp", "setup", "gemini"]


def gemini_env(place: Place) -> dict[str, str]:
    return place.env(GEMINI_API_KEY="fake-gemini-key", GOOGLE_GEMINI_BASE_URL=place.fake.url)


def write_snippets(place: Place, snippets: dict[str, str]) -> None:
    """The user's snippets, where the server reads them without ``--settings``."""
    path = place.root / "agent" / "settings.json"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"piSimpleSnippets": {"snippets": snippets}}), "utf-8")
    temporary.replace(path)


def prepare_gemini(place: Place) -> None:
    """Gemini's own settings (the API key, no auth dialog) and the trusted project."""
    folder = place.home / ".gemini"
    folder.mkdir(exist_ok=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    trusted = {str(place.work): "TRUST_FOLDER"}
    (folder / "trustedFolders.json").write_text(json.dumps(trusted), encoding="utf-8")
    write_snippets(place, SNIPPETS)


def setup_gemini(place: Place, *flags: str) -> str:
    """``pi-snippets-lsp setup gemini``, run as a person runs it (in the project)."""
    prepare_gemini(place)
    done = place.run(*SETUP, *flags, env=gemini_env(place))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def start_ui(place: Place, tmux: Any) -> Any:
    ui = tmux([str(place.bin / "gemini")], gemini_env(place))
    ui.wait(lambda s: "Type your message" in s, "the prompt box")
    return ui


def offered(ui: Any, name: str, description: str) -> None:
    """Types ``/NAME`` until the command menu offers it with its description.

    Gemini shows its prompt box while it still initializes ("Prompts will be queued"),
    and its menu follows the commands known at the last keystroke, so the command is
    typed again (the line cleared first) every few seconds until it is offered or
    ``PATIENCE`` runs out. Nothing else happens meanwhile: a command offered here was
    offered without ``/mcp refresh``."""

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


def test_after_setup_the_snippets_are_slash_commands_right_after_start_up(
    place: Place, tmux: Any
) -> None:
    """``setup gemini`` links our extension: Gemini rebuilds its slash commands once
    an extension has started, which is after its servers' prompts are listed, so the
    snippets are offered at every start, however slowly the server answers. (A server
    of ``settings.json`` must answer before Gemini's own start-up ends: a race.)"""
    said = setup_gemini(place)
    assert "linked" in said and "slash command" in said, said
    for _ in range(STARTS):
        ui = start_ui(place, tmux)
        offered(ui, "review", SNIPPETS["review"])
        clear_line(ui)
        offered(ui, "brief", SNIPPETS["brief"])
        ui.close()


def refresh(ui: Any) -> None:
    """``/mcp refresh``: Gemini asks its servers again and rebuilds its commands."""
    ui.keys("C-u")
    ui.type("/mcp refresh")
    ui.wait(lambda s: "/mcp refresh" in s, "the command typed")
    ui.keys("Enter")
    ui.wait(
        lambda s: any("pi-snippets" in x and "- Ready" in x for x in s.splitlines()),
        "the server ready again",
    )
    ui.keys("C-u")


def test_a_snippet_added_later_is_offered_after_mcp_refresh(place: Place, tmux: Any) -> None:
    """Gemini takes in the server's ``prompts/list_changed`` but does not rebuild its
    slash commands on it: a snippet added while it runs is offered after ``/mcp
    refresh`` (docs/agents-mcp.md)."""
    setup_gemini(place)
    ui = start_ui(place, tmux)
    offered(ui, "review", SNIPPETS["review"])
    write_snippets(place, {**SNIPPETS, "later": "Added while Gemini ran."})
    refresh(ui)
    offered(ui, "later", "Added while Gemini ran.")
    offered(ui, "review", SNIPPETS["review"])


def test_the_words_after_a_command_reach_the_prompt_whole(place: Place, tmux: Any) -> None:
    """``text`` is declared required to Gemini, which then passes every word typed
    after the command (joined by single spaces); the model gets the snippet, a blank
    line and the words with their markers expanded (as a JSON string: Gemini's own
    handling of MCP prompts)."""
    setup_gemini(place)
    ui = start_ui(place, tmux)
    offered(ui, "review", SNIPPETS["review"])
    ui.type(" then check %brief")
    ui.wait(lambda s: "check %brief" in s, "the typed words")
    submit(ui, place)
    expected = SNIPPETS["review"] + "\n\nthen check " + SNIPPETS["brief"]
    sent = sent_texts(turns(place)[0])
    assert json.dumps(expected) in sent or expected in sent, sent


def test_a_command_alone_sends_the_snippet(place: Place, tmux: Any) -> None:
    setup_gemini(place)
    ui = start_ui(place, tmux)
    offered(ui, "brief", SNIPPETS["brief"])
    submit(ui, place)
    sent = sent_texts(turns(place)[0])
    assert json.dumps(SNIPPETS["brief"]) in sent or SNIPPETS["brief"] in sent, sent


def test_gemini_mcp_list_shows_the_server_connected(place: Place) -> None:
    setup_gemini(place)
    done = place.run(str(place.bin / "gemini"), "mcp", "list", env=gemini_env(place))
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    line = next(x for x in output.splitlines() if "pi-snippets" in x and "Connected" in x)
    assert "Disconnected" not in line, output


def test_a_project_setup_offers_the_snippets_after_mcp_refresh(place: Place, tmux: Any) -> None:
    """A project has no extensions: ``setup gemini --project`` writes the server into
    ``.gemini/settings.json``, whose prompts Gemini offers when the server answered
    before its own start-up ended, and after ``/mcp refresh`` in any case (what
    ``setup`` tells the person)."""
    said = setup_gemini(place, "--project")
    assert "/mcp refresh" in said, said
    ui = start_ui(place, tmux)
    refresh(ui)
    offered(ui, "review", SNIPPETS["review"])
