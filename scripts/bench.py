#!/usr/bin/env python3
"""Performance figures of pi-snippets-lsp, each beside its reference, in one run.

    python scripts/bench.py            # the full run (a few minutes on 2 cores)
    python scripts/bench.py --quick    # every measure at tiny sizes, in seconds (CI runs it)

Every input is generated here from a fixed seed; nothing touches the network. The rows:

- expansion in-process (1 MiB of prose with one marker per ~100 words, and 1 MiB dense with
  ``%``: ``100 %``, ``%%``, unknown and non-boundary markers), in MB/s, beside the
  REFERENCE: the original extension's JavaScript expansion pass (written below from the
  behavior contract's rule) run by Node on the same text, when ``node`` is available;
  the dense text is also measured at a quarter of the size, to show the pass is linear;
- ``snippets/expand`` of the 1 MiB prose, end to end over stdio;
- completion over stdio at 1,000 / 10,000 / 100,000 snippets, each query one never sent
  before (a keystroke: ``didChange`` + ``textDocument/completion``), p50 and p99, beside
  the protocol floor (the same keystroke on a line without a snippet token, so nothing is
  ranked) and, for information, pi-tui's ``fuzzyFilter`` (REFERENCE, in V8) over the same
  names and queries;
- reload at 10,000 snippets: settings file written, ``workspace/didChangeWatchedFiles``
  sent, until ``snippets/didLoad`` arrives; and the size of that notification;
- a one-character edit in a 1M-line document, in-process and over stdio (the keystroke
  ``didChange`` + a ``completion`` on the edited line);
- startup to ``initialize`` answered, beside ``python -c "import pygls.lsp.server"``;
- peak RSS of the server with 10,000 snippets of 200 characters after 2,000 completions
  (and its RSS after 1,000, to show it stays flat).

Repeated operations report their median (stdio) or best (in-process throughput, startup);
the machine may be shared, so compare figures of one run, and repeat runs when in doubt.
Nothing here asserts a time: this script measures, the tests judge behavior.

It prints a table and writes ``bench-results.json`` (``--output`` to change where).
JSON-RPC over stdio is framed by the package's own ``framing`` module (``Connection``).
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import platform
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
try:
    import pi_snippets_lsp
except ImportError:  # run from a checkout without an install
    sys.path.insert(0, str(REPO / "server"))
    import pi_snippets_lsp

from pi_snippets_lsp.core.documents import Document, Position
from pi_snippets_lsp.core.expansion import expand
from pi_snippets_lsp.wire.framing import FrameDecoder, Problem, encode

SEED = 20240610
MIB = 1 << 20
MB = 1_000_000


@dataclass(frozen=True)
class Sizes:
    """How big each measure runs; ``FULL`` is the issue's table, ``QUICK`` a smoke run."""

    text_bytes: int
    throughput_repeats: int
    #: Ours and the JavaScript reference take turns this many times (best of all kept),
    #: so a burst of load on a shared machine does not fall on one side only.
    rounds: int
    completion_counts: tuple[int, int, int]
    #: Unique queries per completion size; the middle one also gives the RSS figure.
    completion_queries: tuple[int, int, int]
    #: One keystroke in this many is the protocol floor, interleaved with the queries.
    floor_every: int
    value_chars: int
    #: The largest tier's values are shorter, so its settings file stays under the
    #: server's 16 MiB cap on a settings file (100,000 values of 200 characters do not).
    large_value_chars: int
    reloads: int
    expand_requests: int
    document_lines: int
    edits: int
    stdio_edits: int
    startups: int


FULL = Sizes(
    text_bytes=MIB,
    throughput_repeats=5,
    rounds=3,
    completion_counts=(1_000, 10_000, 100_000),
    completion_queries=(1_000, 2_000, 300),
    floor_every=4,
    value_chars=200,
    large_value_chars=100,
    reloads=7,
    expand_requests=7,
    document_lines=1_000_000,
    edits=40,
    stdio_edits=30,
    startups=5,
)
QUICK = Sizes(
    text_bytes=16 * 1024,
    throughput_repeats=2,
    rounds=1,
    completion_counts=(20, 50, 100),
    completion_queries=(20, 40, 20),
    floor_every=2,
    value_chars=200,
    large_value_chars=100,
    reloads=2,
    expand_requests=2,
    document_lines=1_000,
    edits=4,
    stdio_edits=4,
    startups=1,
)

#: How long any single wait on the server may take before the bench gives up on it.
TIMEOUT = 300.0


# ---------------------------------------------------------------------- inputs

