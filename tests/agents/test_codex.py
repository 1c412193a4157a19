"""Codex (``codex``, pinned in tests/agents/node) with the MCP server, offline.

``$CODEX_HOME/config.toml`` names a model provider whose ``base_url`` is the fake model
(the Responses API) and the server under ``[mcp_servers.pi-snippets]``, with the
environment it needs spelled out (Codex passes an MCP server only a few variables).
Codex offers MCP servers' tools, not their prompts; ``codex exec`` (non-interactive)
runs the same turn as the UI: start the servers, then send the request with their tools.
"""

from __future__ import annotations

import json

from .conftest import PATIENCE, Place, server_command, server_env
from .fake_model import Recorded, texts

TOOLS = ("expand_snippets", "list_snippets", "get_snippet")


def toml_string(value: str) -> str:
    return json.dumps(value)


def write_codex_config(place: Place, servers: bool = True) -> dict[str, str]:
    """The config, and the environment that points Codex at it."""
    codex_home = place.home / ".codex"
    codex_home.mkdir(exist_ok=True)
    command = server_command(place.settings)
    env = ", ".join(f"{k} = {toml_string(v)}" for k, v in server_env().items())
    (codex_home / "config.toml").write_text(
        "\n".join(
            [
                'model = "gpt-5.1-codex"',
                'model_provider = "fake"',
                "",
                "[model_providers.fake]",
                'name = "fake"',
                f"base_url = {toml_string(place.fake.url + '/v1')}",
                'wire_api = "responses"',
                'env_key = "FAKE_MODEL_KEY"',
                "",
                *(
                    [
                        "[mcp_servers.pi-snippets]",
                        f"command = {toml_string(command[0])}",
                        f"args = [{', '.join(toml_string(a) for a in command[1:])}]",
                        f"env = {{ {env} }}",
                        "startup_timeout_sec = 60",
                        "",
                    ]
                    if servers
                    else ["[mcp_servers.other]", 'command = "other-mcp-server"', ""]
                ),
            ]
        ),
        encoding="utf-8",
    )
    return {"CODEX_HOME": str(codex_home), "FAKE_MODEL_KEY": "fake"}


def tool_names(request: Recorded) -> list[str]:
    assert isinstance(request.body, dict)
    names = []
    for tool in request.body.get("tools", []):
        names.append(str(tool.get("name", "")))
        names.extend(str(t.get("name", "")) for t in tool.get("tools", []) or [])
    return names


def test_codex_mcp_list_shows_the_server_enabled(place: Place) -> None:
    env = write_codex_config(place)
    done = place.run(str(place.bin / "codex"), "mcp", "list", env=env)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("pi-snippets"))
    assert "enabled" in line, done.stdout


def test_a_turn_offers_the_model_the_snippet_tools(place: Place) -> None:
    env = write_codex_config(place)
    done = place.run(
        str(place.bin / "codex"),
        "exec",
        "--skip-git-repo-check",
        "Say hi",
        timeout=PATIENCE * 2,
        env=env,
    )
    turns = place.fake.posts("/responses")
    assert turns, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    names = tool_names(turns[0])
    for tool in TOOLS:
        assert any(name.endswith(tool) for name in names), names
    assert "Say hi" in "\n".join(texts(turns[0].body))
