#!/usr/bin/env python3
"""``pi-snippets-lsp mcp`` over stdio, each row beside the LSP server's figure (issue 24).

    python scripts/bench/mcp.py            # the full run (well under a minute)
    python scripts/bench/mcp.py --quick    # tiny sizes, a smoke run

Both servers run at once on the same snippets (``words`` names, values of 200
characters, as the bench's expansion) and their requests alternate, one at a time, so a
burst of other work on the machine falls on both. The rows (``report.Row``; ``met`` says
whether the target held in this run):

- ``prompts_get``: ``prompts/get`` of a random snippet with a short ``text`` (p50 and
  p99), at most 3x the LSP floor at p50. The LSP floor is the LSP server's round trip of
  a request with nothing to do: ``textDocument/completion`` on a line of a document open
  in it that holds no ``%`` (answered ``null``). MCP's own ``ping`` is in the details:
  what the SDK costs a request that does nothing;
- ``prompts_list``: ``prompts/list`` at 1,000 snippets (p50), at most 3x what the LSP
  server takes to send an answer of the same size. Its answer is ~260 KiB (a name, a
  preview and the ``text`` argument per snippet), so the floor alone is no bound: the
  bound is 3x (the floor + the answer's bytes at the LSP's cost per byte), that cost
  measured in the same run on the LSP's ``snippets/list`` of the same snippets, sent in
  turn with ``prompts/list`` ((its p50 - the floor) / its size as written, ~390 KiB:
  it carries each value whole). The ratio to the floor is reported too;
- ``mcp_expand``: ``tools/call expand_snippets`` of 1 MiB of prose (a marker per ~100
  words), end to end, at most 2x the LSP server's ``snippets/expand`` of the same text;
- ``startup``: spawn to ``initialize`` answered, beside the LSP server's; no target (for
  information);
- ``first_answer``: spawn to the first ``prompts/list`` answered (the client sends
  ``initialize`` at once, then ``notifications/initialized`` and ``prompts/list`` on its
  answer, as agents do), on three settings shapes (no settings file, the example
  settings, 1,000 snippets), each p50 beside ``python3 -c pass`` and
  ``python -c "import mcp.server.lowlevel"`` (the official SDK's server, whose import
  alone kept the server from answering in time) spawned in turn with it; at most 0.15x
  that import, for the worst shape. Agents wait for a server only briefly: Gemini CLI
  offers the prompts of the servers that answered within about 0.1 s.

A latency runs from the write of the request (already encoded) to the arrival of the
chunk that completed its answer, stamped before it is parsed. The LSP server is spoken
to through the bench's ``BenchServer`` (the package's client transport, which stamps so).
MCP's stdio transport is one JSON message per line, not LSP's Content-Length frames, so
the MCP server has a reader of its own here (``McpServer``) that stamps the same way.

Every input is generated here from a fixed seed; nothing touches the network. Nothing
here asserts a time: this script measures, the tests judge behavior. It prints the rows
and writes them as JSON (``--output``): ``report.Row.to_json`` under each row's id.
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "server"), str(REPO)]

from scripts.bench.report import (  # noqa: E402
    Row,
    load_average,
    ms,
    number,
    percentile,
    print_table,
)
from scripts.bench.server import BenchError, BenchServer, write_settings  # noqa: E402
from scripts.bench.shapes import prose, snippet_table  # noqa: E402
from scripts.bench.sizes import MIB, SEED, TIMEOUT  # noqa: E402

import pi_snippets_lsp  # noqa: E402
from pi_snippets_lsp.core.expansion import expand  # noqa: E402

#: The most a p50 may be over the LSP's (the floor, or its time at the answer's size).
GET_TARGET = 3.0
LIST_TARGET = 3.0
EXPAND_TARGET = 2.0
#: Requests of each kind sent before measuring (first answers import and cache), and
#: of the expansions of 1 MiB.
WARMUP = 10
EXPAND_WARMUP = 2
VALUE_CHARS = 200
FLOOR_URI = "file:///bench/floor.md"


@dataclass(frozen=True)
class Sizes:
    snippets: int
    text_bytes: int
    list_requests: int
    get_requests: int
    expand_requests: int

    spawns: int


FULL = Sizes(
    snippets=1000,
    text_bytes=MIB,
    list_requests=50,
    get_requests=300,
    expand_requests=25,
    spawns=11,
)
QUICK = Sizes(
    snippets=50,
    text_bytes=16 * 1024,
    list_requests=3,
    get_requests=10,
    expand_requests=2,
    spawns=1,
)
#: Spawn to the first ``prompts/list`` answer, at most this share of the SDK's import.
FIRST_ANSWER_TARGET = 0.15
#: The SDK import the first answer is measured beside.
SDK_IMPORT = "import mcp.server.lowlevel"
#: How many snippets the largest start-up shape holds.
STARTUP_SNIPPETS = 1000


class McpServer:
    """``pi-snippets-lsp mcp`` with ``settings``, spoken to over stdio as a plain client:
    one request at a time, JSON-RPC messages one per line."""

    def __init__(self, work: Path, settings: Path | None, agent: Path | None = None) -> None:
        self._log = (work / "server-mcp.log").open("ab")
        self.started = time.perf_counter()
        chosen = [] if settings is None else ["--settings", str(settings)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pi_snippets_lsp", "mcp", *chosen],
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent or work)},
        )
        self._next_id = 0
        #: (arrival of the chunk that completed it, the line), or None at the end.
        self._inbox: queue.Queue[tuple[float, bytes] | None] = queue.Queue()
        threading.Thread(target=self._read, name="bench-mcp-reader", daemon=True).start()

    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        #: The pieces of the line being read, joined once its newline arrives (a
        #: megabyte line comes in many reads; joining on each would be quadratic).
        pieces: list[bytes] = []
        while True:
            chunk = os.read(fd, 65536)
            arrived = time.perf_counter()
            if not chunk:
                self._inbox.put(None)
                return
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                pieces.append(chunk[start:end])
                line = b"".join(pieces)
                pieces = []
                start = end + 1
                if line.strip():
                    self._inbox.put((arrived, line))
            if start < len(chunk):
                pieces.append(chunk[start:])

    def _write(self, data: bytes) -> float:
        """Write ``data``; the moment the write began."""
        stdin = self.proc.stdin
        assert stdin is not None
        began = time.perf_counter()
        stdin.write(data)
        stdin.flush()
        return began

    def notify(self, method: str, params: object) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        self._write(json.dumps(message).encode() + b"\n")

    def timed(self, method: str, params: object) -> tuple[Any, float, int]:
        """(result, seconds from the write to the answer's arrival, answer's bytes)."""
        self._next_id += 1
        request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        began = self._write(json.dumps(message).encode() + b"\n")
        deadline = began + TIMEOUT
        while True:
            try:
                item = self._inbox.get(timeout=max(deadline - time.perf_counter(), 0.001))
            except queue.Empty:
                raise BenchError(f"no answer to {method}") from None
            if item is None:
                raise BenchError(f"the MCP server closed its output (exit {self.proc.poll()})")
            arrived, line = item
            answer = json.loads(line)
            if answer.get("id") == request_id and "method" not in answer:
                if "error" in answer:
                    raise BenchError(f"{method} failed: {answer['error']}")
                return answer.get("result"), arrived - began, len(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "pi-snippets-bench", "version": "0"},
}


def first_answer(work: Path, settings: Path | None) -> tuple[float, float, int]:
    """One spawn of the server: (spawn to ``initialize`` answered, spawn to the first
    ``prompts/list`` answered, the prompts listed)."""
    agent = work / "startup-agent"  # no settings.json in it: the shape without a file
    agent.mkdir(exist_ok=True)
    server = McpServer(work, settings, agent)
    try:
        server.timed("initialize", INITIALIZE)
        initialized = time.perf_counter() - server.started
        server.notify("notifications/initialized", {})
        result, _, _ = server.timed("prompts/list", {})
        listed = time.perf_counter() - server.started
    finally:
        server.close()
    return initialized, listed, len(result["prompts"])


def spawn_seconds(code: str) -> float:
    """Spawn to exit of ``python -c CODE`` (this interpreter, this environment)."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - began


