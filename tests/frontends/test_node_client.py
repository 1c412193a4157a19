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
import tempfile
from pathlib import Path

import pytest

from .conftest import EXAMPLES, REPO

RUN = REPO / "scripts" / "node-client" / "run.sh"
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
#: ``npm ci`` may download vscode-jsonrpc first.
NODE_TIMEOUT = 300
PASSED = "node-client: 1 passed, 0 failed"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def need_node() -> None:
    missing = [tool for tool in ("node", "npm", "bash") if shutil.which(tool) is None]
    if missing:
        message = f"the Node example needs {', '.join(missing)}"
        if in_ci():
            pytest.fail(message + " in CI")
        pytest.skip(message)


def run_recipe(env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], str]:
    proc = subprocess.run(
        ["bash", str(RUN)], env=env, capture_output=True, text=True, timeout=NODE_TIMEOUT
    )
    report = f"exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc, report


def python_without_the_package(folder: Path) -> Path:
    """A ``python3`` that fails the way a Python without the package does, at once."""
    folder.mkdir(parents=True, exist_ok=True)
    stub = folder / "python3"
    stub.write_text(
        '#!/bin/sh\necho "$0: No module named pi_snippets_lsp" >&2\nexit 1\n', encoding="utf-8"
    )
    stub.chmod(0o755)
    return stub


def test_node_client_expands_a_prompt() -> None:
    need_node()
    proc, report = run_recipe({**os.environ, "PYTHON": sys.executable})
    assert proc.returncode == 0, report
    assert proc.stdout.splitlines()[-1] == PASSED, report


def test_without_python_the_recipe_uses_the_repos_venv(tmp_path: Path) -> None:
    """``bash scripts/node-client/run.sh`` alone runs the server with ``.venv/bin/python``.

    The ``python3`` on ``PATH`` here cannot import the package (as on a fresh machine,
    where the package lives only in the venv CONTRIBUTING makes).
    """
    need_node()
    if not VENV_PYTHON.exists():
        pytest.skip(f"no venv at {VENV_PYTHON.parent.parent}")
    python_without_the_package(tmp_path / "bin")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    proc, report = run_recipe(env)
    assert proc.returncode == 0, report
    assert proc.stdout.splitlines()[-1] == PASSED, report


def test_a_server_that_dies_at_start_fails_the_example_at_once(tmp_path: Path) -> None:
    """The example reports the server's exit instead of waiting for an answer that cannot come."""
    need_node()
    stub = python_without_the_package(tmp_path / "bin")
    proc, report = run_recipe({**os.environ, "PYTHON": str(stub)})
    assert proc.returncode == 1, report
    assert "No module named pi_snippets_lsp" in proc.stderr, report
    assert "the server exited with code 1" in proc.stderr, report
    assert "no answer within" not in proc.stderr, report
    assert proc.stdout.splitlines()[-1] == "node-client: 0 passed, 1 failed", report


@pytest.mark.parametrize("flag", ["--socket", "--tcp"])
def test_node_client_uses_a_running_daemon(tmp_path: Path, flag: str) -> None:
    """The recipe connects to a ``--socket`` daemon, or to a ``--tcp`` one with the token
    it reads from the daemon's token file itself."""
    need_node()
    # A short path of its own: a socket's path must fit in 108 bytes.
    runtime = Path(tempfile.mkdtemp(prefix="pi-run-"))
    os.chmod(runtime, 0o700)
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
        connect = "unix" if flag == "--socket" else match[1]
        proc, report = run_recipe(
            {**os.environ, "PYTHON": sys.executable, **env, "PI_SNIPPETS_CONNECT": connect}
        )
        assert proc.returncode == 0, report
        assert proc.stdout.splitlines()[-1] == PASSED, report
        assert daemon.poll() is None, "exit ended the session, not the daemon"
    finally:
        daemon.terminate()
        shutil.rmtree(runtime, ignore_errors=True)
