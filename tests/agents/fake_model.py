"""A fake model endpoint on 127.0.0.1 that records every request it is sent.

It speaks just enough of three APIs for an agent to finish a turn: Anthropic's Messages
API (``POST /v1/messages``, streamed as server-sent events when asked, as Claude Code
does), OpenAI's Responses API (``POST /v1/responses``, streamed, as Codex does) and the
Gemini API (``:streamGenerateContent``, ``:generateContent``, ``:countTokens``). Every
answer is the one word ``ok``. Anything else gets an empty JSON object, so an agent's side
requests (model lists, telemetry) never hang. The tests assert on ``requests``: what the
model would have received.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "ok"


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    body: Any


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def anthropic_message(model: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": REPLY}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def anthropic_stream(model: str) -> bytes:
    start = {**anthropic_message(model), "content": [], "stop_reason": None}
    return _sse(
        [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": REPLY},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 1},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def responses_stream(model: str) -> bytes:
    item = {
        "type": "message",
        "id": "msg_fake",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": REPLY, "annotations": []}],
    }
    response = {"id": "resp_fake", "object": "response", "model": model, "status": "completed"}
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return _sse(
        [
            (
                "response.created",
                {"type": "response.created", "response": {**response, "status": "in_progress"}},
            ),
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {**item, "content": [], "status": "in_progress"},
                },
            ),
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "content_index": 0,
                    "item_id": "msg_fake",
                    "delta": REPLY,
                },
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**response, "output": [item], "usage": usage},
                },
            ),
        ]
    )


def example(schema: Any) -> Any:
    """A value of a JSON schema (the first of each enum), for the side requests that ask
    for JSON (Gemini CLI's model router, its next-speaker check)."""
    if not isinstance(schema, dict):
        return REPLY
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {k: example(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [example(schema.get("items"))]
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    return REPLY


def gemini_response(request: Any = None) -> dict[str, Any]:
    text = REPLY
    config = request.get("generationConfig") if isinstance(request, dict) else None
    if isinstance(config, dict):
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if schema or config.get("responseMimeType") == "application/json":
            text = json.dumps(example(schema))
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "gemini-fake",
    }


class FakeModel:
    """The server, started on a free port of 127.0.0.1; ``url`` is its base URL."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _read(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                fake._record(Recorded("GET", self.path, None))
                if self.path.split("?")[0].endswith("/models"):
                    self._send(
                        200, b'{"object": "list", "data": [], "models": []}', "application/json"
                    )
                else:
                    self._send(200, b"{}", "application/json")

            def do_HEAD(self) -> None:
                self._send(200, b"", "application/json")

            def do_POST(self) -> None:
                body = self._read()
                fake._record(Recorded("POST", self.path, body))
                path = self.path.split("?")[0]
                data = body if isinstance(body, dict) else {}
                model = str(data.get("model", "fake"))
                if path.endswith("/messages/count_tokens"):
                    self._send(200, b'{"input_tokens": 1}', "application/json")
                elif path.endswith("/messages"):
                    if data.get("stream"):
                        self._send(200, anthropic_stream(model), "text/event-stream")
                    else:
                        self._send(
                            200, json.dumps(anthropic_message(model)).encode(), "application/json"
                        )
                elif path.endswith("/responses"):
                    self._send(200, responses_stream(model), "text/event-stream")
                elif path.endswith(":streamGenerateContent"):
                    self._send(200, _sse([(None, gemini_response(body))]), "text/event-stream")
                elif path.endswith(":generateContent"):
                    self._send(200, json.dumps(gemini_response(body)).encode(), "application/json")
                elif path.endswith(":countTokens"):
                    self._send(200, b'{"totalTokens": 1}', "application/json")
                else:
                    self._send(200, b"{}", "application/json")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def snapshot(self) -> list[Recorded]:
        with self._lock:
            return list(self.requests)

    def posts(self, suffix: str) -> list[Recorded]:
        """The recorded POSTs whose path (without the query) ends with ``suffix``."""
        return [
            r
            for r in self.snapshot()
            if r.method == "POST" and r.path.split("?")[0].endswith(suffix)
        ]

    def wait_for(self, found: Callable[[list[Recorded]], bool], timeout: float) -> list[Recorded]:
        deadline = time.monotonic() + timeout
        while True:
            seen = self.snapshot()
            if found(seen):
                return seen
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the fake model never saw what was awaited; it saw {describe(seen)}"
                )
            time.sleep(0.1)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def describe(requests: list[Recorded]) -> str:
    return json.dumps([(r.method, r.path, r.body) for r in requests], default=str)[:6000]


def texts(value: Any) -> Iterator[str]:
    """Every string anywhere in a JSON value (a request body's prompt texts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)
