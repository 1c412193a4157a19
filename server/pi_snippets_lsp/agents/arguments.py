"""The command line of ``hook`` and ``setup`` (docs/agents.md), added to the
``pi-snippets-lsp`` parser by ``cli.build_parser``; their code runs from
``agents.hook`` and ``agents.setup``, imported when a command runs."""

from __future__ import annotations

import argparse
from typing import Any, Protocol


class SettingsOptions(Protocol):
    """``cli``'s ``--settings``/``--project``/``--trust-project`` for a subcommand."""

    def __call__(self, parser: argparse.ArgumentParser, *, sub: bool = False) -> None: ...


def add_agent_commands(commands: Any, add_settings_options: SettingsOptions) -> None:
    """``hook`` and ``setup`` (docs/agents.md): the coding agents' prompt boxes and
    config files. Their code is in ``pi_snippets_lsp.agents``, imported when run."""
    hook_cmd = commands.add_parser(
        "hook",
        help="answer a coding agent's prompt hook: the prompt's %%name markers expanded",
        description="Read the agent's hook input (JSON) on stdin and answer in its hook "
        "format on stdout: the prompt expanded (a rewrite where the agent allows one, "
        "else context for the model). No known marker: no output. Always exits 0: a "
        "problem is a warning the agent shows, never a blocked prompt. See docs/agents.md.",
    )
    hook_cmd.add_argument("agent", metavar="AGENT", help="claude-code, codex or gemini")
    add_settings_options(hook_cmd, sub=True)
    setup_cmd = commands.add_parser(
        "setup",
        help="add the MCP server (and the prompt hook) to a coding agent's config file",
        description="Merge the pi-snippets MCP server, and the prompt hook where the agent "
        "has one, into the agent's own config file, keeping everything else byte for byte. "
        "See docs/agents.md.",
    )
    setup_cmd.add_argument(
        "agent",
        metavar="AGENT",
        choices=("claude-code", "gemini", "codex", "vscode", "cursor", "zed", "opencode"),
        help="claude-code, gemini, codex, vscode, cursor, zed or opencode",
    )
    setup_cmd.add_argument(
        "--project",
        dest="project_scope",
        action="store_true",
        help="the project's config file in the current directory (default: your user's)",
    )
    setup_cmd.add_argument(
        "--dry-run", action="store_true", help="print the change as a diff; write nothing"
    )
    setup_cmd.add_argument("--remove", action="store_true", help="take back what setup added")
