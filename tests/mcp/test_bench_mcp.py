"""``scripts/bench/mcp.py --quick`` runs every measure at tiny sizes, so it cannot rot.

Nothing here judges a time: what is checked is that the bench runs to the end and
reports every row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import REPO

ROWS = {"startup", "prompts_list", "prompts_get", "mcp_expand", "lsp_startup", "lsp_expand"}


def test_the_quick_mcp_bench_runs_every_measure(tmp_path: Path) -> None:
    output = tmp_path / "bench-mcp.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "bench" / "mcp.py"),
            "--quick",
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(output.read_text())
    assert set(figures) == ROWS
    assert all(value >= 0 for row in figures.values() for value in row.values())
