"""What a session leaves in the daemon once it is gone, and what sessions share
(docs/lsp.md, "Daemon: who may connect, and what one client may cost").

The daemon runs in this process, on a thread of its own, listening on a real Unix
socket: the objects it keeps are looked at directly (weak references to each session's
server), so no figure of memory is judged here (``scripts/bench/daemon.py`` measures
those). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_snippets_lsp.lsp.daemon import Daemon, Listen
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.lsp.session import ServerFlags

from .daemons import STUCK, Raw


class InProcessDaemon:
    """A ``--socket`` daemon served by an event loop on a thread of this process."""

    def __init__(self, settings: Path) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="pi-run-"))  # short: 108-byte paths
        os.chmod(self.folder, 0o700)
        self.path = self.folder / "s"
        flags = ServerFlags(user_settings=str(settings))
        self.daemon = Daemon(flags, Listen(kind="unix", path=self.path))
        self.daemon._prepare()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server: Any = self.run(self.daemon._start(None))

    def run(self, work: Any) -> Any:
        """``work`` (a coroutine) on the daemon's loop; its result."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(STUCK)

    def servers(self) -> list[SnippetsServer]:
        """The servers of the sessions open now (read on the daemon's loop)."""

        async def read() -> list[SnippetsServer]:
            return [connection.server for connection in self.daemon.connections]

        result: list[SnippetsServer] = self.run(read())
        return result

    def wait_for_no_session(self) -> None:
        deadline = time.monotonic() + STUCK
        while self.run(_count(self.daemon)):
            assert time.monotonic() < deadline, "closed sessions were never forgotten"
            time.sleep(0.05)

    def stop(self) -> None:
        async def stop() -> None:
            self.server.close()
            for connection in list(self.daemon.connections):
                connection.end(0)
            if self.daemon.tasks:
                await asyncio.wait(self.daemon.tasks, timeout=STUCK)

        self.run(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(STUCK)
        self.loop.close()
        shutil.rmtree(self.folder, ignore_errors=True)


async def _count(daemon: Daemon) -> int:
    return len(daemon.connections)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[InProcessDaemon]:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"a": "AAA"}}}))
    served = InProcessDaemon(settings)
    yield served
    served.stop()


def session(daemon: InProcessDaemon) -> Raw:
    """A session that initialized and had one request answered."""
    raw = Raw.unix(daemon.path)
    raw.handshake({})
    assert raw.expand(2, "%a")["result"]["text"] == "AAA"
    return raw


def test_a_closed_session_is_released(daemon: InProcessDaemon) -> None:
    """Nothing of a session outlives its connection: pygls caches the message types per
    protocol object (``functools.lru_cache`` on a method keeps ``self``), which kept the
    last 64 or so sessions whole after their clients had gone."""
    clients = [session(daemon) for _ in range(5)]
    released = [weakref.ref(server) for server in daemon.servers()]
    assert len(released) == 5
    for client in clients:
        client.close()
    daemon.wait_for_no_session()
    gc.collect()
    assert [ref for ref in released if ref() is not None] == []


def test_a_closed_session_is_released_without_waiting_for_the_collector(
    daemon: InProcessDaemon,
) -> None:
    """A session's objects point at one another, so only a full collection frees them,
    and Python starts one only once its long-lived objects have grown by a quarter: the
    daemon collects soon after sessions end, instead of holding ended sessions until
    then."""
    clients = [session(daemon) for _ in range(5)]
    released = [weakref.ref(server) for server in daemon.servers()]
    gc.collect()  # the sessions are long-lived now: only a full collection frees them
    for client in clients:
        client.close()
    daemon.wait_for_no_session()
    deadline = time.monotonic() + STUCK
    while any(ref() is not None for ref in released):
        assert time.monotonic() < deadline, "ended sessions wait for the collector"
        time.sleep(0.05)


def test_sessions_share_one_converter(daemon: InProcessDaemon) -> None:
    """pygls makes a cattrs converter per server (~170 KiB once it has generated its
    functions for the messages a session uses); the sessions of a daemon share one, so an
    idle session costs little, and only the first ``initialize`` pays for generating them.
    Every session is still answered on its own."""
    one, two = session(daemon), session(daemon)
    first, second = daemon.servers()
    assert first.protocol._converter is second.protocol._converter
    assert one.expand(3, "%a x")["result"]["text"] == "AAA x"
    assert two.expand(3, "y %a")["result"]["text"] == "y AAA"
    one.close()
    two.close()
