"""The real ``pi-snippets-lsp mcp`` server, started over stdio, for the MCP clients.

Each test gets its own settings file, home and working directory, so no real settings
leak in. The server watches the files every ``POLL`` seconds (its floor).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the official SDK (extra [test])")

REPO = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "pi_snippets_lsp", "mcp"]
POLL = 0.25
#: Seconds a test waits for something that should take a fraction of one (a reload, a
#: notification): a hang fails the test instead of the whole run.
PATIENCE = 20.0

SNIPPETS = {
    "review": "Review this code.\r\nList the bugs first.",
    "brief": "Answer in three sentences at most.",
    "refactor": "Refactor it; keep %brief as typed",
}


def settings_text(snippets: dict[str, object], **namespace: object) -> str:
    return json.dumps({"piSimpleSnippets": {"snippets": snippets, **namespace}})


@dataclass
class Setup:
    """One test's files: the settings file the server is started with, its folder."""

    root: Path
    settings: Path

    def write(self, snippets: dict[str, object], **namespace: object) -> None:
        """Replace the settings file the way an editor's atomic save does."""
        temporary = self.settings.with_suffix(".tmp")
        temporary.write_text(settings_text(snippets, **namespace), encoding="utf-8")
        os.replace(temporary, self.settings)

    def command(self, *extra: str, settings: Path | None = None) -> list[str]:
        file = self.settings if settings is None else settings
        return [*SERVER, "--settings", str(file), "--poll-interval", str(POLL), *extra]

    @property
    def env(self) -> dict[str, str]:
        """The server's environment: a home and agent folder of its own."""
        return {
            **os.environ,
            "HOME": str(self.root / "home"),
            "PI_CODING_AGENT_DIR": str(self.root / "agent"),
        }


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    made = Setup(root=tmp_path, settings=tmp_path / "settings.json")
    made.write(SNIPPETS)
    return made
