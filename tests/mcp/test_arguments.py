"""How each client is told the ``text`` argument, end to end (docs/agents-mcp.md).

Gemini CLI fills only required arguments from the words after a slash command, Claude
Code fills arguments word by word and refuses a command whose required argument got
none: the server declares ``text`` required to Gemini CLI alone, by the name the client
gives itself, in both protocol eras.
"""

from __future__ import annotations

import sys

import pytest

from .conftest import SNIPPETS, Setup
from .test_failed_reads import Lines

GEMINI = "gemini-cli-mcp-client"


def required_flags(setup: Setup, client: str, version: str = "2025-06-18") -> set[bool]:
    server = Lines(
        [sys.executable, "-m", "pi_snippets_lsp", "mcp", "--settings", str(setup.settings)],
        env=setup.env,
        cwd=str(setup.root / "work"),
    )
    try:
        server.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"},
            },
        )
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        prompts = server.request("prompts/list", {})["prompts"]
        assert sorted(p["name"] for p in prompts) == sorted(SNIPPETS)
        return {p["arguments"][0]["required"] for p in prompts}
    finally:
        server.close()


@pytest.mark.parametrize(
    ("client", "required"),
    [
        pytest.param(GEMINI, True, id="gemini-cli"),
        pytest.param("claude-code", False, id="claude-code"),
        pytest.param("mcp", False, id="python-sdk"),
    ],
)
def test_text_is_required_to_gemini_cli_alone(setup: Setup, client: str, required: bool) -> None:
    assert required_flags(setup, client) == {required}
