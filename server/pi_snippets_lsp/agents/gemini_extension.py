"""Our Gemini CLI extension, as ``pi-snippets-lsp setup gemini`` installs it.

Gemini CLI rebuilds its slash commands when an MCP server's status changes (it turns
``CONNECTED`` before the server's prompts are listed), when its own start-up ends
(which the interactive UI does not make wait for MCP servers) and when an extension
has started: an extension starts once its servers are connected and listed. So an
extension's server is offered at every start, while a server of ``settings.json`` must
have answered ``initialize``, ``prompts/list``, ``tools/list`` and ``resources/list``
before Gemini's own start-up ends (about 0.1 s after its spawn), or its prompts wait
for ``/mcp refresh`` (docs/agents-mcp.md).

Setup writes the extension (``gemini-extension.json``: the MCP server;
``hooks/hooks.json``: the prompt hook) into a folder of its own, then has Gemini's own
``gemini extensions link`` link it: Gemini keeps an install record, an enablement
store and a signed integrity store for each extension, which are Gemini's to write.
Linked, not installed: Gemini reads the files from our folder at every start, so a
second ``setup`` updates them without ``gemini extensions update``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pi_snippets_lsp.agents.jsonedit import ConfigFileError

#: The extension's name, and that of its MCP server.
NAME: Final = "pi-snippets"
#: What Gemini CLI shows of our extension (``gemini extensions list``).
DESCRIPTION: Final = (
    "Pi's %name prompt snippets in Gemini CLI: %name typed in a prompt reaches the model "
    "expanded (a BeforeModel hook), and every snippet is an MCP prompt and tool."
)
#: The file in which Gemini CLI records where an installed or linked extension comes
#: from (its ``INSTALL_METADATA_FILENAME``), in ``~/.gemini/extensions/NAME/``.
INSTALL_RECORD: Final = ".gemini-extension-install.json"
#: Seconds a ``gemini extensions`` command may take (Gemini loads its whole bundle).
COMMAND_TIMEOUT: Final = 120


def manifest(version: str, server: dict[str, object]) -> dict[str, object]:
    """The ``gemini-extension.json`` (editors/gemini holds the one with the bare
    ``pi-snippets-lsp`` command)."""
    return {"name": NAME, "version": version, "description": DESCRIPTION, "mcpServers": {
        NAME: server
    }}  # fmt: skip


def hooks(entry: dict[str, object]) -> dict[str, object]:
    """The ``hooks/hooks.json``: the prompt hook before each model request."""
    return {"hooks": {"BeforeModel": [{"hooks": [entry]}]}}


@dataclass(frozen=True, slots=True)
class Step:
    """Gemini CLI's own ``gemini extensions …`` command that links our extension (after
    its files are written) or unlinks it (before they are deleted)."""

    args: tuple[str, ...]
    done: str

    def shown(self) -> str:
        return shlex.join(["gemini", *self.args])


def step(gemini_home: Path, folder: Path, remove: bool) -> Step | None:
    """What Gemini CLI must be told, from its record of an extension named ``NAME``:
    nothing when it already links (or no longer has) ``folder``; an extension of that
    name from elsewhere is the person's, and stops the setup (``ConfigFileError``)."""
    installed = gemini_home / "extensions" / NAME
    if not installed.exists():
        return None if remove else Step(
            ("extensions", "link", str(folder), "--consent"),
            f"linked {folder} as Gemini CLI's extension {NAME}",
        )  # fmt: skip
    try:
        record = json.loads((installed / INSTALL_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    source = record.get("source") if isinstance(record, dict) else None
    ours = (
        isinstance(record, dict)
        and record.get("type") == "link"
        and isinstance(source, str)
        and (source == str(folder) or _same_file(source, folder))
    )
    if ours:
        unlink = Step(("extensions", "uninstall", NAME), f"unlinked Gemini CLI's extension {NAME}")
        return unlink if remove else None
    if remove:
        return None
    where = f" (from {source})" if isinstance(source, str) else f" in {installed}"
    raise ConfigFileError(
        f"Gemini CLI already has an extension named {NAME}{where}; keep it, or remove it "
        f"(gemini extensions uninstall {NAME})"
    )


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def find_gemini(env: dict[str, str]) -> str | None:
    """The ``gemini`` command on the person's ``PATH``."""
    return shutil.which("gemini", path=env.get("PATH", os.defpath))


def run(
    gemini: str, todo: Step, cwd: Path, env: dict[str, str], err: Callable[[str], None]
) -> bool:
    """Runs ``todo``. The workspace counts as trusted for that one command
    (``GEMINI_CLI_TRUST_WORKSPACE``): else Gemini, told to consent, would also trust the
    folder setup was run in."""
    try:
        done = subprocess.run(
            [gemini, *todo.args],
            cwd=cwd,
            env={**env, "GEMINI_CLI_TRUST_WORKSPACE": "true"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        err(f"pi-snippets-lsp setup: `{todo.shown()}` failed: {exc}")
        return False
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip())[-2000:]
        err(f"pi-snippets-lsp setup: `{todo.shown()}` failed ({done.returncode}): {output}")
        return False
    return True


def prune(folder: Path) -> None:
    """After ``--remove``: the extension's folders, when the deletions left them empty
    (never a folder that holds anything else)."""
    for empty in (folder / "hooks", folder, folder.parent):
        with contextlib.suppress(OSError):
            empty.rmdir()
