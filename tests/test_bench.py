"""``scripts/bench --quick`` runs every measure at tiny sizes, so the bench cannot rot.

Nothing here judges a time: the bench measures, the tests judge behavior. What is checked
is that it runs to the end, reports every row of its table with every shape it measured,
and that the server answered as the JavaScript reference does on every input.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "scripts" / "bench"

#: The quick run's completion sizes (scripts/bench/sizes.py, QUICK) and query lengths.
QUICK_COUNTS = (20, 50, 100)
LENGTHS = range(5)
ROWS = {
    "expansion_prose",
    "expansion_dense",
    "expand_stdio",
    *(f"completion_{count}_q{length}" for count in QUICK_COUNTS for length in LENGTHS),
    "reload",
    "did_load_size",
    "edit_in_process",
    "edit_stdio",
    "startup",
    "hook_start",
    "peak_rss",
}
GROUPS = ("expansion", "edit", "startup", "completion")
VOCABULARIES = {"syllables", "words", "namespaced"}
PROSE = {"prose", "markers", "cjk"}
DENSE = {"mixed", "unknown", "escaped", "glued"}


def test_the_quick_bench_runs_every_measure(tmp_path: Path) -> None:
    output = tmp_path / "bench-results.json"
    completed = subprocess.run(
        # The mcp and daemon groups are scripts with tests of their own
        # (tests/mcp/test_bench_mcp.py, tests/test_bench_daemon.py).
        [sys.executable, str(BENCH), "--quick", "--output", str(output), "--only", *GROUPS],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["quick"] is True
    rows = {row["id"]: row for row in results["rows"]}
    assert set(rows) == ROWS
    for row in rows.values():
        assert row["what"] and row["unit"] and row["target"]
        assert row["value"] is None or isinstance(row["value"], int | float)
        assert row["met"] in (True, False, None)
    # Every measure ran (peak RSS needs /proc, so Linux; the others run anywhere).
    assert all(rows[name]["value"] is not None for name in ROWS - {"peak_rss"})
    assert "| what | measured | reference | target | met |" in completed.stdout
    assert results["machine"]["cores"]

    # Every shape was measured and reported.
    prose = rows["expansion_prose"]["details"]["shapes"]
    dense = rows["expansion_dense"]["details"]["shapes"]
    assert set(prose) == {f"prose/{shape}" for shape in PROSE}
    assert set(dense) == {f"dense/{s}{q}" for s in DENSE for q in ("", "/quarter")}
    for count in QUICK_COUNTS:
        for length in LENGTHS:
            figures = rows[f"completion_{count}_q{length}"]["details"]["vocabularies"]
            assert set(figures) == VOCABULARIES
            assert all(entry["queries"] > 0 for entry in figures.values())

    # With Node, every answer was the reference's: each expansion's text, and each
    # completion's first 20 names and isIncomplete.
    if results["machine"]["node"]:
        assert all(entry["identical_to_js"] for entry in {**prose, **dense}.values())
        for count in QUICK_COUNTS:
            for length in LENGTHS:
                figures = rows[f"completion_{count}_q{length}"]["details"]["vocabularies"]
                assert all(entry["same_as_js"] for entry in figures.values())


def test_the_bench_runs_as_a_module_too() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "scripts.bench", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "--quick" in completed.stdout
