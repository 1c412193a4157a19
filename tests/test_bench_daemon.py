"""``scripts/bench/daemon.py --quick`` runs every measure at small sizes, so it cannot rot.

Nothing here judges a time or a size: the bench measures, the tests judge behavior
(tests/lsp/test_daemon_limits.py, tests/lsp/test_signals.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "scripts" / "bench" / "daemon.py"
ROWS = {
    "never_reading_tcp",
    "never_reading_ws",
    "other_session_latency",
    "long_lines",
    "sigterm_stdio_full_stdout",
    "sigterm_busy_daemon",
}


def test_the_quick_daemon_bench_runs_every_measure(tmp_path: Path) -> None:
    output = tmp_path / "bench-daemon-results.json"
    completed = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = json.loads(output.read_text())
    assert set(results) == ROWS
    for row in ROWS:
        assert f"| {row} |" in completed.stdout
