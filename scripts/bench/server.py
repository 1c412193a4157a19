"""A ``pi-snippets-lsp`` child process, spoken to as a plain LSP client over stdio.

The JSON-RPC is the package's own client transport (``client.transport.Connection``).
What the bench adds is the clock: a keystroke's time runs from the moment its first
message is written to the pipe (``_write``) to the moment the chunk that completed its
answer was read (``_StampedReader``, stamped before the answer is parsed; ``observe``
takes the stamp for each message), so a latency is the server's and the pipe's, not the
bench's own bookkeeping or thread switches.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pi_snippets_lsp.client.errors import ServerExitedError, SnippetsClientError
from pi_snippets_lsp.client.transport import Connection

from .sizes import TIMEOUT

SERVER = [sys.executable, "-m", "pi_snippets_lsp"]


class BenchError(RuntimeError):
    """The server did not do what the measure needs (it answered wrong, or died)."""


@dataclass(frozen=True)
class Notice:
    """A notification from the server: method, compact JSON size, arrival, params."""

    method: str
    size: int
    arrived: float
    params: Any


class _StampedReader:
    """The server's stdout, stamping when each chunk arrives (before it is parsed)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._stream = stream
        self.arrived = 0.0

    def read1(self, size: int = 65536) -> bytes:
        data = os.read(self._fd, size)
        self.arrived = time.perf_counter()
        return data

    def read(self, size: int = -1) -> bytes:
        return self.read1(65536 if size < 0 else size)

    def close(self) -> None:
        self._stream.close()


class BenchServer:
    """One server process with ``settings``; ``started`` is the moment it was spawned."""

    def __init__(self, work: Path, settings: Path, tag: str) -> None:
        self._log = (work / f"server-{tag}.log").open("wb")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*SERVER, "--settings", str(settings)],
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(work)},
        )
        assert self.proc.stdout is not None
        self._reader = _StampedReader(self.proc.stdout)
        #: When each write to the server's stdin began.
        self.writes: list[float] = []
        self.notifications: list[Notice] = []
        self._changed = threading.Condition()
        #: When the latest response arrived (one request is in flight at a time).
        self.response_arrived = 0.0
        self.connection = Connection(
            self._reader,  # type: ignore[arg-type]  # read1 and close are what it uses
            self._write,
            answer=self._answer,
            lost=self._lost,
            observe=self._observe,
            name="pi-snippets-bench",
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    # ------------------------------------------------------------------ transport hooks

    def _write(self, data: bytes) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        self.writes.append(time.perf_counter())
        stdin.write(data)
        stdin.flush()

    def _answer(self, method: str, params: Any) -> Any:
        """The server never waits on the bench: ``null`` for everything, one per item
        of ``workspace/configuration``."""
        if method == "workspace/configuration" and isinstance(params, dict):
            return [None] * len(params.get("items", []))
        return None

    def _lost(self, reason: str) -> ServerExitedError:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1.0)
        with self._changed:
            self._changed.notify_all()
        return ServerExitedError(reason, self.proc.poll())

    def _observe(self, message: dict[str, Any]) -> None:
        arrived = self._reader.arrived
        method = message.get("method")
        if method is None:
            self.response_arrived = arrived
            return
        if "id" not in message:
            size = len(json.dumps(message, separators=(",", ":")).encode())
            with self._changed:
                self.notifications.append(Notice(method, size, arrived, message.get("params")))
                self._changed.notify_all()

    # ------------------------------------------------------------------ requests

    def notify(self, method: str, params: object) -> None:
        self.connection.notify(method, params)

    def request(self, method: str, params: object, timeout: float = TIMEOUT) -> Any:
        try:
            return self.connection.request(method, params, timeout=timeout)
        except SnippetsClientError as exc:
            raise BenchError(str(exc)) from exc

    def timed(
        self, method: str, params: object, before: Iterable[tuple[str, object]] = ()
    ) -> tuple[Any, float]:
        """Send the ``before`` notifications and one request: (result, seconds from the
        first write to the answer's arrival)."""
        mark = len(self.writes)
        for name, notification in before:
            self.notify(name, notification)
        result = self.request(method, params)
        return result, self.response_arrived - self.writes[mark]

    def initialize(self) -> float:
        """``initialize`` as a plain client; seconds from spawn to its answer."""
        self.request(
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
        return self.response_arrived - self.started

    def wait_notification(self, method: str, after: int, timeout: float = TIMEOUT) -> Notice | None:
        """The first ``method`` notification past the first ``after``, or None when none
        comes in time (or the server is gone)."""
        deadline = time.perf_counter() + timeout
        with self._changed:
            while True:
                for notice in self.notifications[after:]:
                    if notice.method == method:
                        return notice
                after = len(self.notifications)
                remaining = deadline - time.perf_counter()
                if remaining <= 0 or self.connection.dead is not None:
                    return None
                self._changed.wait(remaining)

    def start(self, count: int) -> float:
        """``initialize``, ``initialized``, and wait for the first load of ``count``
        snippets (a server without ``snippets/didLoad`` is asked for its list); seconds
        from spawn to the answer to ``initialize``."""
        initialized = self.initialize()
        mark = len(self.notifications)
        self.notify("initialized", {})
        loaded = self.wait_notification("snippets/didLoad", mark)
        if loaded is None:
            self.request("snippets/list", {})
        elif isinstance(loaded.params, dict) and loaded.params.get("count", count) != count:
            raise BenchError(
                f"the server loaded {loaded.params.get('count')} of {count} snippets: "
                f"{loaded.params.get('warnings')}"
            )
        return initialized

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None, timeout=30)
                self.notify("exit", None)
                self.proc.wait(timeout=30)
        except (BenchError, SnippetsClientError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            self.connection.stop_writing(5)
            self.connection.close_reader(5)
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            self._log.close()


class Prompt:
    """A one-line prompt document open in ``server``: each keystroke replaces the line."""

    def __init__(self, server: BenchServer, uri: str = "file:///bench/prompt.md") -> None:
        self.server = server
        self.uri = uri
        self.version = 1
        self.text = ""
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": ""}},
        )

    def keystroke(self, text: str) -> tuple[Any, float]:
        """The line becomes ``text``; complete at its end: (result, seconds)."""
        old = self.text
        self.version += 1
        self.text = text
        change = {
            "textDocument": {"uri": self.uri, "version": self.version},
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
        return self.server.timed(
            "textDocument/completion",
            {"textDocument": {"uri": self.uri}, "position": {"line": 0, "character": len(text)}},
            before=[("textDocument/didChange", change)],
        )


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
