"""The Node example (scripts/node-client/) against the real server.

It needs ``node`` and ``npm`` (and the npm registry for ``npm ci``): without them the
test is skipped on a developer's machine and fails in CI (``CI`` set), where node is
expected to be installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import REPO

RUN = REPO / "scripts" / "node-client" / "run.sh"
#: ``npm ci`` may download vscode-jsonrpc first.
NODE_TIMEOUT = 300


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def test_node_client_expands_a_prompt() -> None:
    missing = [tool for tool in ("node", "npm", "bash") if shutil.which(tool) is None]
    if missing:
        message = f"the Node example needs {', '.join(missing)}"
        if in_ci():
            pytest.fail(message + " in CI")
        pytest.skip(message)
    proc = subprocess.run(
        ["bash", str(RUN)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
    )
    report = f"exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, report
    assert proc.stdout.splitlines()[-1] == "node-client: 1 passed, 0 failed", report
