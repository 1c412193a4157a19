"""A raw byte-level client of the real server over stdio, for hostile input.

pytest-lsp frames everything correctly; these tests must send what no LSP client should
(broken headers, bodies that are not JSON, random bytes) and see what comes back. Every
wait has a time limit, so a server that wedges fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_snippets_lsp.wire.framing import FramingError, MessageReader, encode

from .conftest import SERVER

#: Seconds any one answer may take before the server counts as stuck.
STUCK = 15.0


class ServerStuck(AssertionError):
    """No answer within ``STUCK`` seconds."""


class RawServer:
    """``python -m pi_snippets_lsp`` on pipes; messages read on a thread."""

    def __init__(self, home: Path, args: Sequence[str] = ()) -> None:
        self.process = subprocess.Popen(
            [*SERVER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(home)},
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.garbage: list[str] = []
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self._next_id = 1000
        self._send_lock = threading.Lock()

    def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            for message in MessageReader(self.process.stdout):
                if "method" in message and "id" in message:
                    self._answer(message)
                self.messages.put(message)
        except FramingError as exc:  # the server must only ever write frames
            self.garbage.append(str(exc))
        self.messages.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr += line

    def _answer(self, request: dict[str, Any]) -> None:
        """Answer the server's requests as a minimal client does (registrations: null;
        ``workspace/configuration``: null for each item)."""
        result: object = None
        if request["method"] == "workspace/configuration":
            params = request.get("params") or {}
            result = [None for _ in params.get("items", [])]
        with contextlib.suppress(OSError, ValueError):
            self.send_message({"jsonrpc": "2.0", "id": request["id"], "result": result})

    # ------------------------------------------------------------------ sending

    def send(self, data: bytes) -> None:
        """Write bytes (from any thread: one frame is never cut by another's)."""
        assert self.process.stdin is not None
        with self._send_lock:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def send_message(self, message: dict[str, Any]) -> None:
        self.send(encode(message))

    def request(self, method: str, params: object = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_message(message)
        return self._next_id

    def notify(self, method: str, params: object = None) -> None:
        self.send_message({"jsonrpc": "2.0", "method": method, "params": params or {}})

    # ------------------------------------------------------------------ receiving

    def next_message(self, timeout: float = STUCK) -> dict[str, Any] | None:
        """The next message, or None when the server closed its output."""
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise ServerStuck(f"no message within {timeout} s") from None
        if message is not None:
            self.seen.append(message)
        return message

    def response(self, msg_id: object, timeout: float = STUCK) -> dict[str, Any]:
        """The response with ``msg_id`` (messages before it are kept in ``seen``)."""
        return self.first_response([msg_id], timeout)

    def first_response(self, ids: Sequence[object], timeout: float = STUCK) -> dict[str, Any]:
        """The first response to any of ``ids``."""
        while True:
            message = self.next_message(timeout)
            if message is None:
                raise AssertionError(f"the server ended before answering {ids[0]!r}")
            if "method" not in message and message.get("id") in ids:
                return message

    def responses_with_null_id(self) -> list[dict[str, Any]]:
        return [m for m in self.seen if "method" not in m and m.get("id") is None]

    # ------------------------------------------------------------------ the session

    def start(
        self, capabilities: dict[str, Any] | None = None, poll_interval: float = 0
    ) -> dict[str, Any]:
        """``initialize`` + ``initialized``; the first ``snippets/didLoad``'s params."""
        init = self.request(
            "initialize",
            {
                "processId": None,
                "capabilities": capabilities or {},
                "initializationOptions": {
                    "pollInterval": poll_interval,
                    "notifications": ["snippets/didLoad"],
                },
            },
        )
        assert "result" in self.response(init)
        self.notify("initialized")
        while (message := self.next_message()) is not None:
            if message.get("method") == "snippets/didLoad":
                params: dict[str, Any] = message["params"]
                return params
        raise AssertionError("the server ended before its first load")

    def expand(self, text: str, timeout: float = STUCK) -> dict[str, Any]:
        return self.response(self.request("snippets/expand", {"text": text}), timeout)

    def stop(self) -> int:
        """``shutdown`` + ``exit`` when still possible; the exit code."""
        with contextlib.suppress(Exception):
            if self.process.poll() is None:
                self.response(self.request("shutdown"), timeout=5)
                self.notify("exit")
        return self.close()

    def close(self) -> int:
        with contextlib.suppress(OSError, ValueError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            return self.process.wait(STUCK)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STUCK)
            raise ServerStuck("the server did not end after its input was closed") from None

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def wait_stderr(self, text: str, timeout: float = STUCK) -> str:
        """The server's log so far, once it holds ``text``."""
        deadline = threading.Event()
        for _ in range(int(timeout / 0.05)):
            if text in self.stderr_text():
                return self.stderr_text()
            deadline.wait(0.05)
        raise AssertionError(f"{text!r} never appeared in the log:\n{self.stderr_text()}")


def write_settings(home: Path, snippets: dict[str, str]) -> None:
    (home / "settings.json").write_text(json.dumps({"piSimpleSnippets": {"snippets": snippets}}))
