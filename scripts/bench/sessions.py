"""The daemon's rows with a target each (issue 24), measured on a real ``--socket`` daemon.

Run by ``daemon.py`` (its table and JSON carry these rows beside the older measures):

- ``sessions_throughput``: 50 sessions pipelining ``snippets/expand`` together (each
  keeps ``DEPTH`` requests in flight; a prompt of 4 KB with a marker every ~12 words,
  100 snippets in the user's settings file) reach at least 0.8x the requests per second
  of one session alone doing the same. Rounds alternate (alone, together, ...) and each
  mode keeps its best round, so a burst of other work on the machine falls on both;
- ``idle_session_rss``: what an idle session costs the daemon's resident memory, at most
  200 KiB: ``IDLE`` sessions connect, ``initialize``, send ``initialized`` and one short
  ``snippets/expand`` (so their first generation is loaded), and stay open; the growth of
  ``VmRSS`` (/proc/PID/status) divided by their number;
- ``session_churn_rss``: 1,000 sessions opened (``initialize``, one request) and closed,
  ``BATCH`` at once, leave the daemon's RSS within 10% of where it started. "Where it
  started" is measured after a warm-up of ``WARM_UP`` such batches (250 sessions): the
  first sessions import code, fill caches and bring Python's allocator to its steady
  state, a one-time cost, not what churn costs. That state takes a few hundred sessions,
  not one batch: pymalloc returns an arena (1 MiB) only once every object in it is
  freed, and the few long-lived objects made meanwhile (caches, generated code) keep
  some of the arenas the ended sessions used; with two batches of warm-up the next 250
  sessions still added ~11 MiB, and the 750 after them nothing (the RSS after each
  quarter is in the details, and the RSS before the warm-up);
- ``long_request_tokens`` and ``other_session_latency``: the semantic tokens of a 4 MB
  document in at most 0.5 s, send to the whole answer read (the median of each shape,
  the worst shape reported: prose with a marker every ~12 words, and a marker every 7
  characters, the most tokens 4 MB can hold); while one session keeps asking for them,
  another session's ``snippets/expand`` (one every 5 ms) answered within 50 ms at p99.

RSS is sampled after a settle: the daemon is left alone until ``VmRSS`` stops moving
(three equal samples 0.1 s apart, 3 s at most); nothing forces a collection in it.
Nothing here asserts: ``met`` says whether the target held in this run.
"""

from __future__ import annotations

import json
import os
import random
import re
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pi_snippets_lsp.wire.framing import FrameDecoder, encode, frame, parse_message

from .report import Row
from .shapes import prose_markers, snippet_table
from .sizes import SEED

SERVER = [sys.executable, "-m", "pi_snippets_lsp"]
KIB = 1024
MB = 1_000_000
WAIT = 60.0
LISTENING = re.compile(r"listening on unix:(\S+)")

#: Sessions that pipeline together, and the requests each keeps in flight.
SESSIONS = 50
DEPTH = 8
#: Idle sessions opened for ``idle_session_rss`` (``--quick``: fewer).
IDLE = 200
#: Sessions open at once in ``session_churn_rss``, and the batches of its warm-up.
BATCH = 50
WARM_UP = 5
#: Snippets in the user's settings file, and their length.
SNIPPETS = 100
VALUE_CHARS = 200
PROMPT_BYTES = 4096

THROUGHPUT_TARGET = 0.8
IDLE_TARGET_KIB = 200
CHURN_TARGET = 0.10
TOKENS_TARGET_S = 0.5
LATENCY_TARGET_MS = 50.0


def rss(pid: int) -> int:
    """Resident memory of a process, in bytes (``VmRSS``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(match[1]) * 1024 if match else 0


def settled_rss(pid: int, most: float = 3.0) -> int:
    """``VmRSS`` once it stops moving: three equal samples 0.1 s apart (``most`` seconds
    at most), after a first pause that lets closed sessions be released."""
    time.sleep(0.3)
    deadline = time.monotonic() + most
    samples = [rss(pid)]
    while time.monotonic() < deadline:
        time.sleep(0.1)
        samples.append(rss(pid))
        if len(samples) >= 3 and len(set(samples[-3:])) == 1:
            break
    return samples[-1]


# --------------------------------------------------------------------------- the daemon


@contextmanager
def socket_daemon(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A ``--socket`` daemon with ``SNIPPETS`` snippets in its user settings file, in a
    short folder of its own under /tmp (a socket path has 108 bytes at most)."""
    folder = Path(tempfile.mkdtemp(prefix="pb-", dir="/tmp"))
    try:
        snippets = snippet_table("words", SNIPPETS, VALUE_CHARS, SEED)
        settings = json.dumps({"piSimpleSnippets": {"snippets": snippets}})
        (folder / "settings.json").write_text(settings)
        path = str(folder / "s")
        process = subprocess.Popen(
            [*SERVER, "--socket", path, "--max-connections", "2048", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(folder)},
            text=True,
        )
        assert process.stderr is not None
        for line in process.stderr:
            if LISTENING.search(line):
                break
        else:
            raise RuntimeError("the daemon never listened")
        threading.Thread(target=process.stderr.read, daemon=True).start()
        try:
            yield process, path
        finally:
            process.terminate()
            process.wait(WAIT)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def names() -> list[str]:
    return list(snippet_table("words", SNIPPETS, VALUE_CHARS, SEED))