_SYLLABLES = [c + v for c in "bdfklmnprstvz" for v in "aeiou"]
_WORDS = (
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "was", "on", "be",
    "by", "this", "are", "or", "from", "at", "which", "an", "have", "not", "they", "all", "one",
    "there", "their", "but", "we", "can", "more", "about", "if", "would", "when", "what", "so",
    "some", "into", "other", "time", "could", "these", "two", "may", "then", "first", "any",
    "like", "now", "only", "its", "over", "also", "review", "code", "please", "check", "tests",
    "before", "after", "change", "file", "error", "value", "prompt", "answer", "function",
    "module", "server", "client", "request", "update", "diff", "commit", "branch", "merge",
    "build", "run", "café", "naïve", "résumé", "déjà",
)  # fmt: skip


def snippet_names(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct valid names, shaped like real ones (``review-diff``, ``q3.plan``)."""
    names: set[str] = set()
    while len(names) < count:
        words = [
            "".join(rng.choices(_SYLLABLES, k=rng.randint(1, 3))) for _ in range(rng.randint(1, 3))
        ]
        sep = rng.choice("-" * 6 + "._")
        name = sep.join(words)
        if rng.random() < 0.2:
            name += str(rng.randint(1, 99))
        names.add(name)
    return sorted(names)


def snippet_value(chars: int, rng: random.Random) -> str:
    words: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:chars].rstrip() + "."


def snippet_table(count: int, value_chars: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    names = snippet_names(count, rng)
    return {name: snippet_value(value_chars, rng) for name in names}


def prose(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """Sentences and paragraphs of plain words, one known ``%name`` per ~100 words."""
    out: list[str] = []
    size = 0
    words_left = rng.randint(80, 120)
    sentence = 0
    while size < nbytes:
        words_left -= 1
        if words_left <= 0:
            words_left = rng.randint(80, 120)
            marker = "%" + rng.choice(names)
            piece = rng.choice([marker, marker, f"({marker})", marker + "."])
        else:
            piece = rng.choice(_WORDS)
        sentence += 1
        if sentence > rng.randint(8, 20):
            sentence = 0
            piece += rng.choice([". ", ". ", ".\n", ".\n\n", "? "])
        else:
            piece += " "
        out.append(piece)
        size += len(piece.encode("utf-8"))
    return "".join(out)


def dense(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """Text where most tokens carry a ``%`` that must stay as typed: ``100 %``, ``%%``,
    unknown markers and markers not at a boundary; one token in ~20 is a known marker or
    an escape, so the pass also replaces."""

    def unknown() -> str:
        return "".join(rng.choices("abcxyz", k=rng.randint(2, 8)))

    shapes: list[Callable[[], str]] = [
        lambda: "100 %",
        lambda: f"{rng.randint(1, 99)}%",
        lambda: "%%",
        lambda: "%",
        lambda: "%" + unknown(),
        lambda: "(%" + unknown() + ")",
        lambda: "%" + rng.choice(names) + "x",  # a longer run is never shortened
        lambda: "%Name",
        lambda: "%%%a",
        lambda: "x%" + rng.choice(names),  # not at a boundary
        lambda: "--format=%h",
        lambda: "a=%b",
        lambda: f"{rng.randint(1, 99)}%off",
        lambda: rng.choice(_WORDS),
        lambda: rng.choice(["%", "，%", "(%", "%%"]) + rng.choice(names),  # known, escape
    ]
    weights = [1.0] * (len(shapes) - 1) + [0.7]
    out: list[str] = []
    size = 0
    while size < nbytes:
        (shape,) = rng.choices(shapes, weights)
        piece = shape() + rng.choice([" ", " ", " ", "\n", "\t", "\u3000"])
        out.append(piece)
        size += len(piece.encode("utf-8"))
    return "".join(out)


def unique_queries(names: Sequence[str], count: int, rng: random.Random) -> list[str]:
    """Queries a person types after ``%``: prefixes of names, and fuzzy picks from them.

    Every query is distinct, so a result cache cannot carry the figure.
    """
    seen: set[str] = set()
    queries: list[str] = []
    attempts = 0
    while len(queries) < count and attempts < count * 200:
        attempts += 1
        name = rng.choice(names)
        if rng.random() < 0.5:
            query = name[: rng.randint(1, min(len(name), 6))]
        else:
            picks = sorted(rng.sample(range(len(name)), k=min(len(name), rng.randint(2, 5))))
            query = "".join(name[i] for i in picks)
        if not query[0].isalnum() or query in seen:
            continue
        seen.add(query)
        queries.append(query)
    return queries


def document_text(lines: int) -> str:
    return "".join(f"line {n:07d} of a long document\n" for n in range(lines))


# ---------------------------------------------------------------------- JSON-RPC


class ServerError(RuntimeError):
    pass


class Connection:
    """A language server on a pipe, spoken to as a plain LSP client.

    A reader thread takes frames off the server's stdout and stamps each on arrival, so a
    measured latency is write -> complete response, not the bench's own bookkeeping.
    Requests from the server are answered with ``null``; notifications are recorded.
    """

    def __init__(self, argv: Sequence[str], cwd: Path, log: Path) -> None:
        self.log_file = log.open("wb")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log_file,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(cwd)},
        )
        self._next_id = 0
        self._inbox: queue.Queue[tuple[float, dict[str, Any] | None, int]] = queue.Queue()
        #: (method, body size, arrival, params) of every notification from the server.
        self.notifications: list[tuple[str, int, float, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        decoder = FrameDecoder()
        while True:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                self._inbox.put((time.perf_counter(), None, 0))
                return
            decoder.feed(chunk)
            for body in decoder.frames():
                if isinstance(body, Problem):
                    print(f"bench: bad frame from the server: {body.message}", file=sys.stderr)
                    continue
                arrived = time.perf_counter()
                self._inbox.put((arrived, json.loads(body), len(body)))

    def _write(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(encode(message))
        stdin.flush()

    def notify(self, method: str, params: object) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def send_request(self, method: str, params: object) -> int:
        self._next_id += 1
        self._write({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def _next(self, deadline: float) -> tuple[float, dict[str, Any], int]:
        remaining = deadline - time.perf_counter()
        try:
            arrived, message, size = self._inbox.get(timeout=max(remaining, 0.001))
        except queue.Empty:
            raise ServerError("the server did not answer in time") from None
        if message is None:
            raise ServerError(f"the server closed its output (exit {self.proc.poll()})")
        if "method" in message:
            if "id" in message:  # a request from the server: answer it
                params = message.get("params") or {}
                result: object = None
                if message["method"] == "workspace/configuration":
                    result = [None] * len(params.get("items", []))
                self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
            else:
                self.notifications.append((message["method"], size, arrived, message.get("params")))
        return arrived, message, size

    def wait_response(self, request_id: int, timeout: float = TIMEOUT) -> tuple[Any, float, int]:
        """(result, arrival time, body size) of the answer to ``request_id``."""
        deadline = time.perf_counter() + timeout
        while True:
            arrived, message, size = self._next(deadline)
            if "method" not in message and message.get("id") == request_id:
                if "error" in message:
                    raise ServerError(f"request {request_id} failed: {message['error']}")
                return message.get("result"), arrived, size

    def request(self, method: str, params: object, timeout: float = TIMEOUT) -> Any:
        return self.wait_response(self.send_request(method, params), timeout)[0]

    def timed(
        self, method: str, params: object, before: Iterable[tuple[str, object]] = ()
    ) -> tuple[Any, float]:
        """Send the ``before`` notifications and one request; (result, seconds to its answer)."""
        start = time.perf_counter()
        for name, notification in before:
            self.notify(name, notification)
        result, arrived, _ = self.wait_response(self.send_request(method, params))
        return result, arrived - start

    def wait_notification(
        self, method: str, after: int, timeout: float = TIMEOUT
    ) -> tuple[int, float, Any] | None:
        """(size, arrival, params) of the first ``method`` notification past ``after``."""
        deadline = time.perf_counter() + timeout
        while True:
            for name, size, arrived, params in self.notifications[after:]:
                if name == method:
                    return size, arrived, params
            after = len(self.notifications)
            try:
                self._next(deadline)
            except ServerError:
                return None

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None, timeout=30)
                self.notify("exit", None)
                self.proc.wait(timeout=30)
        except (ServerError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            self.log_file.close()


SERVER = [sys.executable, "-m", "pi_snippets_lsp"]


def start_server(work: Path, settings: Path, tag: str) -> Connection:
    return Connection([*SERVER, "--settings", str(settings)], work, work / f"server-{tag}.log")


def initialize(conn: Connection) -> float:
    """``initialize`` as a plain client; seconds from spawn to its answer."""
    _, arrived, _ = conn.wait_response(
        conn.send_request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {},
                "initializationOptions": {
                    # Reloads come from didChangeWatchedFiles only: no polling timer.
                    "pollInterval": 0,
                    "notifications": ["snippets/didLoad"],
                },
            },
        )
    )
    return arrived - conn.started


def settings_text(snippets: dict[str, str]) -> str:
    return json.dumps({"piSimpleSnippets": {"snippets": snippets}})


def write_settings(path: Path, snippets: dict[str, str] | str) -> None:
    """Write the settings file the way careful editors save: temp file, then rename."""
    text = snippets if isinstance(snippets, str) else settings_text(snippets)
    temp = path.with_suffix(".tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in KiB (Linux only; empty elsewhere)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    values = {}
    for line in status.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


# ---------------------------------------------------------------------- reference (JavaScript)

#: REFERENCE, not product code: the original extension's expansion pass (pi-simple-snippets
#: ``expandText``, patterns mirrored from pi-tui 1.1.0) written from the behavior contract's
#: rule, and pi-tui 1.1.0's ``fuzzyFilter``; run by Node to give the figures beside ours.
JS_REFERENCE = r"""
"use strict";
const fs = require("fs");
const crypto = require("crypto");

const MARKER_NAME = "[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?";
const CJK = "[\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}" +
  "\\p{Script_Extensions=Katakana}\\p{Script_Extensions=Hangul}\\p{Script_Extensions=Bopomofo}]";
const CJK_PUNCTUATION = `(?:(?=\\p{Punctuation})${CJK}|[，．：；！？（）［］｛｝“”‘’…—])`;
const SEPARATOR = `(?:\\s|${CJK_PUNCTUATION})`;
const EXPANSION_RE = new RegExp(
  `(^|${SEPARATOR})([([{<\`]*)%(%)?(${MARKER_NAME})([._-]*)`, "gmu");

function expandText(text, lookup) {
  if (lookup.size === 0 || !text.includes("%")) return { text, changed: false };
  const expanded = text.replace(EXPANSION_RE, (match, boundary, wrappers, escape, name, tail) => {
    const prefix = (boundary ?? "") + (wrappers ?? "");
    const trailing = tail ?? "";
    if (escape === "%") return `${prefix}%${name}${trailing}`;
    const value = lookup.get(name);
    return value === undefined ? match : prefix + value + trailing;
  });
  return { text: expanded, changed: expanded !== text };
}

const WORD_BOUNDARY = /[\s\-_./:]/;
function matchQuery(q, t) {
  if (q.length === 0) return { matches: true, score: 0 };
  if (q.length > t.length) return { matches: false, score: 0 };
  let qi = 0, score = 0, last = -1, consecutive = 0;
  for (let i = 0; i < t.length && qi < q.length; i++) {
    if (t[i] !== q[qi]) continue;
    const boundary = i === 0 || WORD_BOUNDARY.test(t[i - 1]);
    if (last === i - 1) { consecutive++; score -= consecutive * 5; }
    else { consecutive = 0; if (last >= 0) score += (i - last - 1) * 2; }
    if (boundary) score -= 10;
    score += i * 0.1;
    last = i;
    qi++;
  }
  if (qi < q.length) return { matches: false, score: 0 };
  if (q === t) score -= 100;
  return { matches: true, score };
}
function fuzzyMatch(query, text) {
  const q = query.toLowerCase(), t = text.toLowerCase();
  const primary = matchQuery(q, t);
  if (primary.matches) return primary;
  const m = q.match(/^([a-z]+)([0-9]+)$/) || q.match(/^([0-9]+)([a-z]+)$/);
  if (!m) return primary;
  const retry = matchQuery(m[2] + m[1], t);
  if (!retry.matches) return primary;
  return { matches: true, score: retry.score + 5 };
}
function fuzzyFilter(items, query, getText) {
  if (!query.trim()) return items;
  const tokens = query.trim().split(/[\s/]+/).filter((t) => t.length > 0);
  if (tokens.length === 0) return items;
  const results = [];
  for (const item of items) {
    const text = getText(item);
    let total = 0, ok = true;
    for (const token of tokens) {
      const m = fuzzyMatch(token, text);
      if (!m.matches) { ok = false; break; }
      total += m.score;
    }
    if (ok) results.push({ item, total });
  }
  results.sort((a, b) => a.total - b.total);
  return results.map((r) => r.item);
}

function seconds(start) { return Number(process.hrtime.bigint() - start) / 1e9; }

const input = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const out = { expansion: [], ranking: [] };
const lookup = new Map(Object.entries(input.snippets));
for (const text of input.texts) {
  let best = Infinity, result = null;
  for (let r = 0; r < input.repeats; r++) {
    const start = process.hrtime.bigint();
    result = expandText(text, lookup);
    best = Math.min(best, seconds(start));
  }
  const sha = crypto.createHash("sha256").update(result.text, "utf8").digest("hex");
  out.expansion.push({ seconds: best, sha256: sha, changed: result.changed });
}
for (const set of input.ranking) {
  const names = set.names;
  for (const q of set.warmup) fuzzyFilter(names, q, (x) => x).slice(0, 20);
  const times = [], tops = [];
  for (const q of set.queries) {
    const start = process.hrtime.bigint();
    const top = fuzzyFilter(names, q, (x) => x).slice(0, 20);
    times.push(seconds(start));
    tops.push(top);
  }
  out.ranking.push({ seconds: times, tops });
}
process.stdout.write(JSON.stringify(out));
"""


def run_js_reference(
    work: Path,
    snippets: dict[str, str],
    texts: Sequence[str],
    repeats: int,
    ranking: Sequence[dict[str, Any]],
) -> dict[str, Any] | None:
    node = shutil.which("node")
    if node is None:
        return None
    script = work / "reference.cjs"
    script.write_text(JS_REFERENCE, encoding="utf-8")
    data = work / "reference-input.json"
    data.write_text(
        json.dumps(
            {"snippets": snippets, "texts": list(texts), "repeats": repeats, "ranking": ranking}
        ),
        encoding="utf-8",
    )
    completed = subprocess.run(
        [node, "--max-old-space-size=4096", str(script), str(data)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    if completed.returncode != 0:
        print(f"node reference failed: {completed.stderr.strip()[:500]}", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


# ---------------------------------------------------------------------- measures


@dataclass
class Row:
    id: str
    what: str
    value: float | None
    unit: str
    reference: str
    target: str
    details: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "what": self.what,
            "value": self.value,
            "unit": self.unit,
            "reference": self.reference,
            "target": self.target,
            "details": self.details,
        }


def best_time(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def size_label(nbytes: int) -> str:
    """``1 MiB`` for a text generated to that size (it ends at a whole token past it)."""
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // 1024} KiB"


def count_label(count: int) -> str:
    return f"{count:,}"


class Bench:
    def __init__(self, sizes: Sizes, work: Path) -> None:
        self.sizes = sizes
        self.work = work
        self.rows: list[Row] = []
        small, medium, large = sizes.completion_counts
        self.tables = {
            count: snippet_table(
                count,
                sizes.large_value_chars if count == large else sizes.value_chars,
                SEED + count,
            )
            for count in (small, medium, large)
        }
        self.expansion_snippets = self.tables[small]
        names = list(self.expansion_snippets)
        rng = random.Random(SEED)
        self.prose = prose(sizes.text_bytes, names, rng)
        self.dense = dense(sizes.text_bytes, names, rng)
        self.dense_quarter = dense(sizes.text_bytes // 4, names, rng)
        self.queries = {
            count: unique_queries(list(table), n + 20, random.Random(SEED + 7 * count))
            for (count, table), n in zip(self.tables.items(), sizes.completion_queries, strict=True)
        }
        #: pi-tui's top 20 per measured query and its time per query, from the reference.
        self.ranking_tops: dict[int, list[list[str]]] = {}
        self.js_ranking: dict[int, list[float]] = {}
        #: Median keystroke without a token, from the first server (for the stdio edit row).
        self.floor = 0.0

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"  {row.what}: {measured(row)} [{row.reference}]", file=sys.stderr, flush=True)

    # -------------------------------------------------------------- in-process

    def expansion(self) -> None:
        sizes = self.sizes
        texts = [self.prose, self.dense, self.dense_quarter]
        results = [expand(t, self.expansion_snippets) for t in texts]
        ranking = [
            {
                "names": list(self.tables[count]),
                "warmup": self.queries[count][:20],
                "queries": self.queries[count][20:],
            }
            for count in self.tables
        ]
        seconds = [float("inf")] * len(texts)
        js_expansion: list[dict[str, Any] | None] = [None] * len(texts)
        for round_number in range(sizes.rounds):
            seconds = [min(a, self._expansion_time(t)) for a, t in zip(seconds, texts, strict=True)]
            js = run_js_reference(
                self.work,
                self.expansion_snippets,
                texts,
                sizes.throughput_repeats,
                ranking if round_number == 0 else [],
            )
            if js is None:
                continue
            for i, entry in enumerate(js["expansion"]):
                previous = js_expansion[i]
                if previous is None or entry["seconds"] < previous["seconds"]:
                    js_expansion[i] = entry
            for count, ranked in zip(self.tables, js["ranking"], strict=False):
                self.ranking_tops[count] = ranked["tops"]
                self.js_ranking[count] = ranked["seconds"]
        nbytes = [len(t.encode("utf-8")) for t in texts]
        rates = [n / s / MB for n, s in zip(nbytes, seconds, strict=True)]
        markers = [len(r.replacements) for r in results]

        def reference(i: int) -> tuple[str, dict[str, Any]]:
            entry = js_expansion[i]
            if entry is None:
                return "JavaScript pass: n/a (no node)", {}
            js_rate = nbytes[i] / entry["seconds"] / MB
            ours = hashlib.sha256(results[i].text.encode("utf-8")).hexdigest()
            identical = ours == entry["sha256"] and results[i].changed == entry["changed"]
            return (
                f"JavaScript pass: {js_rate:.1f} MB/s (ours {rates[i] / js_rate:.2f}x"
                f"{'' if identical else ', RESULTS DIFFER'})",
                {"js_mb_per_s": round(js_rate, 1), "identical_to_js": identical},
            )

        ref, extra = reference(0)
        self.add(
            Row(
                "expansion_prose",
                f"expansion in-process, {size_label(nbytes[0])} prose, 1 marker per ~100 words",
                round(rates[0], 1),
                "MB/s",
                ref,
                ">= 2x the JavaScript pass",
                {"bytes": nbytes[0], "replacements": markers[0], **extra},
            )
        )
        ref, extra = reference(1)
        _, extra_quarter = reference(2)
        self.add(
            Row(
                "expansion_dense",
                f"expansion in-process, {size_label(nbytes[1])} dense with %",
                round(rates[1], 1),
                "MB/s",
                ref + f"; at 1/4 size: {rates[2]:.1f} MB/s (linear: ~same)",
                ">= the JavaScript pass; linear in size",
                {
                    "bytes": nbytes[1],
                    "replacements": markers[1],
                    "quarter_mb_per_s": round(rates[2], 1),
                    "quarter_js_mb_per_s": extra_quarter.get("js_mb_per_s"),
                    **extra,
                },
            )
        )

    def _expansion_time(self, text: str) -> float:
        return best_time(
            lambda: expand(text, self.expansion_snippets), self.sizes.throughput_repeats
        )

    def document_edit(self) -> None:
        lines = self.sizes.document_lines
        document = Document(uri="file:///bench/long.md", text=document_text(lines))
        rng = random.Random(SEED + 1)
        times: list[float] = []
        for _ in range(self.sizes.edits):
            line = rng.randrange(lines)
            start = time.perf_counter()
            document.apply_change("x", Position(line, 4), Position(line, 4), "utf-16")
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
            document.apply_change("", Position(line, 4), Position(line, 5), "utf-16")
            times.append(time.perf_counter() - start)
        self.add(
            Row(
                "edit_in_process",
                f"one-character edit in a {count_label(lines)}-line document, in-process",
                ms(statistics.median(times)),
                "ms",
                f"max {ms(max(times))} ms",
                "<= 5 ms",
                {
                    "lines": lines,
                    "median_ms": ms(statistics.median(times)),
                    "max_ms": ms(max(times)),
                },
            )
        )

    # -------------------------------------------------------------- over stdio

    def startup(self) -> None:
        # Start from compiled bytecode, as an installed wheel does (pip compiles on
        # install); an editable checkout run with PYTHONDONTWRITEBYTECODE has none, and
        # would compile the package's source on every start.
        compileall.compile_dir(Path(pi_snippets_lsp.__file__).parent, quiet=1)
        missing = self.work / "no-settings.json"
        server_times: list[float] = []
        import_times: list[float] = []
        for _ in range(self.sizes.startups):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", "import pygls.lsp.server"], check=True, cwd=self.work
            )
            import_times.append(time.perf_counter() - start)
            conn = start_server(self.work, missing, "startup")
            try:
                server_times.append(initialize(conn))
            finally:
                conn.close()
        ours, framework = min(server_times), min(import_times)
        self.add(
            Row(
                "startup",
                "startup to `initialize` answered",
                ms(ours),
                "ms",
                f"`import pygls.lsp.server`: {ms(framework)} ms ({ours / framework:.2f}x)",
                "<= 1.25x the framework's import",
                {"ratio": round(ours / framework, 3), "import_ms": ms(framework)},
            )
        )

    def completion_run(self, tier: int) -> None:
        """One server with ``count`` snippets: floor, completions, and the tier's extras."""
        count = self.sizes.completion_counts[tier]
        table = self.tables[count]
        settings = self.work / f"settings-{count}.json"
        write_settings(settings, table)
        conn = start_server(self.work, settings, str(count))
        try:
            initialize(conn)
            mark = len(conn.notifications)
            conn.notify("initialized", {})
            loaded = conn.wait_notification("snippets/didLoad", mark)
            if loaded is None:
                conn.request("snippets/list", {})  # no didLoad: wait for the load this way
            elif isinstance(loaded[2], dict) and loaded[2].get("count", count) != count:
                raise ServerError(
                    f"the server loaded {loaded[2].get('count')} of {count} snippets: "
                    f"{loaded[2].get('warnings')}"
                )
            uri = "file:///bench/prompt.md"
            conn.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": ""}},
            )
            versions = [1]
            texts = [""]

            def keystroke(text: str) -> tuple[Any, float]:
                """The one-line prompt becomes ``text``; complete at its end."""
                old = texts[-1]
                versions.append(versions[-1] + 1)
                texts.append(text)
                change = {
                    "textDocument": {"uri": uri, "version": versions[-1]},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": 0, "character": 0},
                                "end": {"line": 0, "character": len(old)},
                            },
                            "text": text,
                        }
                    ],
                }
                return conn.timed(
                    "textDocument/completion",
                    {"textDocument": {"uri": uri}, "position": {"line": 0, "character": len(text)}},
                    before=[("textDocument/didChange", change)],
                )

            queries = self.queries[count]
            for query in queries[:20]:  # warm-up, not measured
                keystroke("%" + query)
            # The floor is the same keystroke on a line without a token (nothing to rank),
            # taken between the queries so that both see the same load.
            floor: list[float] = []
            latencies: list[float] = []
            tops: list[list[str]] = []
            rss_half: dict[str, int] = {}
            measured = queries[20:]
            for i, query in enumerate(measured):
                if i % self.sizes.floor_every == 0:
                    result, seconds = keystroke(f"no token here {i}")
                    assert result is None, result
                    floor.append(seconds)
                result, seconds = keystroke("%" + query)
                if result is None:
                    raise ServerError(f"no completion for %{query} with {count} snippets")
                latencies.append(seconds)
                tops.append([item["label"][1:] for item in result["items"]])
                if i == len(measured) // 2:
                    rss_half = memory_kib(conn.pid)
            rss_end = memory_kib(conn.pid)
            self._completion_row(tier, count, floor, latencies, tops)
            if tier == 0:
                self.floor = statistics.median(floor)
                self.expand_over_stdio(conn)
                self.edit_over_stdio(conn)
            if tier == 1:
                self._rss_row(count, len(measured), rss_half, rss_end)
                self.reload(conn, settings, table)
        finally:
            conn.close()

    def _completion_row(
        self,
        tier: int,
        count: int,
        floor: list[float],
        latencies: list[float],
        tops: list[list[str]],
    ) -> None:
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        floor50 = statistics.median(floor)
        reference = f"floor {ms(floor50)} ms (p50 {p50 / floor50:.1f}x floor)"
        details: dict[str, Any] = {
            "snippets": count,
            "queries": len(latencies),
            "p50_ms": ms(p50),
            "p99_ms": ms(p99),
            "floor_p50_ms": ms(floor50),
            "floor_p99_ms": ms(percentile(floor, 0.99)),
        }
        js_times = self.js_ranking.get(count)
        if js_times:
            js50 = percentile(js_times, 0.5)
            same = sum(1 for a, b in zip(tops, self.ranking_tops[count], strict=True) if a == b)
            reference += f"; pi-tui fuzzyFilter in V8: p50 {ms(js50)} ms"
            if same != len(tops):
                reference += f", ORDER DIFFERS for {len(tops) - same} queries"
            details["js_fuzzy_filter_p50_ms"] = ms(js50)
            details["same_order_as_js"] = same == len(tops)
        targets = {0: "p50 <= 1.5x floor, p99 <= 3 ms", 1: "p50 <= 3x floor, p99 <= 8 ms"}
        self.add(
            Row(
                ["completion_1k", "completion_10k", "completion_100k"][tier],
                f"completion over stdio, {count_label(count)} snippets"
                + (f" of {self.sizes.large_value_chars} chars" if tier == 2 else "")
                + ", new queries (p50 / p99)",
                ms(p50),
                "ms",
                reference,
                targets.get(tier, "p99 <= 50 ms"),
                details,
            )
        )

    def _rss_row(
        self, count: int, completions: int, half: dict[str, int], end: dict[str, int]
    ) -> None:
        peak = end.get("VmHWM")
        self.add(
            Row(
                "peak_rss",
                f"peak RSS, {count_label(count)} snippets of {self.sizes.value_chars} chars, "
                f"{count_label(completions)} completions",
                round(peak / 1024, 1) if peak else None,
                "MB",
                f"RSS after half the completions {half.get('VmRSS', 0) / 1024:.1f} MB, "
                f"after all {end.get('VmRSS', 0) / 1024:.1f} MB",
                "<= 70 MB, flat",
                {"half": half, "end": end},
            )
        )

    def reload(self, conn: Connection, settings: Path, table: dict[str, str]) -> None:
        times: list[float] = []
        sizes: list[int] = []
        first = next(iter(table))
        for i in range(self.sizes.reloads):
            # The editor has the text ready; the figure starts at its write.
            text = settings_text({**table, first: f"{table[first]} (edit {i})"})
            mark = len(conn.notifications)
            start = time.perf_counter()
            write_settings(settings, text)
            conn.notify(
                "workspace/didChangeWatchedFiles",
                {"changes": [{"uri": settings.as_uri(), "type": 2}]},
            )
            seen = conn.wait_notification("snippets/didLoad", mark, timeout=60)
            if seen is None:
                break
            size, arrived, _ = seen
            times.append(arrived - start)
            sizes.append(size)
        count = len(table)
        self.add(
            Row(
                "reload",
                f"reload at {count_label(count)} snippets (file write -> snippets/didLoad)",
                ms(statistics.median(times)) if times else None,
                "ms",
                "—",
                "<= 50 ms",
                {"snippets": count, "reloads": len(times)},
            )
        )
        self.add(
            Row(
                "did_load_size",
                f"snippets/didLoad size at {count_label(count)} snippets",
                sizes[-1] if sizes else None,
                "bytes",
                "on every reload",
                "<= 4 KiB",
                {"snippets": count},
            )
        )

    def expand_over_stdio(self, conn: Connection) -> None:
        expected = expand(self.prose, self.expansion_snippets).text
        times: list[float] = []
        for _ in range(self.sizes.expand_requests):
            result, seconds = conn.timed("snippets/expand", {"text": self.prose})
            assert result["text"] == expected, "snippets/expand differs from the in-process pass"
            times.append(seconds)
        self.add(
            Row(
                "expand_stdio",
                f"`snippets/expand` of {size_label(len(self.prose.encode()))} prose, "
                "end to end over stdio",
                ms(statistics.median(times)),
                "ms",
                f"best {ms(min(times))} ms",
                "<= 25 ms",
                {"median_ms": ms(statistics.median(times)), "best_ms": ms(min(times))},
            )
        )

    def edit_over_stdio(self, conn: Connection) -> None:
        lines = self.sizes.document_lines
        uri = "file:///bench/long.md"
        start = time.perf_counter()
        conn.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "markdown",
                    "version": 1,
                    "text": document_text(lines),
                }
            },
        )
        conn.request(
            "textDocument/completion",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 4}},
        )
        opened = time.perf_counter() - start
        rng = random.Random(SEED + 2)
        times: list[float] = []
        for version in range(2, 2 + self.sizes.stdio_edits):
            line = rng.randrange(lines)
            change = {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": line, "character": 4},
                            "end": {"line": line, "character": 4},
                        },
                        "text": "x",
                    }
                ],
            }
            _, seconds = conn.timed(
                "textDocument/completion",
                {"textDocument": {"uri": uri}, "position": {"line": line, "character": 5}},
                before=[("textDocument/didChange", change)],
            )
            times.append(seconds)
        conn.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        median = statistics.median(times)
        self.add(
            Row(
                "edit_stdio",
                f"one-character edit in a {count_label(lines)}-line document, over stdio "
                "(didChange + completion)",
                ms(median),
                "ms",
                f"floor {ms(self.floor)} ms; didOpen {ms(opened)} ms",
                "<= 5 ms",
                {"lines": lines, "max_ms": ms(max(times)), "open_ms": ms(opened)},
            )
        )


def machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    node = shutil.which("node")
    node_version = None
    if node:
        node_version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    ).stdout.strip()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "system": platform.platform(),
        "python": platform.python_version(),
        "node": node_version,
        "commit": commit or None,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.4g}"


def measured(row: Row) -> str:
    if row.value is None:
        return "n/a"
    text = f"{number(row.value)} {row.unit}"
    if "p99_ms" in row.details:
        text += f" / p99 {number(row.details['p99_ms'])} ms"
    return text


def print_table(rows: Sequence[Row]) -> None:
    header = ("what", "measured", "reference", "target")
    table = [(row.what, measured(row), row.reference, row.target) for row in rows]
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for line in table:
        print("| " + " | ".join(line) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, seconds (for CI)")
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
        print("in-process ...", file=sys.stderr, flush=True)
        bench.expansion()
        bench.document_edit()
        print("startup ...", file=sys.stderr, flush=True)
        bench.startup()
        for tier, count in enumerate(sizes.completion_counts):
            print(f"server with {count_label(count)} snippets ...", file=sys.stderr, flush=True)
            bench.completion_run(tier)
    order = [
        "expansion_prose",
        "expansion_dense",
        "expand_stdio",
        "completion_1k",
        "completion_10k",
        "completion_100k",
        "reload",
        "did_load_size",
        "edit_in_process",
        "edit_stdio",
        "startup",
        "peak_rss",
    ]
    rows = sorted(bench.rows, key=lambda row: order.index(row.id))
    info["load_average_after"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    results = {
        "quick": args.quick,
        "seconds": round(time.perf_counter() - began, 1),
        "machine": info,
        "rows": [row.to_json() for row in rows],
    }
    args.output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print_table(rows)
    print(
        f"\n{info['cpu']}, {info['cores']} cores, Python {info['python']}, node {info['node']}; "
        f"load average {info['load_average']} -> {info['load_average_after']}; "
        f"{results['seconds']} s. Results: {args.output}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
