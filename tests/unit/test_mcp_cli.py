"""``pi-snippets-lsp mcp`` on the command line: its options, and a clear message when
the optional MCP SDK is not installed (the core install does not need it)."""

from __future__ import annotations

import subprocess
import sys

from pi_snippets_lsp.cli import build_parser


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


def test_without_the_sdk_the_mcp_command_says_how_to_get_it() -> None:
    # ``sys.modules["mcp"] = None`` makes any import of the SDK fail, as when it is absent.
    code = (
        "import sys; sys.modules['mcp'] = None; "
        "from pi_snippets_lsp.cli import main; sys.exit(main(['mcp']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "pip install 'pi-snippets-lsp[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr
