"""Shared fixtures of the integration tests: a settings folder, and the snippets they use.

Every test gets its own ``PI_CODING_AGENT_DIR`` (so nothing reads the real
``~/.pi/agent/settings.json``) and runs in an empty project folder of its own (so
nothing reads a ``.pi/settings.json`` of the checkout).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: Seconds any single wait in these tests may take before it counts as a hang.
TIMEOUT = 30.0

USE_MCP = "Use your MCP tools to find the information"
#: ``%us`` matches three of these; Pi ranks them use-mcp, focus, status (not A-Z).
SNIPPETS = {
    "focus": "Focus on the failing test first.",
    "review": "Review this change for correctness.\nList problems first.",
    "status": "Report   the status\tin one line.",
    "use-mcp": USE_MCP,
}


def write_settings(path: Path, namespace: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"piSimpleSnippets": namespace}), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An agent folder holding ``settings.json`` with ``SNIPPETS``; the cwd is a project."""
    folder = tmp_path / "agent"
    write_settings(folder / "settings.json", {"snippets": SNIPPETS})
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return folder
