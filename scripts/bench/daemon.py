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
  daemon busy with semantic tokens of a 16 MB document (the design says 2 at most);
- ``attacks`` (issue 36): for each attack on a ``--tcp`` (``--ws``) daemon, made from a
  process of its own (its threads must not share the measuring client's GIL), the
  daemon's RSS growth over idle while the attack runs, another session's
  ``snippets/expand`` p99 then against its idle p99 (the targets: 64 MiB, 10x), and how
  many new sessions with the token open meanwhile (the WebSocket attack: RSS only).

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
import contextlib
import importlib
import importlib.util
import json
import multiprocessing
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
        self.home = home
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


def big_settings(home: Path, count: int = 128) -> None:
    snippets = {f"s{i}": f"{i} " + "x" * 4096 for i in range(count)}
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


# --------------------------------------------------------------------------- attacks


def expand_latencies(session: Raw, seconds: float, first_id: int) -> list[float]:
    """Seconds of each ``snippets/expand`` of ``session``, one after another."""
    samples = []
    deadline = time.monotonic() + seconds
    msg_id = first_id
    while time.monotonic() < deadline:
        started = time.perf_counter()
        session.send({"jsonrpc": "2.0", "id": msg_id, "method": "snippets/expand",
                      "params": {"text": "%a"}})  # fmt: skip
        session.response(msg_id)
        samples.append(time.perf_counter() - started)
        msg_id += 1
    return samples


def p99_ms(samples: list[float]) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2)


def keep_sending(port: int, data: bytes, stop: threading.Event) -> None:
    """Connect, send ``data`` without reading, again each time the daemon closes us (a
    tenth of a second later: the attack is so many connections at once, not a flood of
    connects)."""
    while not stop.wait(0.1):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                sock.settimeout(0.5)
                view = memoryview(data)
                while view and not stop.is_set():
                    try:
                        view = view[sock.send(view) :]
                    except TimeoutError:
                        continue
                while not stop.is_set():  # hold on, never read, until closed
                    try:
                        if not sock.recv(1, socket.MSG_PEEK):
                            break
                        sock.recv(1 << 16)  # what the daemon answers is dropped unread
                    except TimeoutError:
                        continue
        except OSError:
            time.sleep(0.01)


