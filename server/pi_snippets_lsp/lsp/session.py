"""One client's session: its workspace folders, their live generation, and registrations.

docs/configuration.md, "Layers" and "Reload"; docs/lsp.md, "Completion" (registration).
What a folder is and which files it reads are ``settings.folders``' rules; how a
generation is loaded, kept and read again is ``settings.live``'s. ``Session`` adds what
only a language client has: the client's own layers (``initializationOptions``,
``workspace/configuration``), messages and notifications, and registrations. It talks to
the client only through ``Link`` (implemented by ``server.py``), so it imports nothing
from pygls and runs in tests against a fake link.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, Protocol

from pi_snippets_lsp.core import catalog
from pi_snippets_lsp.core.config import (
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
from pi_snippets_lsp.settings import folders
from pi_snippets_lsp.settings.folders import generation_keys, path_of_uri
from pi_snippets_lsp.settings.layers import (
    LoadRequest,
    load_config,
    user_settings_path,
)
from pi_snippets_lsp.settings.live import LiveSettings, Loaded
from pi_snippets_lsp.settings.overlay import EditedSettingsFiles
from pi_snippets_lsp.settings.watch import SettingsWatcher
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

    pulled_namespace: object = None
    registered: _Registrations = field(default_factory=_Registrations)
    initialized: bool = False

    def __post_init__(self) -> None:
        self._registration_lock = asyncio.Lock()
        #: The generation of every folder key, kept current (``settings.live``).
        self.live = LiveSettings(
            lambda files: self._load_all(),
            self.settings_files,
            polled=self.polled_files,
            files=EditedSettingsFiles(),
            on_load=self._loaded,
            on_failure=self._failed,
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
        return folders.default_folder(self.folders, self.root, self.flags.default_project)

    @property
    def files(self) -> EditedSettingsFiles:
        """The settings files as read, with the edits the client applied (``overlay``)."""
        files = self.live.files
        assert isinstance(files, EditedSettingsFiles)
        return files

    @property
    def watcher(self) -> SettingsWatcher:
        return self.live.watcher

    @property
    def shut_down(self) -> bool:
        """Whether the session ended (``shutdown``, or the connection closed): its
        generation is dropped, and nothing loads again."""
        return self.live.closed

    @property
    def first_load(self) -> asyncio.Future[object] | None:
        """The first load, once started (``LiveSettings.first_load``)."""
        return self.live.first_load

    @property
    def generation(self) -> int:
        return self.live.number

    @property
    def configs(self) -> dict[str | None, Config]:
        return self.live.configs

    def folder_of(self, uri: str | None) -> str | None:
        path = path_of_uri(uri or "")
        return folders.folder_for(self.folders, path, self.default_folder)

    def settings_files(self) -> list[Path]:
        keys = generation_keys(self.folders, self.default_folder)
        return folders.settings_files(self.user_file, keys, self.trust_project)

    def is_settings_file(self, uri: str) -> bool:
        """Whether the document ``uri`` is one of the settings files this session reads."""
        path = path_of_uri(uri)
        keys = generation_keys(self.folders, self.default_folder)
        return path is not None and folders.is_settings_path(path, self.user_file, keys)

    def polled_files(self) -> list[Path]:
        return folders.files_to_poll(self.settings_files(), self.folders, self.registered.watchers)

    async def start(self) -> None:
        """``initialized``: ask the client to watch, load the first generation, and
        watch in-process what the client does not."""
        if self.initialized:
            return
        self.initialized = True
        await self._register_watchers()
        await self.ensure_loaded()
        self.live.start()

    # ------------------------------------------------------------------ generations

    def config_for(self, uri: str | None = None) -> Config:
        return self.live.config(self.folder_of(uri))

    async def loaded_config_for(self, uri: str | None = None) -> Config:
        """``config_for`` once the first generation exists.

        A frontend may send ``snippets/expand`` right behind ``initialized``; it must
        see the configuration that notification loads, not an empty one.
        """
        await self.ensure_loaded()
        return self.config_for(uri)

    async def ensure_loaded(self) -> None:
        """Load the first generation once, whoever asks first (``LiveSettings``), pulling
        the client's settings once it is initialized; requests piped behind
        ``initialized`` are answered in the order sent (docs/agent-frontends.md)."""
        await self.live.ensure_loaded(lambda: self.reload(pull=self.initialized, settle=True))

    async def configuration_changed(self, settings: object) -> None:
        """``workspace/didChangeConfiguration``: pull again, or take the pushed value."""
        if not self.features.configuration:
            pushed = plain_json(settings)
            if isinstance(pushed, dict) and SETTINGS_KEY in pushed:
                self.pulled_namespace = pushed[SETTINGS_KEY]
        await self.reload(pull=self.features.configuration)

    def client_layers(self) -> list[Layer]:
        layers = [
            client_layer(INIT_SOURCE, self.options.pi_simple_snippets),
            client_layer(PULLED_SOURCE, self.pulled_namespace),
        ]
        return [layer for layer in layers if layer is not None]

    async def reload(self, pull: bool = True, settle: bool = False) -> Config:
        """Load a new generation for every folder (``LiveSettings.reload``; ``settle`` is
        its), pulling the client's settings first when ``pull`` and the client can
        answer; the default folder's configuration then (empty once the session
        ended)."""
        pulling = pull and self.features.configuration
        await self.live.reload(settle, prepare=self._pull_configuration if pulling else None)
        return self.config_for(None)

    def _load_all(self) -> dict[str | None, Config]:
        """Read every folder's generation (runs on a worker thread, off the event loop)."""
        layers = self.client_layers()
        files = self.live.files
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
                files,
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

    async def _loaded(self, loaded: Loaded) -> None:
        """A new generation: one Warning with every problem (unless nothing new is wrong),
        one Info per untrusted file, the completion registration, and the notice."""
        if loaded.warning is not None:
            self.link.show("warning", loaded.warning)
        for path in loaded.untrusted:
            note = catalog.untrusted_note(path, "set trustProjectSettings")
            self.link.show("info", f"{MESSAGE_PREFIX} {note}")
        await self.sync_completion_registration()
        if DID_LOAD in self.options.notifications:
            # Only on request: clients that do not know it warn on every load.
            default = self.config_for(None)
            self.link.notify(DID_LOAD, LoadNotice.of(loaded.number, default).to_json())
        self.link.reloaded()

    async def _failed(self, message: str) -> None:
        self.link.show("warning", message)

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
        await self.live.reload(settle=True)

    # ------------------------------------------------------------------ shutdown

    def close(self) -> None:
        """The connection is gone: stop watching, drop the generations. Nothing is sent;
        nobody listens."""
        self.live.close()

    def stop(self) -> None:
        """``shutdown``: unregister, stop watching, and clear the configuration."""
        self.live.close()
        if self.registered.completion or self.registered.watchers:
            self.link.unregister_all(self.registered.completion, self.registered.watchers)
        self.registered = _Registrations()
