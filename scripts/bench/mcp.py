#!/usr/bin/env python3
"""Performance figures of ``pi-snippets-lsp mcp`` over stdio, beside the LSP server's.

    python scripts/bench/mcp.py            # the full run (well under a minute)
    python scripts/bench/mcp.py --quick    # tiny sizes, a smoke run

Every input is generated here from a fixed seed; nothing touches the network. Each
server is a real process spoken to over its stdin/stdout by a reader thread that stamps
every message on arrival, so a latency is write -> whole answer read. The rows:

- startup: spawn to ``initialize`` answered (the MCP SDK is imported then), beside the
  LSP server's;
- ``prompts/list`` at 1,000 snippets (median, and the answer's size);
- ``prompts/get`` of a random snippet with a short ``text`` (p50 and p99);
- ``tools/call expand_snippets`` of 1 MiB of prose (one marker per ~100 words), end to
  end, beside the LSP server's ``snippets/expand`` of the same text and snippets.

Nothing here asserts a time: this script measures, the tests judge behavior.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
try:
    import pi_snippets_lsp
except ImportError:  # run from a checkout without an install
    sys.path.insert(0, str(REPO / "server"))
    import pi_snippets_lsp

from pi_snippets_lsp.core.expansion import expand  # noqa: E402
from pi_snippets_lsp.wire.framing import FrameDecoder, Problem, encode  # noqa: E402

SEED = 20240610
MIB = 1 << 20
TIMEOUT = 120.0
WORDS = [
    "the",
    "code",
    "review",
    "test",
    "plan",
    "bug",
    "fix",
    "change",
    "commit",
    "branch",
    "file",
    "line",
    "function",
    "value",
    "error",
    "check",
    "build",
    "release",
    "note",
    "question",
    "answer",
    "summary",
    "detail",
    "step",
    "first",
    "then",
]


@dataclass(frozen=True)
class Sizes:
    snippets: int
    text_bytes: int
    list_requests: int
    get_requests: int
    expand_requests: int


FULL = Sizes(snippets=1000, text_bytes=MIB, list_requests=30, get_requests=300, expand_requests=7)
QUICK = Sizes(
    snippets=50, text_bytes=16 * 1024, list_requests=3, get_requests=10, expand_requests=2
)


def snippet_table(count: int, rng: random.Random) -> dict[str, str]:
    names: set[str] = set()
    while len(names) < count:
        parts = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 7)))]
        parts += [rng.choice(WORDS) for _ in range(rng.randint(0, 2))]
        names.add("-".join(parts))
    return {n: " ".join(rng.choices(WORDS, k=rng.randint(5, 60))) + "." for n in sorted(names)}


def prose(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """Plain words and sentences, one known ``%name`` per ~100 words."""
    out: list[str] = []
    size = 0
    countdown = rng.randint(80, 120)
    while size < nbytes:
        countdown -= 1
        if countdown <= 0:
            countdown = rng.randint(80, 120)
            piece = "%" + rng.choice(names) + " "
        else:
            piece = rng.choice(WORDS) + rng.choice([" "] * 12 + [". ", ".\n"])
        out.append(piece)
        size += len(piece)
    return "".join(out)


class ServerError(Exception):
    pass


class Stdio:
    """A server process; ``lsp`` frames with Content-Length, else JSON lines (MCP)."""

    def __init__(self, argv: Sequence[str], cwd: Path, lsp: bool) -> None:
        self.lsp = lsp
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(cwd)},
        )
        self._next_id = 0
        self._inbox: queue.Queue[tuple[float, dict[str, Any] | None, int]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        decoder = FrameDecoder()
        #: The pieces of the line being read (joined once its newline arrives: a
        #: megabyte line comes in many reads, and re-joining on each would be quadratic).
        pieces: list[bytes] = []
        while True:
            chunk = os.read(stream.fileno(), 1 << 20)
            if not chunk:
                self._inbox.put((time.perf_counter(), None, 0))
                return
            bodies: list[bytes] = []
            if self.lsp:
                decoder.feed(chunk)
                for body in decoder.frames():
                    if not isinstance(body, Problem):
                        bodies.append(body)
            elif b"\n" not in chunk:
                pieces.append(chunk)
            else:
                head, *lines = chunk.split(b"\n")
                pieces.append(head)
                lines = [b"".join(pieces), *lines]
                pieces = [lines.pop()]
                bodies.extend(line for line in lines if line.strip())
            for body in bodies:
                self._inbox.put((time.perf_counter(), json.loads(body), len(body)))

    def _write(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        data = encode(message) if self.lsp else json.dumps(message).encode() + b"\n"
        stdin.write(data)
        stdin.flush()

    def notify(self, method: str, params: object) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def timed(self, method: str, params: object) -> tuple[Any, float, int]:
        """(result, seconds from write to the whole answer read, answer size in bytes)."""
        self._next_id += 1
        request_id = self._next_id
        start = time.perf_counter()
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = start + TIMEOUT
        while True:
            try:
                arrived, message, size = self._inbox.get(
                    timeout=max(deadline - time.perf_counter(), 0.001)
                )
            except queue.Empty:
                raise ServerError(f"no answer to {method}") from None
            if message is None:
                raise ServerError(f"the server closed its output (exit {self.proc.poll()})")
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise ServerError(f"{method} failed: {message['error']}")
                return message.get("result"), arrived - start, size

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def repeat(times: int, run: Callable[[], tuple[Any, float, int]]) -> tuple[list[float], int]:
    seconds: list[float] = []
    size = 0
    for _ in range(times):
        _, took, size = run()
        seconds.append(took)
    return seconds, size


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a smoke run")
    parser.add_argument("--output", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    rng = random.Random(SEED)
    table = snippet_table(sizes.snippets, rng)
    names = sorted(table)
    text = prose(sizes.text_bytes, names, rng)
    expected = expand(text, table).text
    rows: list[tuple[str, str, dict[str, float]]] = []

    with tempfile.TemporaryDirectory(prefix="pi-snippets-bench-mcp-") as folder:
        work = Path(folder)
        settings = work / "settings.json"
        settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": table}}))

        mcp = Stdio(
            [sys.executable, "-m", "pi_snippets_lsp", "mcp", "--settings", str(settings)],
            work,
            lsp=False,
        )
        try:
            mcp.timed(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            )
            spawn_to_answer = time.perf_counter() - mcp.started
            mcp.notify("notifications/initialized", {})
            rows.append(("startup", "spawn to `initialize` answered", {"ms": ms(spawn_to_answer)}))

            seconds, size = repeat(sizes.list_requests, lambda: mcp.timed("prompts/list", {}))
            listed = mcp.timed("prompts/list", {})[0]
            assert len(listed["prompts"]) == sizes.snippets
            rows.append(
                (
                    "prompts_list",
                    f"`prompts/list` at {sizes.snippets:,} snippets",
                    {
                        "p50_ms": ms(statistics.median(seconds)),
                        "best_ms": ms(min(seconds)),
                        "kib": round(size / 1024, 1),
                    },
                )
            )

            picks = [rng.choice(names) for _ in range(sizes.get_requests)]
            seconds = []
            for name in picks:
                result, took, _ = mcp.timed(
                    "prompts/get",
                    {"name": name, "arguments": {"text": f"then %{rng.choice(names)}"}},
                )
                assert result["messages"][0]["content"]["text"].startswith(table[name])
                seconds.append(took)
            rows.append(
                (
                    "prompts_get",
                    f"`prompts/get` with a short `text` ({sizes.get_requests} requests)",
                    {
                        "p50_ms": ms(statistics.median(seconds)),
                        "p99_ms": ms(percentile(seconds, 0.99)),
                    },
                )
            )

            def call() -> tuple[Any, float, int]:
                result, took, size = mcp.timed(
                    "tools/call", {"name": "expand_snippets", "arguments": {"text": text}}
                )
                assert result["structuredContent"]["text"] == expected
                return result, took, size

            seconds, _ = repeat(sizes.expand_requests, call)
            mcp_expand = statistics.median(seconds)
            rows.append(
                (
                    "mcp_expand",
                    f"`tools/call expand_snippets` of {len(text) / MIB:.2f} MiB prose",
                    {"p50_ms": ms(mcp_expand), "best_ms": ms(min(seconds))},
                )
            )
        finally:
            mcp.close()

        lsp = Stdio(
            [sys.executable, "-m", "pi_snippets_lsp", "--settings", str(settings)], work, lsp=True
        )
        try:
            lsp.timed("initialize", {"processId": None, "capabilities": {}})
            lsp_startup = time.perf_counter() - lsp.started
            lsp.notify("initialized", {})
            rows.append(
                (
                    "lsp_startup",
                    "LSP server: spawn to `initialize` answered (reference)",
                    {"ms": ms(lsp_startup)},
                )
            )

            def lsp_call() -> tuple[Any, float, int]:
                result, took, size = lsp.timed("snippets/expand", {"text": text})
                assert result["text"] == expected
                return result, took, size

            seconds, _ = repeat(sizes.expand_requests, lsp_call)
            rows.append(
                (
                    "lsp_expand",
                    "LSP `snippets/expand` of the same text (reference)",
                    {"p50_ms": ms(statistics.median(seconds)), "best_ms": ms(min(seconds))},
                )
            )
        finally:
            lsp.close()

    width = max(len(label) for _, label, _ in rows)
    print(f"pi-snippets-lsp {pi_snippets_lsp.__version__}, Python {sys.version.split()[0]}")
    for _, label, figures in rows:
        shown = ", ".join(f"{key} {value}" for key, value in figures.items())
        print(f"{label.ljust(width)}  {shown}")
    if args.output:
        args.output.write_text(
            json.dumps({key: figures for key, _, figures in rows}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
