"""``scripts/bench/mcp.py --quick`` runs every measure at tiny sizes, so it cannot rot.

Nothing here judges a time: what is checked is that the bench runs to the end and
reports every row in the bench's row format, each with its target and whether it was met.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import REPO

#: The rows with a target, and the one for information (no target: ``met`` is None).
TARGETED = {"prompts_list", "prompts_get", "mcp_expand", "first_answer"}
ROWS = {*TARGETED, "startup"}
FIELDS = {"id", "what", "value", "unit", "reference", "target", "met", "details"}


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
    rows = json.loads(output.read_text())
    assert set(rows) == ROWS
    for key, row in rows.items():
        assert set(row) == FIELDS
        assert row["id"] == key
        assert isinstance(row["target"], str) and row["target"]
        assert isinstance(row["value"], int | float) and row["value"] >= 0
        assert row["met"] in ((True, False) if key in TARGETED else (None,))
    # Each targeted row is beside the LSP server's figure of the same run.
    assert rows["prompts_get"]["details"]["floor_p50_ms"] > 0
    assert "p99_ms" in rows["prompts_get"]["details"]
    assert rows["prompts_list"]["details"]["answer_bytes"] > 0
    assert rows["mcp_expand"]["details"]["lsp_p50_ms"] > 0
    # The first answer on each settings shape, beside `python -c pass` and the SDK's import.
    shapes = rows["first_answer"]["details"]["shapes"]
    assert set(shapes) == {"no settings file", "examples/settings.json", "1,000 snippets"}
    assert shapes["1,000 snippets"]["prompts"] == 1000
    for shape in shapes.values():
        assert shape["python_pass_p50_ms"] > 0 and shape["sdk_import_p50_ms"] > 0
        assert shape["initialize_p50_ms"] <= shape["prompts_list_p50_ms"]
    assert "| what | measured | reference | target | met |" in done.stdout
