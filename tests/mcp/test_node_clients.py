"""Clients nobody on this project wrote: the MCP Inspector CLI and the TypeScript SDK.

Both install from npm, pinned by tests/mcp/node/package-lock.json, through
tests/mcp/node/setup.sh (a no-op once node_modules matches the lock file). Without node
and npm the tests are skipped on a developer's machine and fail in CI (``CI`` set).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import SNIPPETS, Setup

NODE = Path(__file__).parent / "node"
INSPECTOR = NODE / "node_modules" / ".bin" / "mcp-inspector"
#: ``npm ci`` may download the packages first.
INSTALL_TIMEOUT = 900
TIMEOUT = 120


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def node_clients() -> Path:
    missing = [tool for tool in ("node", "npm", "bash") if shutil.which(tool) is None]
    if missing:
        message = f"the Node MCP clients need {', '.join(missing)}"
        if in_ci():
            pytest.fail(message + " in CI")
        pytest.skip(message)
    install = subprocess.run(
        ["bash", str(NODE / "setup.sh")], capture_output=True, text=True, timeout=INSTALL_TIMEOUT
    )
    assert install.returncode == 0, f"npm ci failed:\n{install.stderr}"
    return NODE


def inspector(setup: Setup, *method: str) -> subprocess.CompletedProcess[str]:
    """``mcp-inspector --cli SERVER... --method ...``: it starts the server itself."""
    command = [
        str(INSPECTOR),
        "--cli",
        sys.executable,
        "-m",
        "pi_snippets_lsp",
        "mcp",
        "--settings",
        str(setup.settings),
        *method,
    ]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=setup.env,
        cwd=setup.root / "work",
    )


def inspected(setup: Setup, *method: str) -> Any:
    done = inspector(setup, *method)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


def test_the_inspector_lists_and_gets_prompts(node_clients: Path, setup: Setup) -> None:
    prompts = inspected(setup, "--method", "prompts/list")["prompts"]
    assert [(p["name"], p["title"]) for p in prompts] == [(n, f"%{n}") for n in sorted(SNIPPETS)]
    assert prompts[2]["arguments"] == [
        {
            "name": "text",
            "description": "text after the snippet; its %markers are expanded",
            "required": False,
        }
    ]
    got = inspected(
        setup,
        "--method",
        "prompts/get",
        "--prompt-name",
        "review",
        "--prompt-args",
        "text=then %brief",
    )
    assert got["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": SNIPPETS["review"] + "\n\nthen " + SNIPPETS["brief"],
            },
        }
    ]


def test_the_inspector_reads_resources(node_clients: Path, setup: Setup) -> None:
    resources = inspected(setup, "--method", "resources/list")["resources"]
    assert [r["uri"] for r in resources] == [f"snippet://{n}" for n in sorted(SNIPPETS)]
    read = inspected(setup, "--method", "resources/read", "--uri", "snippet://review")
    assert read["contents"] == [
        {"uri": "snippet://review", "mimeType": "text/plain", "text": SNIPPETS["review"]}
    ]


def test_the_inspector_calls_tools(node_clients: Path, setup: Setup) -> None:
    tools = inspected(setup, "--method", "tools/list")["tools"]
    assert {t["name"]: t["annotations"]["readOnlyHint"] for t in tools} == {
        "expand_snippets": True,
        "list_snippets": True,
        "get_snippet": True,
    }
    called = inspected(
        setup,
        "--method",
        "tools/call",
        "--tool-name",
        "expand_snippets",
        "--tool-arg",
        "text=%brief and %%brief",
    )
    expanded = SNIPPETS["brief"] + " and %brief"
    assert called["structuredContent"] == {"text": expanded, "changed": True}
    assert called["content"] == [{"type": "text", "text": expanded}]
    listed = inspected(setup, "--method", "tools/call", "--tool-name", "list_snippets")
    assert [s["name"] for s in listed["structuredContent"]["snippets"]] == sorted(SNIPPETS)


def test_the_inspector_reports_an_unknown_prompt(node_clients: Path, setup: Setup) -> None:
    done = inspector(setup, "--method", "prompts/get", "--prompt-name", "revew")
    assert done.returncode != 0
    assert 'MCP error -32602: unknown snippet "revew"; closest: review' in done.stderr + done.stdout


def test_the_typescript_sdk_sees_a_save_and_lists_again(node_clients: Path, setup: Setup) -> None:
    done = subprocess.run(
        ["node", str(NODE / "live.mjs"), str(setup.settings), sys.executable],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=setup.env,
        cwd=setup.root / "work",
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["serverInfo"]["name"] == "pi-snippets"
    assert report["capabilities"]["prompts"] == {"listChanged": True}
    assert report["capabilities"]["resources"]["listChanged"] is True
    assert [p["name"] for p in report["prompts"]] == sorted(SNIPPETS)
    (message,) = report["prompt"]["messages"]
    assert message["content"]["text"] == SNIPPETS["review"] + "\n\nthen " + SNIPPETS["brief"]
    assert report["completion"]["values"] == ["see %refactor", "see %review", "see %brief"]
    assert report["expanded"]["structuredContent"] == {
        "text": SNIPPETS["brief"] + ", %brief",
        "changed": True,
    }
    assert report["resource"][0]["text"] == SNIPPETS["brief"]
    assert report["unknown"]["code"] == -32602
    # After each save: the list_changed notifications, then the new list.
    assert report["promptsAfterSave"] == ["added", "brief", "review"]
    assert report["promptsAfterSecondSave"] == ["review"]
    notifications = report["notifications"]
    assert len(notifications["prompts"]) == len(notifications["resources"]) == 2
    (warning,) = notifications["message"]
    assert warning == {
        "level": "warning",
        "logger": "pi-simple-snippets",
        "data": 'pi-simple-snippets: ignored 1 snippet entry: "Bad Name" (invalid name)',
    }
