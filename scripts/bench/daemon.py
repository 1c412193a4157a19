#!/usr/bin/env python3
"""What one client may cost the daemon, measured (issue 22; docs/lsp.md, "Daemon: who may
connect, and what one client may cost").

    python scripts/bench/daemon.py            # the full run (about a minute)
    python scripts/bench/daemon.py --quick    # small sizes, in seconds

The rows with a target (``sessions.py``, on a ``--socket`` daemon; each says whether its
target was met): 50 sessions pipelining ``snippets/expand`` beside one alone, the RSS of
an idle session, the RSS left by 1,000 sessions opened and closed, the semantic tokens of
a 4 MB document and another session's latency meanwhile. The other measures:

- RSS growth of a ``--tcp`` and a ``--ws`` daemon while a client pipelines ``snippets/list``
  requests whose answers (~0.5 MB each, 250 MB in all) it never reads (/proc/PID/status,
  sampled every 50 ms; the bound is ``--max-unsent``, 8 MiB);
- in-process CPU time of semantic tokens on one long line at 1, 4 and 16 MB, and of hover
  at the end of a 16 MB line (the cost of one pass of encoding the line beside it);
- seconds from SIGTERM to the end of a stdio server whose stdout is full, and of a
  daemon busy with semantic tokens of a 16 MB document (the design says 2 at most).

Every input is generated here; nothing touches the network; servers listen on loopback.
Nothing here asserts a time: the tests judge behavior (tests/lsp/test_daemon_limits.py,
tests/lsp/test_daemon_sessions.py, tests/lsp/test_signals.py,
tests/unit/test_long_lines.py), this script measures. It prints the rows, then the other
measures, and writes ``bench-daemon-results.json`` (``--output`` to change where): a row
as ``report.Row.to_json`` (id, what, value, unit, reference, target, met, details)
under its id, a measure's figures under its name.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "server"), str(REPO)]

from scripts.bench import sessions  # noqa: E402
from scripts.bench.report import Row, met_label  # noqa: E402

from pi_snippets_lsp.core.documents import Document  # noqa: E402
from pi_snippets_lsp.core.hover import marker_on_line  # noqa: E402
from pi_snippets_lsp.core.semantic_tokens import semantic_tokens  # noqa: E402
from pi_snippets_lsp.wire.framing import FrameDecoder, encode, parse_message  # noqa: E402

SERVER = [sys.executable, "-m", "pi_snippets_lsp"]
MIB = 1024 * 1024
MB = 1_000_000
WAIT = 60.0
LISTENING = re.compile(r"listening on (?:(tcp|ws)://[^:]+:(\d+)|unix:(\S+))")


def rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(match[1]) * 1024 if match else 0


class Daemon:
    def __init__(self, flag: str, home: Path, *args: str) -> None:
        runtime = home / "run"
        runtime.mkdir(mode=0o700, exist_ok=True)
        self.token_file = runtime / "pi-snippets-lsp" / "token"
        self.process = subprocess.Popen(
            [*SERVER, flag, "--port", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(home), "XDG_RUNTIME_DIR": str(runtime)},
            text=True,
        )
        assert self.process.stderr is not None
        self.port = 0
        for line in self.process.stderr:
            if match := LISTENING.search(line):
                self.port = int(match[2])
                break
        threading.Thread(target=self.process.stderr.read, daemon=True).start()

    def token(self) -> str:
        return self.token_file.read_text().strip()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(WAIT)


class Raw:
    def __init__(self, daemon: Daemon) -> None:
        self.sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=WAIT)
        self.token = daemon.token()
        self.decoder = FrameDecoder()
        self.pending: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(encode(message))

    def response(self, msg_id: int) -> dict[str, Any]:
        while True:
            while self.pending:
                message = self.pending.pop(0)
                if message.get("id") == msg_id and "method" not in message:
                    return message
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed")
            self.decoder.feed(data)
            for item in self.decoder.frames():
                if isinstance(item, bytes) and isinstance(message := parse_message(item), dict):
                    self.pending.append(message)

    def handshake(self, snippets: dict[str, str]) -> None:
        options = {
            "token": self.token,
            "pollInterval": 0,
            "piSimpleSnippets": {"snippets": snippets},
        }
        params = {"capabilities": {}, "initializationOptions": options}
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        self.response(1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})


def big_settings(home: Path) -> None:
    snippets = {f"s{i}": f"{i} " + "x" * 4096 for i in range(128)}
    (home / "settings.json").write_text(json.dumps({"piSimpleSnippets": {"snippets": snippets}}))


def list_requests(count: int) -> bytes:
    return b"".join(
        encode({"jsonrpc": "2.0", "id": 100 + i, "method": "snippets/list", "params": {}})
        for i in range(count)
    )


def peak_during(pid: int, seconds: float) -> int:
    peak = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        peak = max(peak, rss(pid))
        time.sleep(0.05)
    return peak


# --------------------------------------------------------------------------- measures


def never_reading_tcp(quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        big_settings(home)
        daemon = Daemon("--tcp", home)
        try:
            hog = Raw(daemon)
            hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            hog.handshake({})
            before = rss(daemon.process.pid)
            count = 100 if quick else 500
            data = list_requests(count)
            hog.sock.settimeout(0.5)

            def flood() -> None:
                view = memoryview(data)
                while view:
                    try:
                        view = view[hog.sock.send(view) :]
                    except TimeoutError:
                        continue
                    except OSError:
                        return

            threading.Thread(target=flood, daemon=True).start()
            peak = peak_during(daemon.process.pid, 2 if quick else 6)
            return {
                "answers_asked_mb": round(count * 0.55, 1),
                "rss_growth_mib": round((peak - before) / MIB, 1),
                "bound_mib": 8,
            }
        finally:
            daemon.stop()


def never_reading_ws(quick: bool) -> dict[str, Any]:
    try:
        connect = importlib.import_module("websockets.sync.client").connect
    except ImportError:
        return {"skipped": "websockets is not installed"}
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        big_settings(home)
        daemon = Daemon("--ws", home)
        try:
            url = f"ws://127.0.0.1:{daemon.port}"
            with connect(url, open_timeout=WAIT, max_queue=1, max_size=None) as ws:
                options = {"token": daemon.token(), "pollInterval": 0}
                params = {"capabilities": {}, "initializationOptions": options}
                ws.send(
                    json.dumps(
                        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
                    )
                )
                ws.recv(timeout=WAIT)
                before = rss(daemon.process.pid)
                count = 100 if quick else 500

                def flood() -> None:
                    try:
                        for i in range(count):
                            ws.send(
                                json.dumps(
                                    {"jsonrpc": "2.0", "id": 100 + i, "method": "snippets/list"}
                                )
                            )
                    except Exception:
                        return

                threading.Thread(target=flood, daemon=True).start()
                peak = peak_during(daemon.process.pid, 2 if quick else 6)
                ws.close_socket()
            return {
                "answers_asked_mb": round(count * 0.55, 1),
                "rss_growth_mib": round((peak - before) / MIB, 1),
                "bound_mib": 8,
            }
        finally:
            daemon.stop()


def thread_cost(work: Callable[[], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.thread_time()
        work()
        best = min(best, time.thread_time() - started)
    return best


def long_lines(quick: bool) -> dict[str, Any]:
    unit = "lorem ipsum dolor sit amet, " * 10 + "%a "
    sizes = [MB // 4, MB] if quick else [MB, 4 * MB, 16 * MB]
    tokens: dict[str, float] = {}
    for size in sizes:
        document = Document(uri="untitled:x", text=(unit * (size // len(unit) + 1))[:size])
        tokens[f"{size // MB or size / MB}MB_s"] = round(
            thread_cost(lambda d=document: semantic_tokens(d, {"a": "A"}, "utf-16")), 4
        )
    line = ("中文 %a " * (sizes[-1] // 6 + 1))[: sizes[-1]]
    end = len(line.encode("utf-16-le")) // 2
    hover = thread_cost(lambda: marker_on_line(line, end, "utf-16", {"a": "A"}))
    one_pass = thread_cost(lambda: line.encode("utf-16-le"))
    return {
        "semantic_tokens_cpu": tokens,
        "hover_end_of_line_cpu_s": round(hover, 4),
        "one_encoding_pass_cpu_s": round(one_pass, 4),
        "line_mb": sizes[-1] / MB,
    }


def sigterm_stdio_full_stdout(quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        big_settings(home)
        proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(home)},
        )
        assert proc.stdin is not None and proc.stdout is not None
        params = {"capabilities": {}, "initializationOptions": {"pollInterval": 0}}
        proc.stdin.write(
            encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        )
        proc.stdin.flush()
        proc.stdout.read1(65536)  # type: ignore[attr-defined]  # up: answered
        data = list_requests(200)

        def write() -> None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(data)
                proc.stdin.flush()
            except OSError:
                pass

        threading.Thread(target=write, daemon=True).start()
        time.sleep(1 if quick else 2)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            return {"seconds": None, "note": f"still running after {WAIT} s"}
        return {"seconds": round(time.monotonic() - started, 2), "exit_code": code}


def sigterm_busy_daemon(quick: bool) -> dict[str, Any]:
    size = 4 * MB if quick else 16 * MB
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        daemon = Daemon("--tcp", home)
        busy = Raw(daemon)
        busy.handshake({"a": "A"})
        text = ("x %a y " * (size // 7 + 1))[:size]
        item = {"uri": "untitled:big", "languageId": "markdown", "version": 1, "text": text}
        busy.send(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}
        )
        params = {"textDocument": {"uri": "untitled:big"}}
        busy.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "textDocument/semanticTokens/full",
                "params": params,
            }
        )
        time.sleep(1.0)
        started = time.monotonic()
        daemon.process.send_signal(signal.SIGTERM)
        try:
            code = daemon.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            daemon.process.kill()
            return {"seconds": None, "note": f"still running after {WAIT} s"}
        return {
            "seconds": round(time.monotonic() - started, 2),
            "exit_code": code,
            "document_mb": size / MB,
        }


MEASURES: dict[str, Callable[[bool], dict[str, Any]]] = {
    "never_reading_tcp": never_reading_tcp,
    "never_reading_ws": never_reading_ws,
    "long_lines": long_lines,
    "sigterm_stdio_full_stdout": sigterm_stdio_full_stdout,
    "sigterm_busy_daemon": sigterm_busy_daemon,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, in seconds")
    parser.add_argument("--output", default="bench-daemon-results.json", help="the JSON file")
    choices = sorted([*MEASURES, *sessions.MEASURES])
    parser.add_argument("--only", choices=choices, action="append", help="one measure")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    rows: list[Row] = []
    for name, row_measure in sessions.MEASURES.items():
        if args.only and name not in args.only:
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        for row in row_measure(args.quick):
            print(f"  {row.id}: {row.measured()} met: {met_label(row.met)}", file=sys.stderr)
            rows.append(row)
            results[row.id] = row.to_json()
    for name, measure in MEASURES.items():
        if args.only and name not in args.only:
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        results[name] = measure(args.quick)
    print_rows(rows)
    print("| measure | result |")
    print("| --- | --- |")
    for name, result in results.items():
        if name not in {row.id for row in rows}:
            print(f"| {name} | `{json.dumps(result)}` |")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"\nload average at the end: {load}")
    Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def print_rows(rows: Sequence[Row]) -> None:
    """The rows with a target: what was measured beside it, and whether it was met."""
    if not rows:
        return
    print("| measure | what | measured | reference | target | met |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        cells = (row.id, row.what, row.measured(), row.reference, row.target)
        print("| " + " | ".join(cells) + f" | {met_label(row.met)} |")
    print()


if __name__ == "__main__":
    sys.exit(main())