def attack_pre_init_requests(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    request = {"jsonrpc": "2.0", "id": "i" * 20_000, "method": "m" * 20_000}
    data = encode(request) * (100 if quick else 500)
    for _ in range(4):
        threading.Thread(target=keep_sending, args=(daemon.port, data, stop), daemon=True).start()


def attack_partial_bodies(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    data = b"Content-Length: 60000000\r\n\r\n" + b"x" * (4 if quick else 60) * MIB
    for _ in range(16):
        threading.Thread(target=keep_sending, args=(daemon.port, data, stop), daemon=True).start()


def attack_large_body(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    size = (8 if quick else 60) * MB
    data = encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": "x" * size})
    threading.Thread(target=keep_sending, args=(daemon.port, data, stop), daemon=True).start()


def attack_header_garbage(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    data = b"Content-Length: 5\r\n" * (640 * 1024 // 19)
    for _ in range(4):
        threading.Thread(target=keep_sending, args=(daemon.port, data, stop), daemon=True).start()


def attack_slots(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    for _ in range(64):
        threading.Thread(target=keep_sending, args=(daemon.port, b"", stop), daemon=True).start()


def attack_ws_double_host(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    def loop() -> None:
        host = f"Host: 127.0.0.1:{daemon.port}\r\n".encode()
        request = (
            b"GET / HTTP/1.1\r\n" + host + host + b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", daemon.port), timeout=2) as sock:
                    sock.sendall(request)
                    sock.recv(4096)
            except OSError:
                time.sleep(0.01)

    for _ in range(2):
        threading.Thread(target=loop, daemon=True).start()


def settings_with_problems(count: int, key_size: int = 0) -> str:
    snippets = {f"Bad Name {i} " + "x" * key_size: "v" for i in range(count)}
    return json.dumps({"piSimpleSnippets": {"snippets": snippets}})


def never_read(daemon: Daemon, data: bytes, stop: threading.Event, opening: list[bytes]) -> None:
    """A client with the token that sends ``opening`` then ``data`` and never reads."""
    hog = Raw(daemon)
    hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    hog.handshake({})
    for message in opening:
        hog.sock.sendall(message)
    hog.sock.settimeout(0.5)
    view = memoryview(data)
    while view and not stop.is_set():
        try:
            view = view[hog.sock.send(view) :]
        except TimeoutError:
            continue
        except OSError:
            return
    stop.wait()
    hog.sock.close()


def attack_didchange_storm(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    uri = (daemon.home / "settings.json").as_uri()
    text = settings_with_problems(200, 300)
    item = {"uri": uri, "languageId": "json", "version": 1, "text": text}
    opening = [encode({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": item}})]  # fmt: skip
    data = b"".join(
        encode(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": v},
                    "contentChanges": [{"text": text}],
                },
            }
        )
        for v in range(2, 202 if quick else 602)
    )
    threading.Thread(target=never_read, args=(daemon, data, stop, opening), daemon=True).start()


def attack_early_requests(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    def run() -> None:
        hog = Raw(daemon)
        hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        options = {"token": hog.token, "pollInterval": 0}
        params = {"capabilities": {}, "initializationOptions": options}
        data = (
            encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
            + encode({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            + list_requests(64)
        )
        with contextlib.suppress(OSError):
            hog.sock.sendall(data)
        stop.wait()
        hog.sock.close()

    threading.Thread(target=run, daemon=True).start()


def attack_large_settings_document(daemon: Daemon, stop: threading.Event, quick: bool) -> None:
    uri = (daemon.home / "settings.json").as_uri()
    text = settings_with_problems(2_000 if quick else 12_000)  # 270 KiB in the full run

    def run() -> None:
        with contextlib.suppress(OSError):  # the daemon stops at the end of the measure
            keep_opening(Raw(daemon))

    def keep_opening(hog: Raw) -> None:
        hog.handshake({})
        version = 1
        while not stop.is_set():
            item = {"uri": uri, "languageId": "json", "version": version, "text": text}
            hog.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                      "params": {"textDocument": item}})  # fmt: skip
            hog.send({"jsonrpc": "2.0", "id": version, "method": "snippets/expand",
                      "params": {"text": "x"}})  # fmt: skip
            hog.response(version)
            hog.send({"jsonrpc": "2.0", "method": "textDocument/didClose",
                      "params": {"textDocument": {"uri": uri}}})  # fmt: skip
            version += 1
        hog.sock.close()

    threading.Thread(target=run, daemon=True).start()


ATTACKS: dict[str, tuple[str, Callable[[Daemon, threading.Event, bool], None]]] = {
    "1_pre_init_requests_never_read": ("--tcp", attack_pre_init_requests),
    "2_partial_bodies_x16": ("--tcp", attack_partial_bodies),
    "3_large_body_before_token": ("--tcp", attack_large_body),
    "4_header_garbage_x4": ("--tcp", attack_header_garbage),
    "5_strangers_in_every_slot": ("--tcp", attack_slots),
    "6_ws_two_host_headers": ("--ws", attack_ws_double_host),
    "7_didchange_storm_never_read": ("--tcp", attack_didchange_storm),
    "8_large_settings_document": ("--tcp", attack_large_settings_document),
    "9_early_requests_never_read": ("--tcp", attack_early_requests),
}


def attacks(quick: bool) -> dict[str, Any]:
    """Issue 36's attacks, one daemon each: its RSS growth over idle while the attack
    runs, and another session's ``snippets/expand`` p99 then against idle (the target:
    within 64 MiB and 10x). ``owner_sessions``: new sessions with the token opened while
    the attack runs, of those tried."""
    results: dict[str, Any] = {}
    seconds = 1.5 if quick else 5.0
    for name, (flag, attack) in ATTACKS.items():
        if flag == "--ws" and importlib.util.find_spec("websockets") is None:
            results[name] = {"skipped": "websockets is not installed"}
            continue
        with tempfile.TemporaryDirectory() as folder:
            home = Path(folder)
            if name.startswith("9_"):
                big_settings(home, 512)
            daemon = Daemon(flag, home)
            try:
                results[name] = run_attack(daemon, flag, attack, seconds, quick)
            finally:
                daemon.stop()
    return results


def run_attacker(
    attack: Callable[[Daemon, Any, bool], None], daemon: Daemon, stop: Any, quick: bool
) -> None:
    """The attacker's process: the attack's threads, until ``stop`` is set."""
    attack(daemon, stop, quick)
    stop.wait()
    time.sleep(0.2)  # the threads see the stop and close their connections


def run_attack(
    daemon: Daemon,
    flag: str,
    attack: Callable[[Daemon, threading.Event, bool], None],
    seconds: float,
    quick: bool,
) -> dict[str, Any]:
    other = None if flag == "--ws" else Raw(daemon)
    if other is not None:
        other.handshake({"a": "A"})
    idle_samples = expand_latencies(other, seconds / 2, 1000) if other else []
    idle = rss(daemon.process.pid)
    # The attack runs in a process of its own: its threads must not share this process's
    # GIL with the client whose latency is measured.
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    attacker = context.Process(target=run_attacker, args=(attack, daemon, stop, quick))
    attacker.start()
    peak = [idle]
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            peak[0] = max(peak[0], rss(daemon.process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    time.sleep(0.5)  # the attack under way
    busy_samples = expand_latencies(other, seconds, 100_000) if other else []
    opened = 0
    for _ in range(5 if other else 0):
        try:
            owner = Raw(daemon)
            owner.handshake({"a": "A"})
            owner.sock.close()
            opened += 1
        except (OSError, ConnectionError):
            pass
    if not other:
        time.sleep(seconds)
    sampling.set()
    sampler.join()
    stop.set()
    attacker.join(WAIT)
    if attacker.is_alive():
        attacker.kill()
        attacker.join()
    result: dict[str, Any] = {
        "rss_idle_mib": round(idle / MIB, 1),
        "rss_growth_mib": round((peak[0] - idle) / MIB, 1),
    }
    if other:
        result.update(
            owner_sessions=f"{opened}/5",
            idle_p99_ms=p99_ms(idle_samples),
            p99_ms=p99_ms(busy_samples),
            p99_ratio=round(p99_ms(busy_samples) / max(p99_ms(idle_samples), 0.01), 1),
        )
    return result


MEASURES: dict[str, Callable[[bool], dict[str, Any]]] = {
    "attacks": attacks,
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