def startup_shapes(work: Path) -> dict[str, Path | None]:
    """The settings the start-up is measured on: none, the example, 1,000 snippets."""
    many = work / "startup-1000.json"
    write_settings(many, snippet_table("words", STARTUP_SNIPPETS, VALUE_CHARS, SEED + 3))
    return {
        "no settings file": None,
        "examples/settings.json": REPO / "examples" / "settings.json",
        f"{STARTUP_SNIPPETS:,} snippets": many,
    }


def first_answer_row(sizes: Sizes, work: Path) -> Row:
    """Spawn to the first ``prompts/list`` answer on each shape, each spawn in turn with
    ``python3 -c pass`` and the SDK's import, so a burst of load falls on all three."""
    shapes = startup_shapes(work)
    times: dict[str, dict[str, list[float]]] = {
        name: {"initialize": [], "prompts_list": [], "pass": [], "sdk": []} for name in shapes
    }
    counts: dict[str, int] = {}
    for _ in range(sizes.spawns):
        for name, settings in shapes.items():
            initialized, listed, counts[name] = first_answer(work, settings)
            times[name]["initialize"].append(initialized)
            times[name]["prompts_list"].append(listed)
            times[name]["pass"].append(spawn_seconds("pass"))
            times[name]["sdk"].append(spawn_seconds(SDK_IMPORT))
    details: dict[str, Any] = {"spawns_per_shape": sizes.spawns, "shapes": {}}
    worst_name, worst_ratio = "", -1.0
    for name, measured in times.items():
        sdk = p50(measured["sdk"])
        ratio = p50(measured["prompts_list"]) / sdk
        details["shapes"][name] = {
            "prompts": counts[name],
            "initialize_p50_ms": ms(p50(measured["initialize"])),
            "prompts_list_p50_ms": ms(p50(measured["prompts_list"])),
            "python_pass_p50_ms": ms(p50(measured["pass"])),
            "sdk_import_p50_ms": ms(sdk),
            "ratio_to_sdk_import": round(ratio, 3),
        }
        if ratio > worst_ratio:
            worst_name, worst_ratio = name, ratio
    worst = details["shapes"][worst_name]
    details["worst_shape"] = worst_name
    return Row(
        id="first_answer",
        what=f"MCP server: spawn to the first `prompts/list` answered ({worst_name}; "
        f"`initialize` at {number(worst['initialize_p50_ms'])} ms)",
        value=worst["prompts_list_p50_ms"],
        unit="ms",
        reference=f"`python3 -c pass` {number(worst['python_pass_p50_ms'])} ms; "
        f'`python -c "{SDK_IMPORT}"` {number(worst["sdk_import_p50_ms"])} ms '
        f"({worst_ratio:.3f}x)",
        target=f"p50 <= {FIRST_ANSWER_TARGET:g}x the SDK's import, every shape",
        met=worst_ratio <= FIRST_ANSWER_TARGET,
        details=details,
    )


