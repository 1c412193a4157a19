"""``pi-snippets-lsp setup AGENT`` and ``hook AGENT`` with the real agents (issue 35).

Each test sets up an agent in its own HOME with the real ``setup`` command (run as
``python -m pi_snippets_lsp``, so the entries it writes start this checkout), then runs a
real turn against the fake model and asserts on what the model received: ``Please
%review`` arrives expanded (a rewrite) or with the snippet as context, while ``%%review``,
``x%review`` and an unknown marker stay as typed, and a broken settings file loses no
prompt. ``--remove`` leaves every other byte of the agent's files as it was.
The snippets are the user's own settings (``$PI_CODING_AGENT_DIR/settings.json``): what
the entries ``setup`` writes read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import PATIENCE, SNIPPETS, Place
from .fake_model import texts
from .test_claude_code import (
    claude_env,
    claude_json,
    offered,
    snippet_block,
    start_ui,
    submit_command,
    turns,
    user_texts,
)
from .test_codex import write_codex_config
from .test_gemini import gemini_env

SETUP = [sys.executable, "-m", "pi_snippets_lsp", "setup"]
OTHER_SERVER = {"command": "other-mcp-server", "args": ["--flag"]}


def user_settings(place: Place, text: str | None = None) -> Path:
    path = place.root / "agent" / "settings.json"
    path.write_text(
        text if text is not None else json.dumps({"piSimpleSnippets": {"snippets": SNIPPETS}}),
        encoding="utf-8",
    )
    return path


def setup(place: Place, agent: str, *flags: str, env: dict[str, str] | None = None) -> None:
    done = place.run(*SETUP, agent, *flags, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def claude_home(place: Place) -> dict[Path, bytes]:
    """A Claude Code HOME with the user's own entries, before ``setup``."""
    config = claude_json(place, servers=False)
    config["mcpServers"] = {"other": {"type": "stdio", **OTHER_SERVER}}
    files = {
        place.home / ".claude.json": json.dumps(config, indent=2).encode(),
        place.home / ".claude" / "settings.json": b'{\n  "theme": "dark",\n  "hooks": {\n'
        b'    "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]\n  }\n}\n',
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def claude_turn(place: Place, prompt: str) -> str:
    """One ``claude -p`` turn (hooks run there as in the UI); what the model got."""
    done = place.run(
        str(place.bin / "claude"), "-p", prompt, timeout=PATIENCE * 2, env=claude_env(place)
    )
    found = turns(place.fake)
    assert found, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    request = found[-1]
    return user_texts(request) + "\n" + "\n".join(texts(request.body))


def test_setup_claude_code_connects_the_server(place: Place) -> None:
    user_settings(place)
    claude_home(place)
    setup(place, "claude-code")
    done = place.run(str(place.bin / "claude"), "mcp", "list", env=claude_env(place))
    line = next(x for x in done.stdout.splitlines() if x.startswith("pi-snippets:"))
    assert "Connected" in line, done.stdout


def test_claude_code_expands_a_marker_in_the_prompt(place: Place) -> None:
    user_settings(place)
    claude_home(place)
    setup(place, "claude-code")
    sent = claude_turn(place, "Please %review the change")
    assert "Please %review the change" in sent or "Please Review this diff" in sent
    assert SNIPPETS["review"] in sent


@pytest.mark.parametrize("prompt", ["Please %%review it", "Please x%review it", "Please %nope it"])
def test_claude_code_leaves_escaped_glued_and_unknown_markers(place: Place, prompt: str) -> None:
    user_settings(place)
    claude_home(place)
    setup(place, "claude-code")
    sent = claude_turn(place, prompt)
    assert prompt in sent
    assert SNIPPETS["review"] not in sent


def test_claude_code_a_broken_settings_file_loses_no_prompt(place: Place) -> None:
    user_settings(place, '{"piSimpleSnippets": {"snippets": ')
    claude_home(place)
    setup(place, "claude-code")
    sent = claude_turn(place, "Please %review the change")
    assert "Please %review the change" in sent


def test_claude_code_a_command_and_markers_after_it_arrive_expanded(
    place: Place, tmux: Any
) -> None:
    """``/pi-snippets:review then check %brief`` after ``setup claude-code``: the prompt
    (which Claude Code gives only the first word) holds the snippet, the words arrive
    whole as typed in ``<command-args>``, and the hook (which gets the typed line) adds
    them with ``%brief`` expanded."""
    user_settings(place)
    claude_home(place)
    setup(place, "claude-code")
    ui = start_ui(place, tmux)
    offered(ui)
    ui.type(" then check %brief")
    ui.wait(lambda s: "check %brief" in s, "the typed words")
    submit_command(ui, place.fake)
    request = turns(place.fake)[0]
    assert SNIPPETS["review"] in snippet_block(request)
    assert "<command-args>then check %brief</command-args>" in user_texts(request)
    everything = json.dumps(request.body)
    assert json.dumps(f"then check {SNIPPETS['brief']}")[1:-1] in everything


def test_setup_claude_code_remove_restores_every_byte(place: Place) -> None:
    user_settings(place)
    before = claude_home(place)
    setup(place, "claude-code")
    assert any(path.read_bytes() != data for path, data in before.items())
    setup(place, "claude-code", "--remove")
    for path, data in before.items():
        assert path.read_bytes() == data, path
    done = place.run(str(place.bin / "claude"), "mcp", "list", env=claude_env(place))
    assert "pi-snippets" not in done.stdout


def test_setup_gemini_connects_the_server_and_remove_restores(place: Place) -> None:
    user_settings(place)
    folder = place.home / ".gemini"
    folder.mkdir()
    settings = folder / "settings.json"
    original = json.dumps(
        {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "mcpServers": {"other": OTHER_SERVER},
        },
        indent=2,
    ).encode()
    settings.write_bytes(original)
    trusted = folder / "trustedFolders.json"
    trusted.write_text(json.dumps({str(place.work): "TRUST_FOLDER"}), encoding="utf-8")
    setup(place, "gemini")
    done = place.run(str(place.bin / "gemini"), "mcp", "list", env=gemini_env(place))
    line = next(x for x in (done.stdout + done.stderr).splitlines() if "pi-snippets" in x)
    assert "Connected" in line and "Disconnected" not in line, done.stdout + done.stderr
    setup(place, "gemini", "--remove")
    assert settings.read_bytes() == original


def test_setup_codex_enables_the_server_and_remove_restores(place: Place) -> None:
    user_settings(place)
    env = write_codex_config(place, servers=False)
    config = place.home / ".codex" / "config.toml"
    original = config.read_bytes()
    setup(place, "codex", env=env)
    done = place.run(str(place.bin / "codex"), "mcp", "list", env=env)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("pi-snippets"))
    assert "enabled" in line, done.stdout
    setup(place, "codex", "--remove", env=env)
    assert config.read_bytes() == original
