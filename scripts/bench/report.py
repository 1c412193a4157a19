"""Rows of the results table, their statistics, and the machine they were measured on."""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import REPO
from .reference import node_version
from .sizes import MIB


@dataclass
class Row:
    """One line of the table: the figure of the worst shape, beside its reference.

    ``met`` is whether the target holds (None where the bench cannot tell: a reference
    it could not run); ``details`` holds every shape's figures, for the JSON results.
    """

    id: str
    what: str
    value: float | None
    unit: str
    reference: str
    target: str
    met: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def measured(self) -> str:
        if self.value is None:
            return "n/a"
        text = f"{number(self.value)} {self.unit}"
        if "p99_ms" in self.details:
            text += f" / p99 {number(self.details['p99_ms'])} ms"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "what": self.what,
            "value": self.value,
            "unit": self.unit,
            "reference": self.reference,
            "target": self.target,
            "met": self.met,
            "details": self.details,
        }


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.4g}"


def size_label(nbytes: int) -> str:
    """``1 MiB`` for a text generated to that size (it ends at a whole token past it)."""
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // 1024} KiB"


def count_label(count: int) -> str:
    return f"{count:,}"


def met_label(met: bool | None) -> str:
    return {True: "yes", False: "NO", None: "n/a"}[met]


def print_table(rows: Sequence[Row]) -> None:
    header = ("what", "measured", "reference", "target", "met")
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for row in rows:
        cells = (row.what, row.measured(), row.reference, row.target, met_label(row.met))
        print("| " + " | ".join(cells) + " |")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float] | None:
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def machine() -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    ).stdout.strip()
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "system": platform.platform(),
        "python": platform.python_version(),
        "node": node_version(),
        "commit": commit or None,
        "load_average": load_average(),
    }