def shown(seconds: float) -> str:
    return f"{number(ms(seconds))} ms"


def compact_size(value: object) -> int:
    """The size of ``value`` as the LSP server writes it (compact, ASCII)."""
    return len(json.dumps(value, separators=(",", ":")))


def p50(samples: Sequence[float]) -> float:
    return statistics.median(samples)


@dataclass
class Bench:
    """Both servers, started, and the inputs."""

    sizes: Sizes
    mcp: McpServer
    lsp: BenchServer
    table: dict[str, str]
    text: str
    rng: random.Random

    def floor(self) -> float:
        """One LSP floor request: completion on a line without ``%`` (``null``)."""
        position = {"line": 0, "character": 5}
        result, seconds = self.lsp.timed(
            "textDocument/completion", {"textDocument": {"uri": FLOOR_URI}, "position": position}
        )
        if result is not None:
            raise BenchError(f"the floor's completion answered {result!r}")
        return seconds

    def startup(self, mcp_seconds: float, lsp_seconds: float) -> Row:
        return Row(
            id="startup",
            what="MCP server: spawn to `initialize` answered",
            value=ms(mcp_seconds),
            unit="ms",
            reference=f"LSP server: {shown(lsp_seconds)}",
            target="none (for information)",
            met=None,
            details={"lsp_ms": ms(lsp_seconds), "ratio": round(mcp_seconds / lsp_seconds, 3)},
        )

    def prompts_get(self) -> tuple[Row, list[float]]:
        """``prompts/get``, the LSP floor and MCP's ``ping`` in turn; the floor's times
        are the other rows' too."""
        names = sorted(self.table)
        get: list[float] = []
        floor: list[float] = []
        ping: list[float] = []
        for turn in range(WARMUP + self.sizes.get_requests):
            name = self.rng.choice(names)
            arguments = {"text": f"then %{self.rng.choice(names)}"}
            result, seconds, _ = self.mcp.timed(
                "prompts/get", {"name": name, "arguments": arguments}
            )
            if not result["messages"][0]["content"]["text"].startswith(self.table[name]):
                raise BenchError(f"prompts/get {name} answered {result!r}")
            floor_seconds = self.floor()
            ping_seconds = self.mcp.timed("ping", {})[1]
            if turn >= WARMUP:
                get.append(seconds)
                floor.append(floor_seconds)
                ping.append(ping_seconds)
        ratio = p50(get) / p50(floor)
        row = Row(
            id="prompts_get",
            what=f"`prompts/get` with a short `text` over stdio ({len(get)} requests)",
            value=ms(p50(get)),
            unit="ms",
            reference=f"LSP floor p50 {shown(p50(floor))} / p99 "
            f"{shown(percentile(floor, 0.99))} ({ratio:.2f}x); MCP `ping` p50 {shown(p50(ping))}",
            target=f"p50 <= {GET_TARGET:g}x the LSP floor",
            met=ratio <= GET_TARGET,
            details={
                "requests": len(get),
                "p50_ms": ms(p50(get)),
                "p99_ms": ms(percentile(get, 0.99)),
                "ratio_to_floor": round(ratio, 3),
                "floor_p50_ms": ms(p50(floor)),
                "floor_p99_ms": ms(percentile(floor, 0.99)),
                "mcp_ping_p50_ms": ms(p50(ping)),
                "mcp_ping_p99_ms": ms(percentile(ping, 0.99)),
            },
        )
        return row, floor

    def prompts_list(self, floor: Sequence[float]) -> Row:
        """``prompts/list`` and the LSP's ``snippets/list`` of the same snippets in turn."""
        count = len(self.table)
        listed: list[float] = []
        lsp_listed: list[float] = []
        size = lsp_size = 0
        for turn in range(WARMUP + self.sizes.list_requests):
            result, seconds, size = self.mcp.timed("prompts/list", {})
            if len(result["prompts"]) != count:
                raise BenchError(f"prompts/list listed {len(result['prompts'])} of {count}")
            answer, lsp_seconds = self.lsp.timed("snippets/list", {})
            if len(answer["snippets"]) != count:
                raise BenchError(f"snippets/list listed {len(answer['snippets'])} of {count}")
            lsp_size = compact_size(answer)
            if turn >= WARMUP:
                listed.append(seconds)
                lsp_listed.append(lsp_seconds)
        floor50, lsp50, ours = p50(floor), p50(lsp_listed), p50(listed)
        per_byte = max(lsp50 - floor50, 0.0) / lsp_size
        same_size = floor50 + size * per_byte
        bound = LIST_TARGET * same_size
        return Row(
            id="prompts_list",
            what=f"`prompts/list` at {count:,} snippets over stdio ({size / 1024:,.0f} KiB)",
            value=ms(ours),
            unit="ms",
            reference=f"LSP floor {shown(floor50)} ({ours / floor50:.1f}x); LSP at "
            f"{size / 1024:,.0f} KiB {shown(same_size)} (`snippets/list`: {shown(lsp50)} "
            f"for {lsp_size / 1024:,.0f} KiB)",
            target=f"p50 <= {LIST_TARGET:g}x the LSP at the same answer size ({shown(bound)})",
            met=ours <= bound,
            details={
                "snippets": count,
                "requests": len(listed),
                "p50_ms": ms(ours),
                "best_ms": ms(min(listed)),
                "answer_bytes": size,
                "ratio_to_floor": round(ours / floor50, 3),
                "floor_p50_ms": ms(floor50),
                "lsp_list_p50_ms": ms(lsp50),
                "lsp_list_bytes": lsp_size,
                "lsp_ns_per_byte": round(per_byte * 1e9, 2),
                "lsp_same_size_ms": ms(same_size),
                "bound_ms": ms(bound),
                "ratio_to_same_size": round(ours / same_size, 3),
            },
        )

    def expand(self) -> Row:
        """``tools/call expand_snippets`` and ``snippets/expand`` of the same text in turn."""
        expected = expand(self.text, self.table).text
        ours: list[float] = []
        theirs: list[float] = []
        size = lsp_size = 0
        for turn in range(EXPAND_WARMUP + self.sizes.expand_requests):
            result, seconds, size = self.mcp.timed(
                "tools/call", {"name": "expand_snippets", "arguments": {"text": self.text}}
            )
            if result["structuredContent"]["text"] != expected:
                raise BenchError("expand_snippets differs from the in-process pass")
            answer, lsp_seconds = self.lsp.timed("snippets/expand", {"text": self.text})
            if answer["text"] != expected:
                raise BenchError("snippets/expand differs from the in-process pass")
            lsp_size = compact_size(answer)
            if turn >= EXPAND_WARMUP:
                ours.append(seconds)
                theirs.append(lsp_seconds)
        ratio = p50(ours) / p50(theirs)
        mib = len(self.text.encode()) / MIB
        return Row(
            id="mcp_expand",
            what=f"`tools/call expand_snippets` of {mib:.2f} MiB prose, end to end over stdio",
            value=ms(p50(ours)),
            unit="ms",
            reference=f"LSP `snippets/expand` of the same text: {shown(p50(theirs))} "
            f"({ratio:.2f}x); answers {size / MIB:.2f} MiB vs {lsp_size / MIB:.2f} MiB",
            target=f"p50 <= {EXPAND_TARGET:g}x the LSP's",
            met=ratio <= EXPAND_TARGET,
            details={
                "text_bytes": len(self.text.encode()),
                "requests": len(ours),
                "p50_ms": ms(p50(ours)),
                "best_ms": ms(min(ours)),
                "lsp_p50_ms": ms(p50(theirs)),
                "lsp_best_ms": ms(min(theirs)),
                "ratio": round(ratio, 3),
                "answer_bytes": size,
                "lsp_answer_bytes": lsp_size,
            },
        )


