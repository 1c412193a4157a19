"""Hostile input for the MCP server: whatever comes, a clear error or the last good
list, never a crash or a hang (docs/mcp.md, "Reliability").

Some tests talk raw JSON lines to the process (garbage, a client that stops reading,
signals); the others use the Python SDK's client.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from .conftest import PATIENCE, SNIPPETS, Setup
from .test_python_client import connect, prompt_text

TEN_MB = 10 * 1024 * 1024


# --------------------------------------------------------------------------- big texts


async def test_a_10_mb_text_is_expanded_whole_and_the_server_goes_on(setup: Setup) -> None:
    # Markers every kilobyte: the answer stays near the text's size (the SDK client
    # reassembles a long line in time quadratic in its length).
    block = "%brief " + "x" * 1017 + "\n"
    text = block * (TEN_MB // len(block))
    expected = text.replace("%brief", SNIPPETS["brief"])
    async with connect(setup, "legacy") as client:
        called = await client.call_tool("expand_snippets", {"text": text})
        assert called.structured_content == {"text": expected, "changed": True}
        result = await client.get_prompt("review", {"text": text})
        assert prompt_text(result) == SNIPPETS["review"] + "\n\n" + expected
        completion = await client.complete(
            types.PromptReference(name="review"), {"name": "text", "value": text + " %re"}
        )
        assert completion.completion.values == []
        assert len((await client.list_prompts()).prompts) == 3


async def test_a_10_mb_prompt_name_is_a_short_error(setup: Setup) -> None:
    async with connect(setup, "legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("x" * TEN_MB)
        assert caught.value.error.code == -32602
        assert len(caught.value.error.message) < 400
        assert len((await client.list_prompts()).prompts) == 3


# --------------------------------------------------------------------------- settings files


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        pytest.param(fifo, "a named pipe (FIFO)", id="fifo"),
        pytest.param(lambda p: (p.mkdir(), p)[1], "a directory", id="directory"),
        pytest.param(lambda p: Path("/dev/zero"), "a device", id="device"),
    ],
)
async def test_a_settings_path_that_is_no_file_is_a_warning(
    setup: Setup, make: object, problem: str
) -> None:
    settings = make(setup.root / "odd.json")  # type: ignore[operator]
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with connect(setup, "legacy", settings=settings, logging_callback=on_log) as client:
        assert (await client.list_prompts()).prompts == []
        listed = await client.call_tool("list_snippets", {})
        (warning,) = listed.structured_content["warnings"]
        assert problem in warning and str(settings) in warning
        with anyio.fail_after(PATIENCE):
            while not logs:
                await anyio.sleep(0.05)
        assert logs[0].level == "warning" and problem in logs[0].data


async def test_half_written_saves_during_prompts_list_keep_the_last_good_list(
    setup: Setup,
) -> None:
    """An editor that truncates the file, then writes it in pieces: every answer is a
    whole list (one of the two the file holds in turn), never an empty or partial one,
    and never an error. The editor's pauses vary: saves at a steady rhythm can fall in
    step with the server's polls, which then read the same one of the two every time."""
    first = {**SNIPPETS, "one": "1"}
    second = {**SNIPPETS, "two": "2"}
    lists = {tuple(sorted(first)), tuple(sorted(second))}
    stop = threading.Event()

    def editor() -> None:
        contents = [json.dumps({"piSimpleSnippets": {"snippets": s}}) for s in (first, second)]
        pauses = random.Random(24)
        turn = 0
        while not stop.is_set():
            text = contents[turn % 2]
            with open(setup.settings, "w", encoding="utf-8") as file:  # truncates
                file.flush()
                time.sleep(0.02)
                file.write(text[: len(text) // 2])
                file.flush()
                time.sleep(0.03)
                file.write(text[len(text) // 2 :])
            time.sleep(pauses.uniform(0.05, 0.4))
            turn += 1

    setup.write(first)
    async with connect(setup, "legacy") as client:
        thread = threading.Thread(target=editor, daemon=True)
        thread.start()
        try:
            seen = set()
            answers = 0
            deadline = time.monotonic() + PATIENCE
            while (answers < 150 or len(seen) < 2) and time.monotonic() < deadline:
                names = tuple(p.name for p in (await client.list_prompts()).prompts)
                assert names in lists
                seen.add(names)
                answers += 1
                await anyio.sleep(0.02)
        finally:
            stop.set()
            thread.join()
    assert len(seen) == 2  # the reloads did happen


# --------------------------------------------------------------------------- the raw stream


class Raw:
    """The server as a process, spoken to in raw JSON lines."""

    def __init__(self, setup: Setup, *extra: str, read: bool = True) -> None:
        self.proc = subprocess.Popen(
            setup.command(*extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=setup.env,
            cwd=setup.root / "work",
        )
        self.lines: list[dict[str, object]] = []
        if read:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, id_: int, method: str, params: dict[str, object]) -> None:
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        self.send(json.dumps(message).encode() + b"\n")

    def answer(self, id_: int) -> dict[str, object]:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            for line in self.lines:
                if line.get("id") == id_:
                    return line
            time.sleep(0.02)
        raise AssertionError(f"no answer to request {id_}; got {self.lines}")

    def initialize(self) -> None:
        self.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert "result" in self.answer(1)
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def test_garbage_lines_do_not_stop_the_server(setup: Setup) -> None:
    raw = Raw(setup)
    try:
        raw.initialize()
        raw.send(b"not json at all\n")
        raw.send(b'{"jsonrpc":"2.0","id":2}\n')
        raw.send(b"\xff\xfe broken utf-8\n")
        raw.send(b"[" * 100_000 + b"\n")
        raw.request(3, "prompts/list", {})
        result = raw.answer(3)["result"]
        assert [p["name"] for p in result["prompts"]] == sorted(SNIPPETS)  # type: ignore[index]
        raw.request(6, "prompts/list", {"cursor": "page-2"})
        assert raw.answer(6)["error"]["code"] == -32602  # type: ignore[index]
        raw.request(4, "prompts/get", {"name": 7})
        assert raw.answer(4)["error"]["code"] == -32602  # type: ignore[index]
        raw.request(5, "tools/call", {"name": "expand_snippets", "arguments": {"text": "%brief"}})
        assert raw.answer(5)["result"]["structuredContent"]["text"] == SNIPPETS["brief"]  # type: ignore[index]
    finally:
        raw.close()


def test_closing_stdin_ends_the_server_with_status_0(setup: Setup) -> None:
    raw = Raw(setup)
    try:
        raw.initialize()
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        assert raw.proc.wait(timeout=PATIENCE) == 0
    finally:
        raw.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_server_even_with_a_client_that_stopped_reading(
    setup: Setup, signum: int
) -> None:
    raw = Raw(setup, read=False)
    try:
        raw.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "raw", "version": "0"}})  # fmt: skip
        # The answer says the server is up (its signal handlers in place); from here on
        # nobody reads.
        answered: list[bytes] = []
        reader = threading.Thread(
            target=lambda: answered.append(raw.proc.stdout.readline()),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        reader.join(PATIENCE)
        assert answered and b'"result"' in answered[0]
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        text = "%review " * 100_000  # each answer some 4 MB: the pipe fills at once

        def flood() -> None:
            with contextlib.suppress(OSError):  # the server is gone
                for n in range(10, 30):
                    raw.request(
                        n, "tools/call", {"name": "expand_snippets", "arguments": {"text": text}}
                    )

        threading.Thread(target=flood, daemon=True).start()
        time.sleep(1.0)
        assert raw.proc.poll() is None
        raw.proc.send_signal(signum)
        assert raw.proc.wait(timeout=PATIENCE) == 0
    finally:
        raw.close()


# --------------------------------------------------------------------------- lone surrogates

#: A lone surrogate escape, as JSON text: valid JSON, no Unicode text.
LONE = "\\ud800"


@pytest.mark.parametrize(
    ("where", "line"),
    [
        pytest.param(
            "params.name",
            '{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"re%sview"}}',
            id="prompt-name",
        ),
        pytest.param(
            "params.arguments.text",
            '{"jsonrpc":"2.0","id":9,"method":"prompts/get",'
            '"params":{"name":"review","arguments":{"text":"x%s"}}}',
            id="prompt-argument",
        ),
        pytest.param(
            "params.argument.value",
            '{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":'
            '{"type":"ref/prompt","name":"review"},"argument":{"name":"text","value":"%%re%s"}}}',
            id="completion-value",
        ),
        pytest.param(
            "params.arguments.text",
            '{"jsonrpc":"2.0","id":9,"method":"tools/call",'
            '"params":{"name":"expand_snippets","arguments":{"text":"%%brief %s"}}}',
            id="tool-argument",
        ),
        pytest.param(
            "params.uri",
            '{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"snippet://%s"}}',
            id="resource-uri",
        ),
    ],
)
def test_a_lone_surrogate_in_a_request_is_invalid_params(
    setup: Setup, where: str, line: str
) -> None:
    raw = Raw(setup)
    try:
        raw.initialize()
        # A notification holding one is dropped (logged), never answered.
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed",'
                 b'"params":{"x":"\\udfff"}}\n')  # fmt: skip
        raw.send((line % LONE).encode() + b"\n")
        error = raw.answer(9)["error"]
        assert error["code"] == -32602  # type: ignore[index]
        assert "lone surrogate" in error["message"] and where in error["message"]  # type: ignore[index]
        # A valid pair is text, and the server goes on.
        raw.request(
            10, "tools/call", {"name": "expand_snippets", "arguments": {"text": "\U0001f600"}}
        )
        assert raw.answer(10)["result"]["structuredContent"]["text"] == "\U0001f600"  # type: ignore[index]
        assert [line.get("id") for line in raw.lines if "id" in line] == [1, 9, 10]
    finally:
        raw.close()


# --------------------------------------------------------------------------- long lines


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_line_past_the_cap_is_refused_its_memory_released_and_the_next_answered(
    setup: Setup,
) -> None:
    cap = 1024 * 1024
    raw = Raw(setup, "--max-message-size", str(cap))
    try:
        raw.initialize()
        raw.request(2, "prompts/list", {})
        raw.answer(2)
        before = rss_kib(raw.proc.pid)
        # A request whose line never ends: 64 times the cap, in pieces.
        raw.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":'
                 b'"expand_snippets","arguments":{"text":"')  # fmt: skip
        piece = b"x" * (cap // 4)
        for _ in range(256):
            raw.send(piece)
        error = raw.answer(7)["error"]
        assert error["code"] == -32600  # type: ignore[index]
        assert str(cap) in error["message"]  # type: ignore[index]
        assert (rss_kib(raw.proc.pid) - before) < 16 * 1024  # never buffered whole
        raw.send(b'"}}}\n')  # its end: still the refused line
        raw.request(8, "tools/call", {"name": "expand_snippets", "arguments": {"text": "%brief"}})
        assert raw.answer(8)["result"]["structuredContent"]["text"] == SNIPPETS["brief"]  # type: ignore[index]
        # A line past the cap that does not start like a request: refused with id null.
        raw.send(b"[" + b" " * (2 * cap) + b"]\n")
        raw.request(11, "ping", {})
        raw.answer(11)
        assert {"id": None, "code": -32600} in [
            {"id": line["id"], "code": line["error"]["code"]}  # type: ignore[index]
            for line in raw.lines
            if "error" in line
        ]
    finally:
        raw.close()


def test_a_notification_with_bad_params_is_never_answered(setup: Setup) -> None:
    raw = Raw(setup)
    try:
        raw.initialize()
        raw.send(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}\n'
        )
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":7}\n')
        raw.request(3, "ping", {})
        assert raw.answer(3)["result"] == {}
        assert [line.get("id") for line in raw.lines if "id" in line] == [1, 3]
    finally:
        raw.close()
