"""The MCP server's live generation: one folder's settings, kept current.

docs/mcp.md, "Live". The reload rules are ``settings.live``'s, the same as the LSP
server's (docs/configuration.md, "When the configuration is read again"); the folder
rules are ``settings.folders``'. What is the MCP server's own: its command line, and
where its one folder comes from (only a trusted project is read, and its folder is the
client's first ``file:`` root when the client names one, else ``--project``, else the
current directory; an untrusted project's settings file is only noted, never read).
Nothing here imports the ``mcp`` SDK.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.serving import DEFAULT_POLL_INTERVAL, raised_interval
from pi_snippets_lsp.mcp import protocol
from pi_snippets_lsp.mcp.jsonrpc import Id
from pi_snippets_lsp.settings.folders import project_folder
from pi_snippets_lsp.settings.layers import (
    LoadRequest,
    SettingsFiles,
    load_config,
    user_settings_path,
)
from pi_snippets_lsp.settings.live import ONLY, LiveSettings, Loaded
from pi_snippets_lsp.settings.watch import SettingsWatcher


@dataclass(frozen=True)
class McpFlags:
    """``pi-snippets-lsp mcp``'s command line."""

    settings: str | None = None
    project: str | None = None
    trust_project: bool = False
    poll_interval: float = DEFAULT_POLL_INTERVAL
    #: Offer the tools that change the snippets (``writes``).
    allow_writes: bool = False


class Listener:
    """One ``subscriptions/listen`` stream (2026-07-28): what it follows, and the
    event that ends it."""

    def __init__(self, id_: Id, honored: dict[str, object]) -> None:
        self.meta: dict[str, object] = {protocol.SUBSCRIPTION_ID_KEY: id_}
        self.prompts = honored.get("promptsListChanged") is True
        self.resources = honored.get("resourcesListChanged") is True
        uris = honored.get("resourceSubscriptions")
        self.uris = frozenset(uris if isinstance(uris, list) else ())
        self.closed = asyncio.Event()


def load_request(flags: McpFlags, root: str | None) -> LoadRequest:
    return LoadRequest(
        user_file=user_settings_path(override=flags.settings),
        user_file_required=flags.settings is not None,
        project_folder=project_folder(root, flags.project, flags.trust_project),
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
    """The current generation (``config``) of the one folder the server serves.

    ``on_load(previous, current)`` runs after each successful load, when ``warning``
    (the load's warning to show; None when nothing new is wrong) and ``untrusted`` (the
    project files it skipped that were not told before) say what to tell the client;
    ``on_failure(text)`` after a load that failed (the last generation stays).
    """

    def __init__(
        self,
        flags: McpFlags,
        on_load: Callable[[Config, Config], Awaitable[None]],
        on_failure: Callable[[str], Awaitable[None]],
    ) -> None:
        self.flags = flags
        self.on_load = on_load
        #: The client's first ``file:`` root, when it named one (trusted projects only).
        self.root: str | None = None
        self.warning: str | None = None
        self.untrusted: tuple[str, ...] = ()
        self.live = LiveSettings(
            self._load,
            self.settings_files,
            on_load=self._loaded,
            on_failure=on_failure,
            interval=raised_interval(flags.poll_interval),
        )

    @property
    def config(self) -> Config:
        return self.live.config(ONLY)

    @property
    def generation(self) -> int:
        return self.live.number

    @property
    def watcher(self) -> SettingsWatcher:
        return self.live.watcher

    def request(self) -> LoadRequest:
        return load_request(self.flags, self.root)

    def settings_files(self) -> list[Path]:
        """The files a load reads: the user file and, for a trusted project, its own."""
        return self.request().files

    def _load(self, files: SettingsFiles) -> dict[str | None, Config]:
        return {ONLY: load_config(self.request(), files)}

    def start(self) -> None:
        self.live.start()

    def stop(self) -> None:
        self.live.close()

    async def set_root(self, root: str | None) -> None:
        """The client's roots changed: reload when that moves the project layer."""
        if not self.flags.trust_project or root == self.root:
            return
        self.root = root
        await self.reload()

    async def reload(self, settle: bool = False) -> Config:
        """Load a new generation (``LiveSettings.reload``); the current one then."""
        await self.live.reload(settle=settle)
        return self.config

    async def _loaded(self, loaded: Loaded) -> None:
        self.warning, self.untrusted = loaded.warning, loaded.untrusted
        # The process serves one client: what start-up made and each generation stay
        # out of the garbage collector's walks (a full collection walks them all, a
        # pause of prompts/list every few calls at thousands of snippets). An old
        # generation holds no cycles: its counts free it when replaced.
        gc.freeze()
        await self.on_load(loaded.previous.get(ONLY, Config()), loaded.current.get(ONLY, Config()))
