"""``python scripts/bench [--quick] [--only GROUP ...] [--output FILE]``: run, print the
table, write the JSON results."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import REPO, completion, hook, inprocess, stdio
from . import __doc__ as package_doc
from .report import Row, count_label, load_average, machine, met_label, print_table
from .server import BenchServer
from .shapes import prose, queries, snippet_table
from .sizes import FULL, QUICK, SEED, Sizes

#: Measure groups ``--only`` takes, in the order they run.
GROUPS = ("expansion", "edit", "startup", "completion", "mcp", "daemon")
#: Groups that are scripts of their own (``mcp.py``, ``daemon.py``): each prints its table
#: and writes its JSON, which the run's results carry under the group's name.
SCRIPTS = {"mcp": "mcp.py", "daemon": "daemon.py"}


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Bench:
    """Runs the groups asked for and keeps their rows."""

    def __init__(self, sizes: Sizes, work: Path) -> None:
        self.sizes = sizes
        self.work = work
        self.rows: list[Row] = []
        small = sizes.completion_counts[0]
        #: The snippets of expansion and of the cold start: 1,000 names from the shared
        #: vocabulary of words (the ``words`` server of the first tier has the same).
        self.snippets = snippet_table(
            "words", small, sizes.value_chars, SEED + small + sizes.vocabularies.index("words")
        )

    def add(self, rows: Sequence[Row]) -> None:
        for row in rows:
            self.rows.append(row)
            _log(f"  {row.what}: {row.measured()} [{row.reference}] met: {met_label(row.met)}")

    def run(self, groups: Sequence[str], tiers: Sequence[int] = (0, 1, 2)) -> None:
        sizes = self.sizes
        if "expansion" in groups:
            _log("expansion in-process ...")
            self.add(inprocess.expansion(sizes, self.work, self.snippets))
        if "edit" in groups:
            self.add([inprocess.document_edit(sizes)])
        if "startup" in groups:
            _log("cold start ...")
            self.add([stdio.startup(sizes, self.work, self.snippets)])
            _log("prompt hook start ...")
            self.add([hook.hook_start(sizes, self.work, self.snippets)])
        if "completion" in groups:
            extras = {(0, "words"): self._first_tier_extras, (1, "words"): self._second_tier_extras}
            for tier, count in enumerate(sizes.completion_counts):
                if tier not in tiers:
                    continue
                _log(f"completion at {count_label(count)} snippets ...")
                rows, _ = completion.run_tier(sizes, self.work, tier, extras)
                self.add(rows)

    def _first_tier_extras(self, server: BenchServer, floor: float) -> None:
        text = prose(self.sizes.text_bytes, list(self.snippets), random.Random(SEED))
        self.add([stdio.expand_over_stdio(self.sizes, server, text, self.snippets)])
        self.add([stdio.edit_over_stdio(self.sizes, server, floor)])

    def _second_tier_extras(self, server: BenchServer, floor: float) -> None:
        count = self.sizes.completion_counts[1]
        number = self.sizes.vocabularies.index("words")
        table = snippet_table("words", count, self.sizes.value_chars, SEED + count + number)
        names = list(table)
        rng = random.Random(SEED + 3)
        typed = queries(names, 3, 1000, 1, rng) + queries(names, 4, 1000, 1, rng)
        self.add([completion.rss_row(self.sizes, server, typed)])
        self.add(
            stdio.reload(self.sizes, server, self.work / f"settings-{count}-words.json", table)
        )


_FIRST = ("expansion_prose", "expansion_dense", "expand_stdio")
_LAST = (
    "reload",
    "did_load_size",
    "edit_in_process",
    "edit_stdio",
    "startup",
    "hook_start",
    "peak_rss",
)


def _order(rows: list[Row]) -> list[Row]:
    """Expansion first, then completion by size and query length, then the rest."""

    def key(row: Row) -> tuple[int, int, int]:
        if row.id in _FIRST:
            return 0, _FIRST.index(row.id), 0
        if row.id in _LAST:
            return 2, _LAST.index(row.id), 0
        return 1, row.details["snippets"], row.details["length"]

    return sorted(rows, key=key)


def _run_script(name: str, quick: bool, work: Path) -> Any:
    """Run one of the bench's own scripts (its table goes to our stdout), and return the
    JSON figures it wrote."""
    _log(f"{name} ...")
    output = work / f"{name}.json"
    command = [sys.executable, str(Path(__file__).with_name(name)), "--output", str(output)]
    subprocess.run([*command, *(["--quick"] if quick else [])], check=True)
    return json.loads(output.read_text(encoding="utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/bench", description=(package_doc or "").split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, seconds (for CI)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=GROUPS,
        default=list(GROUPS),
        help="run only these groups of measures",
    )
    parser.add_argument(
        "--tiers",
        type=int,
        nargs="+",
        choices=(0, 1, 2),
        default=[0, 1, 2],
        help="completion sizes to run (0: 1,000 snippets, 1: 10,000, 2: 100,000)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=REPO / "bench-results.json",
        help="where to write the JSON results (default: bench-results.json in the repo)",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    began = time.perf_counter()
    info = machine()
    with tempfile.TemporaryDirectory(prefix="pi-snippets-bench-") as tmp:
        bench = Bench(sizes, Path(tmp))
        bench.run(args.only, args.tiers)
        scripts = {
            group: _run_script(SCRIPTS[group], args.quick, Path(tmp))
            for group in args.only
            if group in SCRIPTS
        }
    rows = _order(bench.rows)
    info["load_average_after"] = load_average()
    results: dict[str, Any] = {
        "quick": args.quick,
        "seconds": round(time.perf_counter() - began, 1),
        "machine": info,
        "rows": [row.to_json() for row in rows],
        **scripts,
    }
    args.output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print_table(rows)
    print(
        f"\n{info['cpu']}, {info['cores']} cores, Python {info['python']}, node {info['node']}; "
        f"load average {info['load_average']} -> {info['load_average_after']}; "
        f"{results['seconds']} s. Results: {args.output}"
    )
    return 0
