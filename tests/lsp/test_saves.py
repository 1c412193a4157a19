"""Saving the settings file while the server answers (docs/configuration.md, "Reading a
settings file" and "When the configuration is read again").

A writer thread saves the user settings hundreds of times, alternating two complete
versions, in the ways editors save: truncate then write, many small writes, write a
temporary file and rename it over. Meanwhile the client expands and reloads without
pause, and the server's own poller and the client's file events trigger reloads. Every
answer must come from one complete generation: never unexpanded, never empty, never a
mix of the two versions; no ``snippets/didLoad`` may carry 0 snippets.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .raw import STUCK, RawServer

#: Snippets per version: enough that a save takes many small writes.
SIZE = 60
SAVES = 300
NAMES = [f"s{i}" for i in range(SIZE)]
TEXT = " ".join(f"%{name}" for name in NAMES[:: SIZE // 6])


def version(tag: str) -> bytes:
    snippets = {name: f"{tag}-{name}-" + "x" * 40 for name in NAMES}
    return json.dumps({"piSimpleSnippets": {"snippets": snippets}}, indent=1).encode()


VERSIONS = {tag: version(tag) for tag in ("one", "two")}
EXPECTED = {
    tag: " ".join(f"{tag}-{name}-" + "x" * 40 for name in NAMES[:: SIZE // 6]) for tag in VERSIONS
}


def truncate_then_write(path: Path, data: bytes) -> None:
    with path.open("r+b") as file:
        file.truncate(0)
        file.flush()
        os.fsync(file.fileno())
        time.sleep(0.001)
        file.write(data)


def many_small_writes(path: Path, data: bytes) -> None:
    with path.open("wb", buffering=0) as file:
        for i in range(0, len(data), 64):
            file.write(data[i : i + 64])


def rename_over(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


PATTERNS: dict[str, Callable[[Path, bytes], None]] = {
    "truncate-then-write": truncate_then_write,
    "many-small-writes": many_small_writes,
    "rename-over": rename_over,
}

#: A client that watches files for the server: it sends an event after every save.
WATCHING = {
    "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}},
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("client", ["polled", "watching"])
def test_every_answer_comes_from_one_complete_generation(
    tmp_path: Path, pattern: str, client: str
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_bytes(VERSIONS["one"])
    server = RawServer(tmp_path, ["--min-poll-interval", "0.02"])
    first = server.start(WATCHING if client == "watching" else None, poll_interval=0.02)
    assert first["count"] == SIZE
    save = PATTERNS[pattern]
    done = threading.Event()
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            for i in range(SAVES):
                save(settings, VERSIONS["two" if i % 2 == 0 else "one"])
                if client == "watching":
                    event = {"changes": [{"uri": settings.as_uri(), "type": 2}]}
                    server.notify("workspace/didChangeWatchedFiles", event)
                time.sleep(0.002)
        except BaseException as exc:
            failures.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    answers: list[str] = []
    reloads: list[dict[str, Any]] = []
    while not done.is_set():
        answers.append(server.expand(TEXT)["result"]["text"])
        if len(answers) % 5 == 0:
            reloads.append(server.response(server.request("snippets/reload", {}))["result"])
    thread.join(STUCK)
    assert failures == []

    # The last save is "one": once things settle, it is what the server serves.
    final = server.response(server.request("snippets/reload", {}))["result"]
    loads = [m["params"] for m in server.seen if m.get("method") == "snippets/didLoad"]
    assert server.stop() == 0

    assert answers, "the client got no answer at all"
    bad = [a for a in answers if a not in EXPECTED.values()]
    assert bad == [], f"{len(bad)} of {len(answers)} answers unexpanded, empty or mixed"
    for state in reloads:
        values = {s["value"].split("-")[0] for s in state["snippets"]}
        assert len(state["snippets"]) == SIZE and len(values) == 1, state["warnings"]
    assert [load["count"] for load in loads] == [SIZE] * len(loads)
    assert {s["value"].split("-")[0] for s in final["snippets"]} == {"one"}
    assert final["warnings"] == []
