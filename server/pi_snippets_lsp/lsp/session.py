"""One client's session: its workspace folders, the generation of each, reloads and
registrations.

docs/configuration.md, "Layers" and "Reload"; docs/lsp.md, "Completion" (registration).
The folder rules are pure functions (``folder_for``, ``default_folder``, ...), table-tested
without a server. ``Session`` holds the state that changes over a connection and talks
to the client only through ``Link`` (implemented by ``server.py``), so it imports nothing
from pygls and runs in tests against a fake link.

A reload builds a new generation for every folder and swaps one reference, so every
answer sees one whole configuration. A load that fails in any way is reported and keeps
the last good generation; the next load tries again (nothing is cached as failed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, Protocol
from urllib.parse import unquote, urlparse

from pi_snippets_lsp.core.config import (
    EMPTY_CONFIG,
    MESSAGE_PREFIX,
    SETTINGS_KEY,
    Config,
    Layer,
    client_layer,
    plain_json,
)
from pi_snippets_lsp.lsp.limits import Limits, folders_within, poll_interval_within
from pi_snippets_lsp.lsp.options import (
    ClientFeatures,
    InitializationOptions,
    parse_initialization_options,
)
from pi_snippets_lsp.settings.layers import (
    LoadRequest,
    load_config,
    project_settings_path,
    user_settings_path,
)
from pi_snippets_lsp.settings.overlay import EditedSettingsFiles
from pi_snippets_lsp.settings.watch import RETRY, SettingsWatcher, Stamp, take_stamps
from pi_snippets_lsp.wire.messages import DID_LOAD, LoadNotice

log = logging.getLogger(__name__)

MessageKind = Literal["error", "warning", "info"]

#: Client layers, named as ``snippets/list`` reports their snippets' source.
INIT_SOURCE: Final = "initializationOptions"
PULLED_SOURCE: Final = "workspace/configuration"
#: A pattern clients watch for project settings in every folder.
PROJECT_GLOB: Final = "**/.pi/settings.json"


@dataclass(frozen=True)
class ServerFlags:
    """Command-line choices: ``--settings``, ``--project``, ``--trust-project``, ``-v``
    (``error_details``: an internal error's answer carries its traceback) and the limits
    (``limits.py``)."""

    user_settings: str | None = None
    default_project: str | None = None
    trust_project: bool = False
    error_details: bool = False
    limits: Limits = field(default_factory=Limits)


class Link(Protocol):
    """What a session needs from the connection to its client."""

    def show(self, kind: MessageKind, text: str) -> None:
        """``window/showMessage`` (and the same text to ``window/logMessage``)."""

    def notify(self, method: str, params: object) -> None:
        """A server notification."""

    async def pull_configuration(self) -> object:
        """``workspace/configuration`` for ``piSimpleSnippets``: the section's value."""

    async def register_completion(self) -> None:
        """Register completion dynamically (raises when the client refuses)."""

    async def unregister_completion(self) -> None:
        """Unregister it."""

    async def register_watchers(self, globs: Sequence[str]) -> None:
        """Ask the client to watch these glob patterns (raises when it refuses)."""

    def unregister_all(self, completion: bool, watchers: bool) -> None:
        """At ``shutdown``: drop what is registered, without waiting for the answer."""

    def reloaded(self) -> None:
        """A new generation is in place: have the client ask again for what depends on
        it (semantic tokens)."""


# --------------------------------------------------------------------------- folder rules


def path_of_uri(uri: str) -> str | None:
    """The normalized file-system path of a ``file:`` URI; None for any other URI."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if parsed.netloc and parsed.netloc != "localhost":
        path = f"//{parsed.netloc}{path}"
    return os.path.normpath(path) if path else None


def is_inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (by path components)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def folder_for(folders: Sequence[str], path: str | None, default: str | None) -> str | None:
    """The workspace folder holding ``path``: the deepest one; else ``default``.

    A document belongs to the innermost folder, as a project inside a monorepo has its
    own ``.pi/settings.json``.
    """
    if path is not None:
        holding = [f for f in folders if is_inside(path, f)]
        if holding:
            return max(holding, key=len)
    return default


def default_folder(folders: Sequence[str], root: str | None, project: str | None) -> str | None:
    """The folder of a request without a document: the first workspace folder, else the
    workspace root, else ``--project``."""
    if folders:
        return folders[0]
    if root:
        return os.path.normpath(root)
    if project:
        return os.path.normpath(project)
    return None


def generation_keys(folders: Sequence[str], default: str | None) -> list[str | None]:
    """Every folder that gets a generation: each workspace folder, and the default."""
    return list(dict.fromkeys([*folders, default]))


def settings_files(user_file: Path, keys: Iterable[str | None], trust: bool) -> list[Path]:
    """Every settings file a generation reads: the user file and, for a trusted project,
    each folder's ``.pi/settings.json``."""
    files = [user_file]
    if trust:
        files.extend(project_settings_path(key) for key in keys if key)
    return list(dict.fromkeys(files))


def is_settings_path(path: str, user_file: Path, keys: Iterable[str | None]) -> bool:
    """Whether ``path`` is a settings file the session reads: the user file, or the
    ``.pi/settings.json`` of a workspace folder, trusted or not (an untrusted one is what
    the user is editing, to trust it later). A symlink to one counts as that one."""
    candidates = [user_file, *(project_settings_path(key) for key in keys if key)]
    normalized = {os.path.normpath(c) for c in candidates}
    if os.path.normpath(path) in normalized:
        return True
    real = os.path.realpath(path)
    return any(os.path.realpath(c) == real for c in normalized)


def files_to_poll(
    files: Sequence[Path], folders: Sequence[str], client_watches: bool
) -> list[Path]:
    """The settings files the server must watch itself.

    All of them when the client cannot watch for us. When it can, still those outside
    every workspace folder: some clients accept a watcher registration but only watch
    inside their folders, and the user settings file usually lies outside.
    """
    if not client_watches:
        return list(files)
    return [f for f in files if not any(is_inside(str(f), folder) for folder in folders)]


def combined_problems(configs: Iterable[Config]) -> list[str]:
    """The problems of one reload across folders, each once, in order."""
    problems: list[str] = []
    for config in configs:
        problems.extend(w for w in config.warnings if w not in problems)
    return problems


# --------------------------------------------------------------------------- the session


@dataclass
class _Registrations:
    completion: bool = False
    watchers: bool = False


@dataclass
class Session:
    """The state of one client's session (one connection)."""

    link: Link
    flags: ServerFlags = field(default_factory=ServerFlags)
    features: ClientFeatures = field(default_factory=ClientFeatures)
    options: InitializationOptions = field(default_factory=InitializationOptions)
    #: Problems with ``initializationOptions``: part of every generation's warning.
    option_problems: tuple[str, ...] = ()
    #: More workspace folders than ``Limits.max_folders``: part of every warning too.
    folder_problem: str | None = None
    folders: tuple[str, ...] = ()
    root: str | None = None

    generation: int = 0
    configs: dict[str | None, Config] = field(default_factory=dict)
    pulled_namespace: object = None
    files: EditedSettingsFiles = field(default_factory=EditedSettingsFiles)
    registered: _Registrations = field(default_factory=_Registrations)
    reported_untrusted: set[str] = field(default_factory=set)
    initialized: bool = False
    shut_down: bool = False

    def __post_init__(self) -> None:
        self._reload_lock = asyncio.Lock()
        self._registration_lock = asyncio.Lock()
        self._first_load: asyncio.Future[Config] | None = None
        #: Held by whoever waits for the first load, so waiters resume in arrival order.
        self._first_gate = asyncio.Lock()
        #: Files whose last read failed and may be read again: their stamps then.
        self._failed_stamps: dict[str, Stamp] = {}
        self._last_problems: list[str] = []
        self.watcher = SettingsWatcher(
            files=self.polled_files, on_change=self._files_changed, interval=0.0
        )

    # ------------------------------------------------------------------ set-up

    def initialize(
        self,
        raw_options: object,
        features: ClientFeatures,
        folders: Sequence[str],
        root: str | None,
    ) -> None:
        """``initialize``: the client's options, capabilities and folders."""
        self.options, self.option_problems = parse_initialization_options(raw_options)
        interval, problem = poll_interval_within(
            self.options.poll_interval, self.flags.limits.min_poll_interval
        )
        if problem is not None:
            self.option_problems = (*self.option_problems, problem)
        self.features = features
        self.set_folders(folders)
        self.root = root
        self.watcher.interval = interval

    def set_folders(self, folders: Sequence[str]) -> None:
        """The workspace folders, at most ``Limits.max_folders`` of them (each one is a
        generation: a client sending thousands would cost the daemon gigabytes)."""
        kept, self.folder_problem = folders_within(list(folders), self.flags.limits.max_folders)
        self.folders = tuple(kept)

    @property
    def trust_project(self) -> bool:
        return self.flags.trust_project or self.options.trust_project_settings

    @property
    def user_file(self) -> Path:
        return user_settings_path(override=self.flags.user_settings)

    @property
    def default_folder(self) -> str | None:
        return default_folder(self.folders, self.root, self.flags.default_project)

    def folder_of(self, uri: str | None) -> str | None:
        path = path_of_uri(uri) if uri else None
        return folder_for(self.folders, path, self.default_folder)

    def settings_files(self) -> list[Path]:
        keys = generation_keys(self.folders, self.default_folder)
        return settings_files(self.user_file, keys, self.trust_project)

    def is_settings_file(self, uri: str) -> bool:
        """Whether the document ``uri`` is one of the settings files this session reads."""
        path = path_of_uri(uri)
        keys = generation_keys(self.folders, self.default_folder)
        return path is not None and is_settings_path(path, self.user_file, keys)

    def polled_files(self) -> list[Path]:
        return files_to_poll(self.settings_files(), self.folders, self.registered.watchers)

    async def start(self) -> None:
        """``initialized``: ask the client to watch, load the first generation, and
        watch in-process what the client does not."""
        if self.initialized:
            return
        self.initialized = True
        await self._register_watchers()
        await self.ensure_loaded()
        self.watcher.start()

    # ------------------------------------------------------------------ generations

    def config_for(self, uri: str | None = None) -> Config:
        return self.configs.get(self.folder_of(uri), EMPTY_CONFIG)

    async def loaded_config_for(self, uri: str | None = None) -> Config:
        """``config_for`` once the first generation exists.

        A frontend may send ``snippets/expand`` right behind ``initialized``; it must
        see the configuration that notification loads, not an empty one.
        """
        await self.ensure_loaded()
        return self.config_for(uri)

    async def ensure_loaded(self) -> None:
        """Load the first generation once, whoever asks first; callers resume in the order
        they called.

        A waiter is woken a few turns of the loop after the load ends; a request read in
        between would find the load done and answer first. The gate (a FIFO lock, held
        while waiting) makes it queue behind the earlier ones, so requests piped behind
        ``initialized`` are answered in the order sent (docs/agent-frontends.md).
        """
        if self._first_load is None:
            # Settled like a reload: a save met at start (truncate, then write) is read
            # when done, instead of making the first generation an empty one.
            self._first_load = asyncio.ensure_future(
                self.reload(pull=self.initialized, settle=True)
            )
        if self._first_load.done() and not self._first_gate.locked():
            return
        async with self._first_gate:
            await asyncio.shield(self._first_load)

    async def configuration_changed(self, settings: object) -> None:
        """``workspace/didChangeConfiguration``: pull again, or take the pushed value."""
        if not self.features.configuration:
            pushed = plain_json(settings)
            if isinstance(pushed, dict) and SETTINGS_KEY in pushed:
                self.pulled_namespace = pushed[SETTINGS_KEY]
        await self.reload(pull=self.features.configuration)

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
        # A retry that meets the same problem again does not show it again.
        await self.reload(pull=False, settle=True, repeat=not retry)

    def client_layers(self) -> list[Layer]:
        layers = [
            client_layer(INIT_SOURCE, self.options.pi_simple_snippets),
            client_layer(PULLED_SOURCE, self.pulled_namespace),
        ]
        return [layer for layer in layers if layer is not None]

    async def reload(self, pull: bool = True, settle: bool = False, repeat: bool = True) -> Config:
        """Load a new generation for every folder, report it, update registrations.

        ``settle``: the load follows a change on disk (or is the first one). A file read
        then may be a save in progress (an editor that truncates, then writes); when a
        file is unusable, the change is settled (``watch.settle``) and read once more
        before anything is reported, so a save is read when it is done, and a complete
        file is read at once. A file whose read failed in a way that may pass (no
        permission, too many open files) is not marked as seen: the poller reads it again
        next time; ``repeat=False`` (such a retry) does not show the same problems again.
        """
        async with self._reload_lock:
            if self.shut_down:
                return EMPTY_CONFIG
            if pull and self.features.configuration:
                await self._pull_configuration()
            # Stamp before reading: a save that lands mid-load is seen by the next look.
            stamps = take_stamps(self.settings_files())
            try:
                configs = await asyncio.to_thread(self._load_all)
                if settle and self.files.unusable:
                    await self.watcher.settle(self.settings_files())
                    stamps = take_stamps(self.settings_files())
                    configs = await asyncio.to_thread(self._load_all)
            except Exception as exc:  # a failed load must never poison the session
                log.exception("loading the settings failed")
                self.link.show(
                    "warning",
                    f"{MESSAGE_PREFIX} loading the settings failed ({exc}); "
                    "keeping the previous snippets",
                )
                return self.config_for(None)
            self.configs = configs
            self.generation += 1
            self._failed_stamps = {key: stamps.get(key) for key in self.files.failed}
            self.watcher.seen({**stamps, **dict.fromkeys(self.files.failed, RETRY)})
            self._report(configs.values(), repeat)
            await self.sync_completion_registration()
            default = self.config_for(None)
            if DID_LOAD in self.options.notifications:
                # Only on request: clients that do not know it warn on every load.
                self.link.notify(DID_LOAD, LoadNotice.of(self.generation, default).to_json())
            self.link.reloaded()
            log.info(
                "generation %d: %d snippet(s), %d warning(s)",
                self.generation,
                len(default.snippets),
                len(default.warnings),
            )
            return default

    def _load_all(self) -> dict[str | None, Config]:
        """Read every folder's generation (runs on a worker thread, off the event loop)."""
        layers = self.client_layers()
        configs: dict[str | None, Config] = {}
        for key in generation_keys(self.folders, self.default_folder):
            config = load_config(
                LoadRequest(
                    user_file=self.user_file,
                    user_file_required=self.flags.user_settings is not None,
                    project_folder=Path(key) if key else None,
                    trust_project=self.trust_project,
                    client_layers=layers,
                ),
                self.files,
            )
            problems = (*self.option_problems, *filter(None, [self.folder_problem]))
            if problems:
                config = dataclasses.replace(config, warnings=(*problems, *config.warnings))
            configs[key] = config
        return configs

    async def _pull_configuration(self) -> None:
        try:
            result = await self.link.pull_configuration()
        except Exception as exc:  # a client that cannot answer keeps the last value
            log.warning("workspace/configuration failed: %s", exc)
            return
        # lsprotocol hands the result over as a tuple; a client may send a list.
        values = plain_json(result)
        self.pulled_namespace = values[0] if isinstance(values, list) and values else None

    def _report(self, configs: Iterable[Config], repeat: bool = True) -> None:
        """One Warning per generation with every problem (unless ``repeat`` is False and
        they are the ones shown last); one Info per untrusted file."""
        configs = list(configs)
        problems = combined_problems(configs)
        if problems and (repeat or problems != self._last_problems):
            self.link.show("warning", f"{MESSAGE_PREFIX} " + "; ".join(problems))
        self._last_problems = problems
        for config in configs:
            for path in config.untrusted_project_files:
                if path not in self.reported_untrusted:
                    self.reported_untrusted.add(path)
                    self.link.show(
                        "info",
                        f"{MESSAGE_PREFIX} skipped project settings {path}: the project "
                        "is not trusted (set trustProjectSettings to read it)",
                    )

    # ------------------------------------------------------------------ registrations

    def any_snippets(self) -> bool:
        return any(config.snippets for config in self.configs.values())

    async def sync_completion_registration(self) -> None:
        """Register completion while usable snippets exist, unregister when none are left:
        Pi registers no completion provider without snippets, so nothing of ours shows."""
        if not self.features.completion_dynamic:
            return
        async with self._registration_lock:
            wanted = self.any_snippets() and not self.shut_down
            if wanted == self.registered.completion:
                return
            try:
                if wanted:
                    await self.link.register_completion()
                else:
                    await self.link.unregister_completion()
                self.registered.completion = wanted
            except Exception as exc:
                log.warning("completion (un)registration failed: %s", exc)

    async def _register_watchers(self) -> None:
        """Ask the client to watch the settings files, when it can."""
        if not self.features.watchers_dynamic or self.registered.watchers:
            return
        globs = [str(path) for path in self.settings_files()]
        globs.append(PROJECT_GLOB)
        try:
            await self.link.register_watchers(globs)
            self.registered.watchers = True
        except Exception as exc:
            log.warning("watcher registration failed: %s", exc)

    async def files_changed_by_client(self) -> None:
        """``workspace/didChangeWatchedFiles``: reload (settling a save in progress)."""
        await self.reload(pull=False, settle=True)

    # ------------------------------------------------------------------ shutdown

    def close(self) -> None:
        """The connection is gone: stop watching, drop the generations. Nothing is sent;
        nobody listens."""
        self.shut_down = True
        self.watcher.stop()
        self.configs = {}

    def stop(self) -> None:
        """``shutdown``: unregister, stop watching, and clear the configuration."""
        self.shut_down = True
        self.watcher.stop()
        if self.registered.completion or self.registered.watchers:
            self.link.unregister_all(self.registered.completion, self.registered.watchers)
        self.registered = _Registrations()
        self.configs = {}
