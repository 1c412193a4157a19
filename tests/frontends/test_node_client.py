"""The Node example (scripts/node-client/) against the real server.

It needs ``node`` and ``npm`` (and the npm registry for ``npm ci``): without them the
test is skipped on a developer's machine and fails in CI (``CI`` set), where node is
expected to be installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES, REPO

RUN = REPO / "scripts" / "node-client" / "run.sh"
#: ``npm ci`` may download vscode-jsonrpc first.
NODE_TIMEOUT = 300


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def needs_node() -> None:
    missing = [tool for tool in ("node", "npm", "bash") if shutil.which(tool) is None]
    if missing:
        message = f"the Node example needs {', '.join(missing)}"
        if in_ci():
            pytest.fail(message + " in CI")
        pytest.skip(message)


def run_node_example(env: dict[str, str]) -> None:
    proc = subprocess.run(
        ["bash", str(RUN)],
        env={**os.environ, "PYTHON": sys.executable, **env},
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
    )
    report = f"exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, report
    assert proc.stdout.splitlines()[-1] == "node-client: 1 passed, 0 failed", report


def test_node_client_expands_a_prompt() -> None:
    needs_node()
    run_node_example({})


@pytest.mark.parametrize("flag", ["--socket", "--tcp"])
def test_node_client_uses_a_running_daemon(tmp_path: Path, flag: str) -> None:
    """The recipe connects to a ``--socket`` daemon, or to a ``--tcp`` one with the token
    it reads from the daemon's token file itself."""
    needs_node()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime), "PI_CODING_AGENT_DIR": str(tmp_path)}
    port = ["--port", "0"] if flag == "--tcp" else []
    daemon = subprocess.Popen(
        [sys.executable, "-m", "pi_snippets_lsp", flag, *port, "--settings", str(EXAMPLES)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    try:
        assert daemon.stderr is not None
        for raw in daemon.stderr:
            if match := re.search(r"listening on (unix:\S+|tcp://\S+)", raw.decode()):
                break
        assert match
        run_node_example({**env, "PI_SNIPPETS_CONNECT": "unix" if flag == "--socket" else match[1]})
        assert daemon.poll() is None, "exit ended the session, not the daemon"
    finally:
        daemon.terminate()
        daemon.wait(NODE_TIMEOUT)
