"""Watching settings files in-process: a poller that looks at their stamps.

docs/configuration.md, "When the configuration is read again". The client watches the
files when it can (a dynamic ``workspace/didChangeWatchedFiles`` registration); the
server polls the rest itself (see ``session.files_to_poll``). A changed file is read at
once; when it is found unusable (empty, or not JSON: an editor's truncate-then-write save
read in between), the change is *settled* (stat-ed again until two looks agree) and read
once more before anything is reported (``session.Session.reload(settle=True)``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

#: What a look at a file sees: (mtime ns, size, inode), or None when there is no file.
Stamp = tuple[int, int, int] | None
Stamps = dict[str, Stamp]
#: Recorded as seen for a file whose read failed in a way that may pass: no real stamp
#: equals it, so the next look reads the file again.
RETRY: Final[Stamp] = (-1, -1, -1)

#: Seconds between the looks that settle a change, and the most a settle may take.
SETTLE_STEP: Final = 0.05
SETTLE_LIMIT: Final = 1.0


def stamp(path: Path) -> Stamp:
    """The file's stamp; None when it cannot be stat-ed (absent, unreadable)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def take_stamps(paths: Iterable[Path]) -> Stamps:
    return {str(path): stamp(path) for path in paths}


class SettingsWatcher:
    """Polls ``files()`` every ``interval`` seconds; calls ``on_change()`` when a stamp
    differs from the last one ``seen``. An interval of 0 never polls."""

    def __init__(
        self,
        files: Callable[[], list[Path]],
        on_change: Callable[[], Awaitable[object]],
        interval: float,
    ) -> None:
        self.files = files
        self.on_change = on_change
        self.interval = interval
        self._seen: Stamps = {}
        self._task: asyncio.Task[None] | None = None

    def seen(self, stamps: Stamps) -> None:
        """The stamps a load was read at (taken before reading)."""
        self._seen = dict(stamps)

    def differing(self) -> Stamps:
        """The polled files whose stamp differs from the last one seen: their stamps now."""
        now = take_stamps(self.files())
        return {key: value for key, value in now.items() if self._seen.get(key) != value}

    def changed(self) -> bool:
        """Whether any polled file's stamp differs from the last one seen."""
        return bool(self.differing())

    def start(self) -> None:
        if self._task is None and self.interval > 0:
            self._task = asyncio.get_running_loop().create_task(self._poll())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def settle(self, paths: Iterable[Path]) -> None:
        """Wait until two looks at ``paths``, ``SETTLE_STEP`` apart, agree (at most
        ``SETTLE_LIMIT`` seconds): a save in progress is read when it is done."""
        paths = list(paths)
        before = take_stamps(paths)
        waited = 0.0
        while waited < SETTLE_LIMIT:
            await asyncio.sleep(SETTLE_STEP)
            waited += SETTLE_STEP
            now = take_stamps(paths)
            if now == before:
                return
            before = now

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if not self.changed():
                continue
            try:
                await self.on_change()
            except Exception:
                log.exception("reload after a file change failed")