class Session:
    """One blocking connection to the daemon's socket."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT)
        self.sock.connect(path)
        self.decoder = FrameDecoder(max_body=1 << 30)
        self.pending: list[bytes] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(encode(message))

    def body(self) -> bytes:
        """The next message's body."""
        while not self.pending:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("the daemon closed the connection")
            self.decoder.feed(data)
            self.pending.extend(b for b in self.decoder.frames() if isinstance(b, bytes))
        return self.pending.pop(0)

    def response(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = parse_message(self.body())
            if (
                isinstance(message, dict)
                and message.get("id") == msg_id
                and "method" not in message
            ):
                return message

    def answered(self, msg_id: int) -> None:
        """Wait for the answer to ``msg_id`` without decoding any message but its id."""
        marker = b'"id":%d,' % msg_id
        while True:
            body = self.body()
            if marker in body[:64] and b'"method"' not in body[:64]:
                return

    def open(self, snippets: dict[str, str] | None = None) -> None:
        """``initialize`` (the client's default options, and ``snippets`` as the
        client's own when given), then ``initialized``."""
        options = {} if snippets is None else {"piSimpleSnippets": {"snippets": snippets}}
        params = {"capabilities": {}, "initializationOptions": options}
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        self.response(1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def expand(self, msg_id: int, text: str) -> dict[str, Any]:
        self.send(
            {"jsonrpc": "2.0", "id": msg_id, "method": "snippets/expand", "params": {"text": text}}
        )
        return self.response(msg_id)

    def close(self) -> None:
        self.sock.close()


def open_sessions(path: str, count: int, first: str) -> list[Session]:
    """``count`` sessions, each initialized and answered one ``snippets/expand``."""
    sessions = []
    for _ in range(count):
        session = Session(path)
        session.open()
        assert "result" in session.expand(2, f"%{first}")
        sessions.append(session)
    return sessions


# --------------------------------------------------------------------------- throughput


def expand_request(msg_id: int, text: str) -> bytes:
    return encode(
        {"jsonrpc": "2.0", "id": msg_id, "method": "snippets/expand", "params": {"text": text}}
    )


def pipelined(sessions: list[Session], per_session: int, depth: int, text: str) -> float:
    """Seconds until each session has ``per_session`` answers, every one keeping
    ``depth`` requests in flight (a new one sent as each answer arrives). One thread
    drives every socket (``selectors``), so the client costs the same in both modes."""
    params = json.dumps({"text": text}).encode()
    selector = selectors.DefaultSelector()
    state: dict[int, dict[str, Any]] = {}

    def request(msg_id: int) -> bytes:
        body = b'{"jsonrpc":"2.0","id":%d,"method":"snippets/expand","params":%s}' % (
            msg_id,
            params,
        )
        return frame(body)

    for session in sessions:
        session.sock.setblocking(False)
        first = min(depth, per_session)
        state[session.sock.fileno()] = {
            "session": session,
            "sent": first,
            "answered": 0,
            "out": b"".join(request(1000 + i) for i in range(first)),
        }
        selector.register(session.sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
    left = len(sessions)
    started = time.perf_counter()
    while left:
        for key, events in selector.select(WAIT):
            entry = state[key.fd]
            session = entry["session"]
            if events & selectors.EVENT_WRITE and entry["out"]:
                sent = session.sock.send(entry["out"])
                entry["out"] = entry["out"][sent:]
            if events & selectors.EVENT_READ:
                data = session.sock.recv(1 << 20)
                if not data:
                    raise ConnectionError("the daemon closed a connection")
                session.decoder.feed(data)
                for item in session.decoder.frames():
                    if not isinstance(item, bytes):
                        continue
                    if b'"result"' not in item[:64] and b'"error"' in item:
                        raise RuntimeError(item[:300].decode(errors="replace"))
                    entry["answered"] += 1
                    if entry["sent"] < per_session:
                        entry["out"] += request(1000 + entry["sent"])
                        entry["sent"] += 1
                if entry["answered"] >= per_session:
                    selector.unregister(session.sock)
                    left -= 1
                    continue
            mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if entry["out"] else 0)
            selector.modify(session.sock, mask)
    elapsed = time.perf_counter() - started
    selector.close()
    for session in sessions:
        session.sock.setblocking(True)
        session.sock.settimeout(WAIT)
    return elapsed


def sessions_throughput(quick: bool) -> list[Row]:
    table = names()
    text = prose_markers(PROMPT_BYTES, table, random.Random(SEED))
    total = 400 if quick else 3000
    rounds = 1 if quick else 3
    with socket_daemon() as (_process, path):
        sessions = open_sessions(path, SESSIONS, table[0])
        pipelined(sessions, DEPTH, DEPTH, text)  # warm-up: every session's first answers
        alone: list[float] = []
        together: list[float] = []
        for _ in range(rounds):
            alone.append(total / pipelined(sessions[:1], total, DEPTH, text))
            together.append(total / pipelined(sessions, total // SESSIONS, DEPTH, text))
        for session in sessions:
            session.close()
    ratio = max(together) / max(alone)
    return [
        Row(
            id="sessions_throughput",
            what=f"{SESSIONS} sessions pipelining snippets/expand, vs one alone",
            value=round(ratio, 3),
            unit="x",
            reference=f"one session alone: {max(alone):,.0f} requests/s",
            target=f">= {THROUGHPUT_TARGET}x",
            met=ratio >= THROUGHPUT_TARGET,
            details={
                "sessions": SESSIONS,
                "in_flight_each": DEPTH,
                "prompt_bytes": len(text.encode()),
                "requests_per_round": total,
                "alone_rps": [round(r) for r in alone],
                "together_rps": [round(r) for r in together],
            },
        )
    ]


# --------------------------------------------------------------------------- memory


def idle_session_rss(quick: bool) -> list[Row]:
    count = 20 if quick else IDLE
    first = names()[0]
    with socket_daemon() as (process, path):
        for session in open_sessions(path, 20, first):  # warm-up: imports, caches
            session.close()
        before = settled_rss(process.pid)
        sessions = open_sessions(path, count, first)
        after = settled_rss(process.pid)
        for session in sessions:
            session.close()
    each = (after - before) / count / KIB
    return [
        Row(
            id="idle_session_rss",
            what="daemon RSS per idle initialized session",
            value=round(each, 1),
            unit="KiB",
            reference=f"{count} sessions: {before / KIB / KIB:.1f} -> {after / KIB / KIB:.1f} MiB",
            target=f"<= {IDLE_TARGET_KIB} KiB",
            met=each <= IDLE_TARGET_KIB,
            details={"sessions": count, "rss_before": before, "rss_after": after},
        )
    ]


def churn(path: str, count: int, batch: int, first: str) -> None:
    """``count`` sessions opened, answered one request and closed, ``batch`` at a time."""
    for start in range(0, count, batch):
        for session in open_sessions(path, min(batch, count - start), first):
            session.close()


def session_churn_rss(quick: bool) -> list[Row]:
    count = 100 if quick else 1000
    batch = 10 if quick else BATCH
    first = names()[0]
    with socket_daemon() as (process, path):
        started = settled_rss(process.pid)
        churn(path, WARM_UP * batch, batch, first)  # (see the module's docstring)
        before = settled_rss(process.pid)
        trace = []  # the RSS after each quarter: growth that stops is no leak
        for _ in range(4):
            churn(path, count // 4, batch, first)
            trace.append(settled_rss(process.pid))
        after = trace[-1]
    growth = (after - before) / before
    return [
        Row(
            id="session_churn_rss",
            what=f"daemon RSS after {count:,} sessions opened and closed",
            value=round(100 * growth, 1),
            unit="%",
            reference=f"{before / KIB / KIB:.1f} -> {after / KIB / KIB:.1f} MiB",
            target=f"within {100 * CHURN_TARGET:g}%",
            met=abs(growth) <= CHURN_TARGET,
            details={
                "sessions": count,
                "at_once": batch,
                "warm_up_sessions": WARM_UP * batch,
                "rss_at_start": started,
                "rss_before": before,
                "rss_after": after,
                "rss_kib_each_quarter": [rss // KIB for rss in trace],
            },
        )
    ]


# --------------------------------------------------------------------------- long requests


def latencies(session: Session, count: int, until: Callable[[], bool]) -> list[float]:
    """``snippets/expand`` of a short text, one every 5 ms: ``count`` at least, and more
    until ``until()``."""
    samples = []
    i = 0
    while i < count or not until():
        i += 1
        time.sleep(0.005)
        started = time.perf_counter()
        session.expand(10 + i, "%a")
        samples.append(time.perf_counter() - started)
    return samples


def percentile_ms(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] * 1000, 2)


def long_requests(quick: bool) -> list[Row]:
    size = MB if quick else 4 * MB
    wanted = 2 if quick else 4
    shapes = {
        # A prompt's prose with a marker every ~12 words (the bench's busiest prose).
        "prose": prose_markers(size, ["a"], random.Random(SEED))[:size],
        # A marker every 7 characters: the most tokens a text of that size can have.
        "dense": ("x %a y " * (size // 7 + 1))[:size],
    }
    with socket_daemon() as (_process, path):
        other = Session(path)
        other.open({"a": "A"})
        idle = latencies(other, 50 if quick else 200, lambda: True)
        busy = Session(path)
        busy.open({"a": "A"})
        for shape, text in shapes.items():
            item = {"uri": f"untitled:{shape}", "languageId": "markdown", "version": 1}
            busy.send(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": {**item, "text": text}},
                }
            )
        stop = threading.Event()
        took: dict[str, list[float]] = {shape: [] for shape in shapes}

        def keep_busy() -> None:
            """Semantic tokens of each shape in turn, one request at a time."""
            i = 0
            while not stop.is_set():
                i += 1
                shape = list(shapes)[i % len(shapes)]
                params = {"textDocument": {"uri": f"untitled:{shape}"}}
                started = time.perf_counter()
                busy.send(
                    {
                        "jsonrpc": "2.0",
                        "id": 1000 + i,
                        "method": "textDocument/semanticTokens/full",
                        "params": params,
                    }
                )
                busy.answered(1000 + i)
                took[shape].append(time.perf_counter() - started)

        def enough() -> bool:
            return all(len(times) >= wanted for times in took.values())

        worker = threading.Thread(target=keep_busy, daemon=True)
        worker.start()
        loaded = latencies(other, 50 if quick else 200, enough)
        stop.set()
        worker.join(WAIT)
        other.close()
        busy.close()
    medians = {shape: round(statistics.median(times), 3) for shape, times in took.items()}
    worst = max(medians, key=lambda shape: medians[shape])
    p99 = percentile_ms(loaded, 0.99)
    return [
        Row(
            id="long_request_tokens",
            what=f"semantic tokens of a {size // MB} MB document over the socket (median, "
            "worst shape)",
            value=medians[worst],
            unit="s",
            reference=", ".join(f"{shape} {medians[shape]} s" for shape in shapes),
            target=f"<= {TOKENS_TARGET_S} s",
            met=medians[worst] <= TOKENS_TARGET_S,
            details={
                "document_mb": size / MB,
                "worst_shape": worst,
                "median_s": medians,
                "seconds": {shape: [round(t, 3) for t in times] for shape, times in took.items()},
            },
        ),
        Row(
            id="other_session_latency",
            what="another session's snippets/expand meanwhile (p99)",
            value=p99,
            unit="ms",
            reference=f"idle daemon: p99 {percentile_ms(idle, 0.99)} ms",
            target=f"<= {LATENCY_TARGET_MS:g} ms",
            met=p99 <= LATENCY_TARGET_MS,
            details={
                "document_mb": size / MB,
                "samples": len(loaded),
                "p50_ms": percentile_ms(loaded, 0.5),
                "max_ms": round(max(loaded) * 1000, 2),
                "idle": {
                    "p50_ms": percentile_ms(idle, 0.5),
                    "p99_ms": percentile_ms(idle, 0.99),
                    "max_ms": round(max(idle) * 1000, 2),
                },
            },
        ),
    ]


#: Each measure and the rows it makes, in the order they run.
MEASURES: dict[str, Callable[[bool], list[Row]]] = {
    "sessions_throughput": sessions_throughput,
    "idle_session_rss": idle_session_rss,
    "session_churn_rss": session_churn_rss,
    "long_requests": long_requests,
}
