"""One live generation of settings: the configuration every answer reads, kept current.

docs/configuration.md, "When the configuration is read again". Every adapter serves its
snippets from one of these (the LSP session one per connection, the MCP server one, an
in-process integration one), so the reload rules exist once:

- A generation maps each folder key (``settings.folders``; ``None`` for a process that
  serves one folder) to its ``Config``, and is replaced whole: an answer never mixes two.
- Stamps are taken *before* reading, so a save that lands mid-load is seen next time.
- A load runs off the event loop. A file found unusable after a change (empty, or not
  JSON: an editor's truncate-then-write save read in between) is settled and read once
  more before anything is told, so a save is read when it is done.
- ``SettingsFiles`` keeps each file's last good content, so a half-written save keeps
  the snippets it had.
- A file whose read failed in a way that may pass (no permission until a ``chmod``, which
  leaves its stamp as it was; too many open files) is not marked as seen: the next look
  reads it again. A retry that meets the same problems does not tell them again.
- A load that fails in any way keeps the last generation and says so; the next change
  tries again (nothing is cached as failed).
- Listeners hear of each new generation as ``Loaded`` (previous and current, the problems
  and whether they are news, the untrusted project files not told before) and of each
  failure as one message.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pi_snippets_lsp.core.config import EMPTY_CONFIG, MESSAGE_PREFIX, Config
from pi_snippets_lsp.settings.layers import SettingsFiles
from pi_snippets_lsp.settings.watch import RETRY, SettingsWatcher, Stamps, take_stamps

log = logging.getLogger(__name__)

#: A generation: each folder key's configuration.
Configs = Mapping[str | None, Config]
#: The key of a process that serves one folder.
ONLY: Final = None


def combined_problems(configs: Iterable[Config]) -> list[str]:
    """The problems of one generation across folders, each once, in order."""
    problems: list[str] = []
    for config in configs:
        problems.extend(w for w in config.warnings if w not in problems)
    return problems


def failure_message(exc: BaseException) -> str:
    """What a listener tells the user when a load failed and the last generation stays."""
    return f"{MESSAGE_PREFIX} loading the settings failed ({exc}); keeping the previous snippets"


@dataclass(frozen=True)
class Loaded:
    """A new generation, as listeners hear of it."""

    previous: Configs
    current: Configs
    number: int
    #: Every problem of the generation, each once, in order.
    problems: tuple[str, ...]
    #: Whether the problems are worth telling: not a retry of a failed read that met the
    #: very problems told last time.
    news: bool
    #: Project settings files skipped as untrusted, each told once per generation holder.
    untrusted: tuple[str, ...]

    @property
    def warning(self) -> str | None:
        """The one warning of this generation to show, or None (nothing new is wrong)."""
        if not self.problems or not self.news:
            return None
        return f"{MESSAGE_PREFIX} " + "; ".join(self.problems)


async def _ignore_load(loaded: Loaded) -> None:
    return None


async def _ignore_failure(message: str) -> None:
    return None


class LiveSettings:
    """The current generation (``configs``) and the loads that replace it.

    ``load(files)`` reads one generation with ``files`` (the ``SettingsFiles`` kept here
    across loads); ``watched()`` names every settings file it may read, ``polled()``
    those to look at in-process (default: all). ``on_load`` and ``on_failure`` are the
    listeners. ``interval`` is the poller's period in seconds (0: never polls).
    """

    def __init__(
        self,
        load: Callable[[SettingsFiles], dict[str | None, Config]],
        watched: Callable[[], list[Path]],
        *,
        polled: Callable[[], list[Path]] | None = None,
        files: SettingsFiles | None = None,
        on_load: Callable[[Loaded], Awaitable[None]] = _ignore_load,
        on_failure: Callable[[str], Awaitable[None]] = _ignore_failure,
        interval: float = 0.0,
    ) -> None:
        self.load = load
        self.watched = watched
        self.files = files if files is not None else SettingsFiles()
        self.on_load = on_load
        self.on_failure = on_failure
        self.configs: dict[str | None, Config] = {}
        #: How many generations were loaded (0: none yet).
        self.number = 0
        self.closed = False
        self.watcher = SettingsWatcher(
            files=polled or watched, on_change=self._files_changed, interval=interval
        )
        self._lock = asyncio.Lock()
        self._thread_lock = threading.Lock()
        #: The first load, once someone asked for it (``ensure_loaded``); a transport
        #: holds back what a client pipes in while it runs.
        self.first_load: asyncio.Future[object] | None = None
        #: Held by whoever waits for the first load, so waiters resume in arrival order.
        self._first_gate = asyncio.Lock()
        #: Files whose last read failed and may be read again: their stamps then.
        self._failed_stamps: Stamps = {}
        self._told_problems: tuple[str, ...] = ()
        self._told_untrusted: set[str] = set()

    def config(self, key: str | None = ONLY) -> Config:
        """``key``'s configuration in the current generation (empty before the first)."""
        return self.configs.get(key, EMPTY_CONFIG)

    # ------------------------------------------------------------------ loads

    async def reload(
        self,
        settle: bool = False,
        repeat: bool = True,
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> bool:
        """Load a new generation off the event loop and tell the listeners; whether it
        loaded (False: it failed, or the holder is closed).

        ``settle``: the load follows a change on disk (or is the first one): a file found
        unusable is settled and read once more before anything is told. ``repeat=False``
        (a retry of a failed read): the same problems are not told again. ``prepare``
        runs first, under the same lock (the LSP session pulls the client's settings).
        """
        async with self._lock:
            if self.closed:
                return False
            if prepare is not None:
                await prepare()
            stamps = take_stamps(self.watched())
            try:
                configs = await asyncio.to_thread(self.load, self.files)
                if settle and self.files.unusable:
                    await self.watcher.settle(self.watched())
                    stamps = take_stamps(self.watched())
                    configs = await asyncio.to_thread(self.load, self.files)
            except Exception as exc:  # a failed load must never poison the holder
                log.exception("loading the settings failed")
                await self.on_failure(failure_message(exc))
                return False
            await self.on_load(self._take(stamps, configs, repeat))
            return True

    def refresh(self) -> Configs:
        """For callers without an event loop (a completer in a worker thread): read
        again, on this thread, when there is no generation yet or a watched file's stamp
        differs from the one seen (a failed read's always does); the generation then.
        A load that fails keeps the last generation."""
        with self._thread_lock:
            if self.number and not self.watcher.changed():
                return self.configs
            stamps = take_stamps(self.watched())
            try:
                configs = self.load(self.files)
            except Exception:
                log.exception("loading the settings failed")
                return self.configs
            # No listener hears a refresh: whether its problems are news tells nobody.
            self._take(stamps, configs, True)  # pragma: no mutate
            return self.configs

    def _take(self, stamps: Stamps, configs: dict[str | None, Config], repeat: bool) -> Loaded:
        """Make ``configs`` the generation read at ``stamps``."""
        previous, self.configs = self.configs, configs
        self.number += 1
        failed = self.files.failed
        self._failed_stamps = {key: stamps.get(key) for key in failed}
        self.watcher.seen({**stamps, **dict.fromkeys(failed, RETRY)})
        problems = tuple(combined_problems(configs.values()))
        news = repeat or problems != self._told_problems
        self._told_problems = problems
        untrusted = []
        for config in configs.values():
            for path in config.untrusted_project_files:
                if path not in self._told_untrusted:
                    self._told_untrusted.add(path)
                    untrusted.append(path)
        default = configs.get(next(iter(configs), None), EMPTY_CONFIG)
        log.info(
            "generation %d: %d snippet(s), %d warning(s)",
            self.number,
            len(default.snippets),
            len(default.warnings),
        )
        return Loaded(previous, configs, self.number, problems, news, tuple(untrusted))

    async def ensure_loaded(self, first: Callable[[], Awaitable[object]] | None = None) -> None:
        """Run the first load once, whoever asks first (``first``, default a settled
        ``reload``: a save met at start is read when done, instead of making the first
        generation an empty one); callers resume in the order they called.

        A waiter is woken a few turns of the loop after the load ends; a request read in
        between would find the load done and answer first. The gate (a FIFO lock, held
        while waiting) makes it queue behind the earlier ones, so requests piped behind
        the start are answered in the order sent.
        """
        if self.first_load is None:
            self.first_load = asyncio.ensure_future((first or self._settled_reload)())
        if self.first_load.done() and not self._first_gate.locked():
            return
        async with self._first_gate:
            await asyncio.shield(self.first_load)

    async def _settled_reload(self) -> bool:
        return await self.reload(settle=True)

    async def _files_changed(self) -> None:
        changed = self.watcher.differing()
        retry = bool(changed) and all(
            key in self._failed_stamps and self._failed_stamps[key] == now
            for key, now in changed.items()
        )
        if retry:
            log.info("reading again a settings file whose last read failed")
        else:
            log.info("settings file changed on disk; reloading")
        await self.reload(settle=True, repeat=not retry)

    # ------------------------------------------------------------------ lifetime

    def start(self) -> None:
        """Start looking at the polled files (on the running loop)."""
        self.watcher.start()

    def close(self) -> None:
        """Stop watching and drop the generation; later loads do nothing."""
        self.closed = True
        self.watcher.stop()
        self.configs = {}
