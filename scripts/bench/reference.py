"""The REFERENCE figures: the original extension's JavaScript, run by Node.

``timing.mjs`` imports ``expandText`` and ``fuzzyFilter`` from tests/unit/js/reference.mjs
(the same code the differential tests hold ours to) and times them on the bench's inputs,
one command at a time, so the bench can take turns with it. Without ``node`` every
reference is n/a and the bench measures on.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

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


class JavaScript:
    """A Node process holding the inputs, answering one timing command at a time.

    ``JavaScript.start`` gives None without Node (every reference is then n/a).
    """

    def __init__(self, proc: subprocess.Popen[str], data: Path) -> None:
        self._proc = proc
        self._data = data

    @classmethod
    def start(
        cls,
        work: Path,
        snippets: dict[str, str],
        texts: Sequence[str] = (),
        ranking: Sequence[RankingSet] = (),
    ) -> JavaScript | None:
        node = shutil.which("node")
        if node is None:
            return None
        data = work / "reference-input.json"
        payload = {
            "snippets": snippets,
            "texts": list(texts),
            "ranking": [entry.to_json() for entry in ranking],
        }
        data.write_text(json.dumps(payload), encoding="utf-8")
        proc = subprocess.Popen(
            [node, "--max-old-space-size=4096", str(TIMING_SCRIPT), str(data)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        return cls(proc, data)

    def _ask(self, command: dict[str, int]) -> dict[str, Any]:
        stdin: IO[str] | None = self._proc.stdin
        stdout: IO[str] | None = self._proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps(command) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the node reference ended (exit {self._proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def expand(self, index: int) -> dict[str, Any]:
        """One pass over text ``index``: ``seconds``, the result's ``sha256``, ``changed``."""
        return self._ask({"expand": index})

    def rank(self, index: int) -> Ranked:
        answer = self._ask({"rank": index})
        return Ranked(answer["seconds"], answer["tops"], answer["counts"])

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._data.unlink(missing_ok=True)

    def __enter__(self) -> JavaScript:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def ranked(work: Path, sets: Sequence[RankingSet]) -> list[Ranked] | None:
    """pi-tui's ``fuzzyFilter`` over each set, or None without Node (or on its failure,
    reported on stderr)."""
    js = JavaScript.start(work, {}, ranking=sets)
    if js is None:
        return None
    try:
        with js:
            return [js.rank(index) for index in range(len(sets))]
    except (RuntimeError, OSError, ValueError) as exc:
        print(f"bench: the node reference failed: {exc}", file=sys.stderr)
        return None
