"""The packaged forms for agents: the Claude Code plugin and the Gemini CLI extension.

docs/agents.md, "Plugin and extension". Each is checked against the format its agent
loads (Claude Code: ``.claude-plugin/plugin.json``, ``hooks/hooks.json`` beside it, a
``.claude-plugin/marketplace.json`` that lists it; Gemini CLI: ``gemini-extension.json``
with ``name`` and ``version`` and ``hooks/hooks.json`` whose ``hooks`` is an object), and
against what ``setup`` writes: the same MCP server and the same hook command (for
Gemini CLI, the very files ``setup gemini`` writes and links).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pi_snippets_lsp.agents.hook import HOOK_AGENTS
from pi_snippets_lsp.agents.setup import SERVER_NAME, Place, edits_for, hook_recognizer
from pi_snippets_lsp.wire.version import VERSION

REPO = Path(__file__).resolve().parents[2]
CLAUDE = REPO / "editors" / "claude-code"
GEMINI = REPO / "editors" / "gemini"
SERVER = {"command": "pi-snippets-lsp", "args": ["mcp"]}


def load(path: Path) -> dict[str, object]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def setup_wrote(agent: str, tmp_path: Path) -> dict[str, str]:
    """The texts ``setup AGENT`` writes into empty files, by file name."""
    place = Place(home=tmp_path, project=tmp_path, env={}, platform="linux", version=VERSION)
    texts: dict[str, str] = {}
    for edit in edits_for(agent, False, place, ["pi-snippets-lsp"]):
        if not edit.retired:  # an older setup's entries, which setup takes back
            texts[edit.path.name] = edit.add(texts.get(edit.path.name, ""))
    return texts


def only_hook(hooks: object, event: str) -> dict[str, object]:
    assert isinstance(hooks, dict) and set(hooks) == {event}
    (group,) = hooks[event]
    (entry,) = group["hooks"]
    assert isinstance(entry, dict)
    return entry


def test_the_claude_code_plugin_is_a_plugin_claude_code_loads(tmp_path: Path) -> None:
    manifest = load(CLAUDE / ".claude-plugin" / "plugin.json")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", str(manifest["name"]))
    assert manifest["version"] == VERSION
    assert manifest["mcpServers"] == {SERVER_NAME: {"type": "stdio", **SERVER}}
    # Only the manifest sits in .claude-plugin; the hooks are at the plugin's root.
    assert sorted(p.name for p in (CLAUDE / ".claude-plugin").iterdir()) == ["plugin.json"]
    hooks = load(CLAUDE / "hooks" / "hooks.json")
    entry = only_hook(hooks["hooks"], "UserPromptSubmit")
    assert "hooks" not in manifest  # hooks/hooks.json loads by default; naming it doubles it
    # The same hook and server as `setup claude-code` writes.
    written = setup_wrote("claude-code", tmp_path)
    assert only_hook(json.loads(written["settings.json"])["hooks"], "UserPromptSubmit") == entry
    assert json.loads(written[".claude.json"])["mcpServers"] == manifest["mcpServers"]
    assert hook_recognizer("claude-code")({"hooks": [entry]})


def test_the_repository_is_a_claude_code_marketplace_listing_the_plugin() -> None:
    marketplace = load(REPO / ".claude-plugin" / "marketplace.json")
    assert marketplace["name"] and marketplace["owner"]
    (plugin,) = marketplace["plugins"]  # type: ignore[misc]
    assert plugin["name"] == load(CLAUDE / ".claude-plugin" / "plugin.json")["name"]
    assert (REPO / plugin["source"]).resolve() == CLAUDE


def test_the_gemini_extension_is_an_extension_gemini_cli_loads(tmp_path: Path) -> None:
    manifest = load(GEMINI / "gemini-extension.json")
    assert re.fullmatch(r"[a-zA-Z0-9-]+", str(manifest["name"]))
    assert manifest["version"] == VERSION
    assert manifest["mcpServers"] == {SERVER_NAME: SERVER}
    hooks = load(GEMINI / "hooks" / "hooks.json")
    only_hook(hooks["hooks"], "BeforeModel")
    # `setup gemini` writes and links this very extension (with the command that
    # starts the running pi-snippets-lsp: here the bare name), byte for byte.
    written = setup_wrote("gemini", tmp_path)
    assert written["gemini-extension.json"] == (GEMINI / "gemini-extension.json").read_text()
    assert written["hooks.json"] == (GEMINI / "hooks" / "hooks.json").read_text()
    assert "settings.json" not in written  # Gemini's settings get nothing of ours


def test_every_packaged_hook_names_an_agent_the_hook_command_knows() -> None:
    for path in (CLAUDE / "hooks" / "hooks.json", GEMINI / "hooks" / "hooks.json"):
        for groups in load(path)["hooks"].values():  # type: ignore[attr-defined]
            for group in groups:
                for entry in group["hooks"]:
                    *_, agent = entry["command"].split()
                    assert agent in HOOK_AGENTS
