"""A scripted JSON-RPC peer for testing ``SnippetsClient`` itself (the package's framing only).

Run as ``python fake_server.py``; speaks LSP framing on stdin/stdout. It behaves like the
real server where the client depends on it (initialize, ``snippets/didLoad`` after
initialized, shutdown/exit), and adds test methods:

- at ``initialized`` it sends the client the requests a server may send and records the
  answers; ``test/answers`` returns them, and the ``initializationOptions`` it got.
  ``snippets/didLoad`` goes out only when those options opt in to it, as the real
  server does.
- ``test/hold``: held until ``count`` of them arrived, then all are answered in reverse
  order of arrival, each with its own ``tag`` (responses out of order, matched by id).
- ``test/error``: an error response with ``data``.
- ``test/silent``: never answered.
- ``test/die``: exits with code 3 without answering.
- ``test/notify``: sends ``window/showMessage`` and ``test/ping`` notifications first.
"""

from __future__ import annotations

import sys
from typing import Any

from pi_snippets_lsp.wire.framing import MessageReader, encode

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


READER = MessageReader(stdin)


def send(message: dict[str, Any]) -> None:
    stdout.write(encode(message))
    stdout.flush()


def read() -> dict[str, Any] | None:
    message: dict[str, Any] | None = READER.read()
    return message


QUESTIONS = [
    ("workspace/configuration", {"items": [{"section": "a"}, {"section": "b"}]}),
    ("client/registerCapability", {"registrations": []}),
    ("window/showMessageRequest", {"type": 1, "message": "?"}),
    ("workspace/workspaceFolders", None),
    ("fake/unknown", {}),
]


def main() -> int:
    answers: dict[str, Any] = {}
    asked: dict[str, str] = {}
    held: list[dict[str, Any]] = []
    shut_down = False
    while True:
        message = read()
        if message is None:
            return 1
        method = message.get("method")
        if method is None:  # an answer to one of our questions
            question = asked.pop(str(message["id"]))
            answers[question] = {k: v for k, v in message.items() if k in ("result", "error")}
            continue
        request_id = message.get("id")
        params = message.get("params")
        if method == "initialize":
            answers["initializationOptions"] = params.get("initializationOptions")
            send({"jsonrpc": "2.0", "id": request_id, "result": {"capabilities": {}}})
        elif method == "initialized":
            for n, (question, question_params) in enumerate(QUESTIONS):
                asked[f"q{n}"] = question
                request = {"jsonrpc": "2.0", "id": f"q{n}", "method": question}
                if question_params is not None:
                    request["params"] = question_params
                send(request)
            load = {
                "generation": 1,
                "count": 0,
                "shortcut": None,
                "expandOnCompletion": False,
                "warnings": [],
            }
            if "snippets/didLoad" in (answers["initializationOptions"] or {}).get(
                "notifications", []
            ):
                send({"jsonrpc": "2.0", "method": "snippets/didLoad", "params": load})
        elif method == "test/answers":
            send({"jsonrpc": "2.0", "id": request_id, "result": answers})
        elif method == "test/hold":
            held.append(message)
            if len(held) == params["count"]:
                for waiting in reversed(held):
                    result = {"tag": waiting["params"]["tag"]}
                    send({"jsonrpc": "2.0", "id": waiting["id"], "result": result})
                held.clear()
        elif method == "test/error":
            error = {"code": -32001, "message": "scripted failure", "data": {"why": "test"}}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
        elif method == "test/silent":
            pass
        elif method == "test/die":
            return 3
        elif method == "test/notify":
            show = {"type": 2, "message": "pi-simple-snippets: careful"}
            send({"jsonrpc": "2.0", "method": "window/showMessage", "params": show})
            send({"jsonrpc": "2.0", "method": "test/ping", "params": {"n": 1}})
            send({"jsonrpc": "2.0", "id": request_id, "result": None})
        elif method == "shutdown":
            shut_down = True
            send({"jsonrpc": "2.0", "id": request_id, "result": None})
        elif method == "exit":
            return 0 if shut_down else 1
        elif request_id is not None:
            error = {"code": -32601, "message": f"no {method}"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


if __name__ == "__main__":
    sys.exit(main())