def measure(sizes: Sizes, work: Path) -> list[Row]:
    count = sizes.snippets
    table = snippet_table("words", count, VALUE_CHARS, SEED + count + 1)
    text = prose(sizes.text_bytes, list(table), random.Random(SEED))
    settings = work / "settings.json"
    write_settings(settings, table)

    mcp = McpServer(work, settings)
    lsp: BenchServer | None = None
    try:
        mcp.timed("initialize", INITIALIZE)
        mcp_startup = time.perf_counter() - mcp.started
        mcp.notify("notifications/initialized", {})
        lsp = BenchServer(work, settings, "lsp")
        lsp_startup = lsp.start(count)
        item = {"uri": FLOOR_URI, "languageId": "markdown", "version": 1}
        lsp.notify("textDocument/didOpen", {"textDocument": {**item, "text": "plain words"}})
        bench = Bench(sizes, mcp, lsp, table, text, random.Random(SEED + 5))
        rows = [bench.startup(mcp_startup, lsp_startup)]
        get, floor = bench.prompts_get()
        rows += [bench.prompts_list(floor), get, bench.expand()]
    finally:
        mcp.close()
        if lsp is not None:
            lsp.close()
    return [first_answer_row(sizes, work), *rows]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a smoke run")
    parser.add_argument("--output", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    before = load_average()
    with tempfile.TemporaryDirectory(prefix="pi-snippets-bench-mcp-") as folder:
        rows = measure(QUICK if args.quick else FULL, Path(folder))
    print(f"pi-snippets-lsp {pi_snippets_lsp.__version__}, Python {sys.version.split()[0]}")
    print_table(rows)
    print(f"\nload average {before} -> {load_average()}")
    if args.output:
        results = {row.id: row.to_json() for row in rows}
        args.output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
