"""``pi-snippets-lsp mcp`` on the command line: its options, and that the core install
serves MCP without the official SDK or pydantic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_snippets_lsp.cli import build_parser, parse_command_line

CLIENT = {"name": "test", "version": "0"}


def test_the_mcp_command_takes_the_settings_options() -> None:
    args = build_parser().parse_args(
        ["mcp", "--settings", "s.json", "--project", "p", "--trust-project", "--poll-interval", "2"]
    )
    assert (args.command, args.settings, args.project, args.trust_project) == (
        "mcp",
        "s.json",
        "p",
        True,
    )
    assert args.poll_interval == 2.0
    defaults = build_parser().parse_args(["mcp"])
    assert (defaults.settings, defaults.project, defaults.trust_project) == (None, None, False)
    assert defaults.poll_interval == 1.0


def test_the_mcp_command_takes_a_line_cap() -> None:
    assert build_parser().parse_args(["mcp"]).max_message_size == 64 * 1024 * 1024
    args = build_parser().parse_args(["mcp", "--max-message-size", "4096"])
    assert args.max_message_size == 4096
    assert build_parser().parse_args(["--max-message-size", "5", "mcp"]).max_message_size == 5


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp"],
        ["mcp", "--settings", "s.json", "--project", "p", "--trust-project"],
        ["mcp", "--poll-interval", "0", "--max-message-size", "4096"],
    ],
)
def test_the_mcp_parser_alone_reads_a_command_line_as_the_whole_one(argv: list[str]) -> None:
    # ``main`` parses a command line that starts with ``mcp`` with the MCP parser alone.
    alone = vars(parse_command_line(argv))
    whole = vars(build_parser().parse_args(argv))
    assert alone == {key: whole[key] for key in alone}
    assert {"command", "verbose", "log_file", "max_message_size", "poll_interval"} <= set(alone)


@pytest.mark.parametrize("argv", [["mcp", "--poll-interval", "x"], ["mcp", "--stdio"]])
def test_the_mcp_parser_alone_refuses_what_the_whole_one_does(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    for parse in (parse_command_line, build_parser().parse_args):
        with pytest.raises(SystemExit) as exited:
            parse(argv)
        assert exited.value.code == 2
    assert "pi-snippets-lsp mcp: error:" in capsys.readouterr().err


def test_without_the_sdk_the_mcp_command_serves(tmp_path: Path) -> None:
    # ``sys.modules[name] = None`` makes any import of the SDK fail, as when it is
    # absent: the core install serves MCP on its own (the extra [mcp] adds nothing).
    settings = tmp_path / "settings.json"
    settings.write_text('{"piSimpleSnippets": {"snippets": {"hi": "Hello"}}}', encoding="utf-8")
    code = (
        "import sys; sys.modules['mcp'] = sys.modules['mcp_types'] = None; "
        "from pi_snippets_lsp.cli import main; "
        f"sys.exit(main(['mcp', '--settings', {str(settings)!r}]))"
    )
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
    ]
    done = subprocess.run(
        [sys.executable, "-c", code],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "pi-snippets"
    assert [p["name"] for p in answers[2]["result"]["prompts"]] == ["hi"]
