"""The REFERENCE figures: the original extension's JavaScript, run by Node.

``timing.mjs`` imports ``expandText`` and ``fuzzyFilter`` from tests/unit/js/reference.mjs
(the same code the differential tests hold ours to) and times them on the bench's inputs.
Without ``node`` every reference is n/a and the bench measures on.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sizes import TIMEOUT

TIMING_SCRIPT = Path(__file__).with_name("timing.mjs")


@dataclass(frozen=True)
class RankingSet:
    """One server's names and the queries sent to it (the warm-up ones unmeasured)."""

    names: list[str]
    warmup: list[str]
    queries: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"names": self.names, "warmup": self.warmup, "queries": self.queries}


@dataclass
class Ranked:
    """pi-tui's answer to each query of a ``RankingSet``: time, first 20, match count."""

    seconds: list[float] = field(default_factory=list)
    tops: list[list[str]] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)


def node_version() -> str | None:
    node = shutil.which("node")
    if node is None:
        return None
    return subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()


def run(
    work: Path,
    snippets: dict[str, str],
    texts: Sequence[str],
    repeats: int,
    ranking: Sequence[RankingSet] = (),
) -> dict[str, Any] | None:
    """``timing.mjs``'s output for these inputs, or None without Node (or on its failure,
    reported on stderr)."""
    node = shutil.which("node")
    if node is None:
        return None
    data = work / "reference-input.json"
    data.write_text(
        json.dumps(
            {
                "snippets": snippets,
                "texts": list(texts),
                "repeats": repeats,
                "ranking": [entry.to_json() for entry in ranking],
            }
        ),
        encoding="utf-8",
    )
    completed = subprocess.run(
        [node, "--max-old-space-size=4096", str(TIMING_SCRIPT), str(data)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    data.unlink()
    if completed.returncode != 0:
        print(
            f"bench: the node reference failed: {completed.stderr.strip()[:500]}", file=sys.stderr
        )
        return None
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def ranked(work: Path, sets: Sequence[RankingSet]) -> list[Ranked] | None:
    """pi-tui's ``fuzzyFilter`` over each set, or None without Node."""
    result = run(work, {}, [], 1, sets)
    if result is None:
        return None
    return [Ranked(entry["seconds"], entry["tops"], entry["counts"]) for entry in result["ranking"]]
