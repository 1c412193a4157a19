"""The MCP server's generation, kept current as the settings files change.

docs/mcp.md, "Live"; the rules are the LSP server's (docs/configuration.md, "When the
configuration is read again"), with the same modules: ``config.load_config`` reads and
validates one generation, ``watch.SettingsWatcher`` polls the files, and
``config.SettingsFiles`` remembers each file's last good content, so a half-written save
keeps the snippets it had. A load that fails in any way keeps the last generation and is
reported; the next change tries again. Nothing here imports the ``mcp`` SDK.

Where the project layer comes from: only a trusted project (``--trust-project``) is
read, and its folder is the client's first ``file:`` root when the client names one,
else ``--project``, else the current directory. An untrusted project's settings file is
only noted (once), never read.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

from pi_snippets_lsp.core.config import EMPTY_CONFIG, MESSAGE_PREFIX, Config
from pi_snippets_lsp.settings.layers import (
    LoadRequest,
    SettingsFiles,
    load_config,
    user_settings_path,
)
from pi_snippets_lsp.settings.watch import SettingsWatcher, take_stamps

log = logging.getLogger(__name__)

#: Seconds between looks at the settings files: the LSP server's default, and its floor.
DEFAULT_POLL_INTERVAL: Final = 1.0
MIN_POLL_INTERVAL: Final = 0.25


@dataclass(frozen=True)
class McpFlags:
    """``pi-snippets-lsp mcp``'s command line."""

    settings: str | None = None
    project: str | None = None
    trust_project: bool = False
    poll_interval: float = DEFAULT_POLL_INTERVAL


def project_folder(flags: McpFlags, root: str | None) -> Path | None:
    """The project folder: the client's root (trusted projects only), else ``--project``,
    else the current directory (None when that is gone)."""
    if root is not None and flags.trust_project:
        return Path(root)
    if flags.project:
        return Path(flags.project).expanduser()
    try:
        return Path.cwd()
    except OSError:
        return None


def load_request(flags: McpFlags, root: str | None) -> LoadRequest:
    return LoadRequest(
        user_file=user_settings_path(override=flags.settings),
        user_file_required=flags.settings is not None,
        project_folder=project_folder(flags, root),
        trust_project=flags.trust_project,
    )


def snippets_changed(previous: Config, current: Config) -> bool:
    """Whether the lists a client shows differ: a snippet added, removed, or with another
    text or source. A save that changes nothing else announces nothing."""
    return previous.snippets != current.snippets


def changed_names(previous: Config, current: Config) -> list[str]:
    """The names of the snippets added, removed, or given another text, in name order."""
    before, after = previous.values, current.values
    names = before.keys() | after.keys()
    return sorted(name for name in names if before.get(name) != after.get(name))


class LiveSnippets:
    """The current generation (``config``), and the reloads that replace it.

    ``on_load(previous, current)`` runs after each successful load; ``on_failure(text)``
    after a load that failed (the last generation stays).
    """

    def __init__(
        self,
        flags: McpFlags,
        on_load: Callable[[Config, Config], Awaitable[None]],
        on_failure: Callable[[str], Awaitable[None]],
    ) -> None:
        self.flags = flags
        self.on_load = on_load
        self.on_failure = on_failure
        self.config: Config = EMPTY_CONFIG
        self.generation = 0
        #: The client's first ``file:`` root, when it named one (trusted projects only).
        self.root: str | None = None
        self.files = SettingsFiles()
        self._lock = asyncio.Lock()
        interval = flags.poll_interval
        if 0 < interval < MIN_POLL_INTERVAL:
            interval = MIN_POLL_INTERVAL
        self.watcher = SettingsWatcher(
            files=self.settings_files, on_change=self._files_changed, interval=interval
        )

    def request(self) -> LoadRequest:
        return load_request(self.flags, self.root)

    def settings_files(self) -> list[Path]:
        """The files a load reads: the user file and, for a trusted project, its own."""
        return self.request().files

    def start(self) -> None:
        self.watcher.start()

    def stop(self) -> None:
        self.watcher.stop()

    async def _files_changed(self) -> None:
        log.info("settings file changed on disk; reloading")
        await self.reload(settle=True)

    async def set_root(self, root: str | None) -> None:
        """The client's roots changed: reload when that moves the project layer."""
        if not self.flags.trust_project or root == self.root:
            return
        self.root = root
        await self.reload()

    async def reload(self, settle: bool = False) -> Config:
        """Load a new generation, off the event loop, and announce it.

        ``settle``: the load follows a change on disk, which may be a save in progress;
        when a file is unusable, the change is settled and read once more before
        anything is announced (the LSP server's rule).
        """
        async with self._lock:
            request = self.request()
            # Stamp before reading: a save that lands mid-load is seen by the next look.
            stamps = take_stamps(request.files)
            try:
                config = await asyncio.to_thread(load_config, request, self.files)
                if settle and self.files.unusable:
                    await self.watcher.settle(request.files)
                    stamps = take_stamps(request.files)
                    config = await asyncio.to_thread(load_config, request, self.files)
            except Exception as exc:  # a failed load must never end the server
                log.exception("loading the settings failed")
                await self.on_failure(
                    f"{MESSAGE_PREFIX} loading the settings failed ({exc}); "
                    "keeping the previous snippets"
                )
                return self.config
            previous, self.config = self.config, config
            self.generation += 1
            # The process serves one client: what start-up made and each generation stay
            # out of the garbage collector's walks (a full collection walked them all:
            # ~100 ms pauses every few prompts/list at 1,000 snippets). An old generation
            # holds no cycles: its counts free it when replaced.
            gc.freeze()
            self.watcher.seen(stamps)
            log.info(
                "generation %d: %d snippet(s), %d warning(s)",
                self.generation,
                len(config.snippets),
                len(config.warnings),
            )
            await self.on_load(previous, config)
            return config


def root_folder(uris: Sequence[str]) -> str | None:
    """The folder of the first ``file:`` root, or None (MCP roots are URIs; only a
    ``file:`` one is a folder on this machine)."""
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme != "file" or not parsed.path:
            continue
        path = unquote(parsed.path)
        if parsed.netloc and parsed.netloc != "localhost":
            path = f"//{parsed.netloc}{path}"
        return os.path.normpath(path)
    return None
