"""The language server: thin pygls handlers around the core modules.

lsp-design.md is the specification. Each handler converts positions with the document's
codec, calls plain core code (grammar, expansion, completion, config), and translates
the answer back. State that changes over a session lives on ``SnippetsServer``: the open
documents, the current generation of configuration per workspace folder, and what is
registered with the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import attrs
from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)
from pygls.uris import to_fs_path

from . import __version__
from .completion import Suggestions, suggest_completion
from .config import (
    EMPTY_CONFIG,
    MESSAGE_PREFIX,
    SETTINGS_KEY,
    Config,
    Layer,
    LoadRequest,
    SettingsFiles,
    client_layer,
    load_config,
    plain_json,
    project_settings_path,
    user_settings_path,
)
from .documents import ENCODINGS, Document, Encoding, Position, units_length
from .expansion import expand
from .protocol import (
    DID_LOAD,
    EXPAND,
    LIST,
    RELOAD,
    ExpandParams,
    ExpandResult,
    InvalidParams,
    ListParams,
    SnippetsState,
    parse_params,
)

log = logging.getLogger(__name__)


class _QuietInvalidParams(logging.Filter):
    """pygls logs a full traceback for every error answer; bad params are the client's
    mistake, already answered with -32602, so one line is enough."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcInvalidParams | JsonRpcInvalidRequest):
            record.msg, record.args, record.exc_info = "%s", (exc.message,), None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


logging.getLogger("pygls.protocol.json_rpc").addFilter(_QuietInvalidParams())

SERVER_NAME: Final = "pi-snippets-lsp"
TRIGGER_CHARACTERS: Final = ["%"]
COMPLETION_REGISTRATION_ID: Final = "pi-snippets-completion"
WATCHER_REGISTRATION_ID: Final = "pi-snippets-settings-watcher"
DEFAULT_POLL_INTERVAL: Final = 1.0
CLIENT_REQUEST_TIMEOUT: Final = 5.0


@dataclass(frozen=True)
class ServerOptions:
    """Command-line choices: ``--settings``, ``--project``, ``--trust-project``."""

    user_settings: str | None = None
    default_project: str | None = None
    trust_project: bool = False


@attrs.define
class _CustomRequest:
    """A JSON-RPC request whose params reach the handler as plain JSON."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


_CUSTOM_METHODS: Final = frozenset({EXPAND, LIST, RELOAD})


def _folder_key(uri: str) -> str | None:
    path = to_fs_path(uri)
    return os.path.normpath(path) if path else None


class SnippetsProtocol(LanguageServerProtocol):
    """pygls's protocol with three changes the design asks for.

    - Custom requests get their params as plain JSON, validated by ``protocol.py``.
    - Text documents are kept by ``SnippetsServer`` with LSP line rules (pygls splits
      lines the Python way, see ``documents.py``), so pygls's own copy is not kept.
    - With a client that can register completion dynamically, the static provider is
      left out of the capabilities: completion is registered only while snippets exist.
    """

    _server: SnippetsServer

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls drops a message whose params do not fit the method's type, and a client
        waiting for the answer hangs. Answer such a request with -32602 instead, and
        skip such a notification with a log line; the session goes on either way."""
        try:
            return super().structure_message(data)
        except JsonRpcException:
            method = data.get("method")
            if "id" in data and isinstance(method, str):
                self._send_response(
                    data["id"],
                    error=JsonRpcInvalidParams(
                        f"{method}: params do not match the LSP specification"
                    ).to_response_error(),
                )
            log.warning("discarded a malformed %s message", method or "JSON-RPC")
            return JsonRPCNotification(method="$/piSnippets/discarded", jsonrpc="2.0", params=None)

    def handle_message(self, message: Any) -> None:
        """After ``shutdown`` pygls drops requests silently; LSP asks for an error."""
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if self._shutdown and method not in (None, types.EXIT) and msg_id is not None:
            self._send_response(
                msg_id,
                error=JsonRpcInvalidRequest(
                    f"{method}: the server is shut down"
                ).to_response_error(),
            )
            return
        super().handle_message(message)

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in _CUSTOM_METHODS:
            return _CustomRequest
        return super().get_message_type(method)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        if self._server.completion_is_dynamic:
            result.capabilities.completion_provider = None
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        self._server.documents[item.uri] = Document(
            uri=item.uri, text=item.text, version=item.version, language_id=item.language_id
        )

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        document = self._server.documents.get(params.text_document.uri)
        if document is None:
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        encoding = self._server.encoding
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = Position(change.range.start.line, change.range.start.character)
                end = Position(change.range.end.line, change.range.end.character)
                document.apply_change(change.text, start, end, encoding)
            else:
                document.apply_change(change.text)
        document.version = params.text_document.version

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._server.documents.pop(params.text_document.uri, None)


class SnippetsServer(LanguageServer):
    """The server and its session state."""

    def __init__(self, options: ServerOptions | None = None) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            protocol_cls=SnippetsProtocol,
            converter_factory=default_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.options = options or ServerOptions()
        self.documents: dict[str, Document] = {}
        self.files = SettingsFiles()
        #: The current generation, per workspace folder (None: no folder).
        self.configs: dict[str | None, Config] = {}
        self.init_namespace: object = None
        self.pulled_namespace: object = None
        self.trust_project = self.options.trust_project
        self.poll_interval = DEFAULT_POLL_INTERVAL
        self.completion_registered = False
        self.watchers_registered = False
        self.reported_untrusted: set[str] = set()
        self.generation = 0
        self._reload_lock = asyncio.Lock()
        self._registration_lock = asyncio.Lock()
        self._poll_task: asyncio.Task[None] | None = None
        self._first_load: asyncio.Task[Config] | None = None
        self._file_stamps: dict[str, tuple[int, int, int] | None] = {}
        self._initialized = False
        self._shut_down = False

    # ------------------------------------------------------------------ capabilities

    @property
    def caps(self) -> types.ClientCapabilities:
        return self.client_capabilities

    @property
    def completion_is_dynamic(self) -> bool:
        return bool(
            get_capability(self.caps, "text_document.completion.dynamic_registration", False)
        )

    @property
    def snippet_support(self) -> bool:
        return bool(
            get_capability(
                self.caps, "text_document.completion.completion_item.snippet_support", False
            )
        )

    @property
    def markdown_documentation(self) -> bool:
        formats = get_capability(
            self.caps, "text_document.completion.completion_item.documentation_format", []
        )
        return types.MarkupKind.Markdown in (formats or [])

    @property
    def watchers_are_dynamic(self) -> bool:
        return bool(
            get_capability(
                self.caps, "workspace.did_change_watched_files.dynamic_registration", False
            )
        )

    @property
    def encoding(self) -> Encoding:
        # pygls stores the negotiated encoding as a plain string or as the enum.
        negotiated = self.workspace.position_encoding
        chosen = str(getattr(negotiated, "value", negotiated) or "utf-16")
        return next((e for e in ENCODINGS if e == chosen), "utf-16")

    # ------------------------------------------------------------------ configuration

    def folder_paths(self) -> list[str]:
        """Workspace folders as filesystem paths, in the client's order."""
        try:
            folders = list(self.workspace.folders.values())
        except RuntimeError:
            return []
        paths = [_folder_key(folder.uri) for folder in folders]
        return [p for p in paths if p]

    def default_folder(self) -> str | None:
        """The folder of a request without a document: the first, or ``--project``."""
        folders = self.folder_paths()
        if folders:
            return folders[0]
        root: str | None = None
        with contextlib.suppress(RuntimeError):
            root = self.workspace.root_path
        if root:
            return os.path.normpath(root)
        if self.options.default_project:
            return os.path.normpath(self.options.default_project)
        return None

    def folder_for(self, uri: str | None) -> str | None:
        """The workspace folder holding ``uri`` (the deepest one), else the default."""
        if uri:
            path = _folder_key(uri)
            if path:
                holding = [
                    f for f in self.folder_paths() if path == f or path.startswith(f + os.sep)
                ]
                if holding:
                    return max(holding, key=len)
        return self.default_folder()

    def config_for(self, uri: str | None = None) -> Config:
        return self.configs.get(self.folder_for(uri), EMPTY_CONFIG)

    async def loaded_config_for(self, uri: str | None = None) -> Config:
        """``config_for`` once the first generation exists.

        A frontend may send ``snippets/expand`` right behind ``initialized``; it must
        see the configuration that notification loads, not an empty one.
        """
        await self.ensure_loaded()
        return self.config_for(uri)

    async def ensure_loaded(self) -> None:
        """Load the first generation once, whoever asks first."""
        if self._first_load is None:
            self._first_load = asyncio.ensure_future(self.reload())
        await asyncio.shield(self._first_load)

    def client_layers(self) -> list[Layer]:
        layers = [
            client_layer("initializationOptions", self.init_namespace),
            client_layer("workspace/configuration", self.pulled_namespace),
        ]
        return [layer for layer in layers if layer is not None]

    def settings_files(self) -> list[Path]:
        """Every settings file a generation reads, for watching."""
        files = [user_settings_path(override=self.options.user_settings)]
        folders: Iterable[str | None] = [*self.folder_paths(), self.default_folder()]
        if self.trust_project:
            files.extend(project_settings_path(f) for f in dict.fromkeys(folders) if f)
        return files

    async def pull_configuration(self) -> None:
        """Ask the client for the ``piSimpleSnippets`` section, when it can answer."""
        if not get_capability(self.caps, "workspace.configuration", False):
            return
        try:
            result = await _ask_client(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SETTINGS_KEY)])
                )
            )
        except Exception as exc:  # a client that cannot answer keeps the last value
            log.warning("workspace/configuration failed: %s", exc)
            return
        # lsprotocol hands the result over as a tuple; a client may send a list.
        values = plain_json(result)
        self.pulled_namespace = values[0] if isinstance(values, list) and values else None

    async def reload(self, pull: bool = True) -> Config:
        """Load a new generation for every folder, report it, and update registrations."""
        async with self._reload_lock:
            if self._shut_down:
                return EMPTY_CONFIG
            if pull:
                await self.pull_configuration()
            # Stamp before reading: a save that lands mid-load is seen by the next poll.
            stamps = {str(p): _stamp(p) for p in self.settings_files()}
            keys: list[str | None] = list(
                dict.fromkeys([*self.folder_paths(), self.default_folder()])
            )
            layers = self.client_layers()
            user_file = user_settings_path(override=self.options.user_settings)
            configs: dict[str | None, Config] = {}
            for key in keys:
                configs[key] = load_config(
                    LoadRequest(
                        user_file=user_file,
                        project_folder=Path(key) if key else None,
                        trust_project=self.trust_project,
                        client_layers=layers,
                    ),
                    self.files,
                )
            self.configs = configs
            self.generation += 1
            self._file_stamps = stamps
            self._report(configs.values())
            await self.sync_completion_registration()
            default = self.config_for(None)
            self.protocol.notify(DID_LOAD, SnippetsState.of(default).to_json())
            log.info(
                "generation %d: %d snippet(s), %d warning(s)",
                self.generation,
                len(default.snippets),
                len(default.warnings),
            )
            return default

    def _report(self, configs: Iterable[Config]) -> None:
        """One Warning per generation with every problem; one Info per untrusted file."""
        problems: list[str] = []
        untrusted: list[str] = []
        for config in configs:
            problems.extend(w for w in config.warnings if w not in problems)
            untrusted.extend(p for p in config.untrusted_project_files if p not in untrusted)
        if problems:
            message = f"{MESSAGE_PREFIX} " + "; ".join(problems)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            )
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Warning, message=message)
            )
        for path in untrusted:
            if path in self.reported_untrusted:
                continue
            self.reported_untrusted.add(path)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Info,
                    message=f"{MESSAGE_PREFIX} skipped project settings {path}: the project "
                    "is not trusted (set trustProjectSettings to read it)",
                )
            )

    # ------------------------------------------------------------------ registration

    def any_snippets(self) -> bool:
        return any(config.snippets for config in self.configs.values())

    async def sync_completion_registration(self) -> None:
        """Register completion while usable snippets exist, unregister when none are left."""
        if not self.completion_is_dynamic:
            return
        async with self._registration_lock:
            wanted = self.any_snippets() and not self._shut_down
            if wanted == self.completion_registered:
                return
            try:
                if wanted:
                    await self._register(
                        COMPLETION_REGISTRATION_ID,
                        types.TEXT_DOCUMENT_COMPLETION,
                        types.CompletionRegistrationOptions(
                            document_selector=None,
                            trigger_characters=TRIGGER_CHARACTERS,
                            resolve_provider=False,
                        ),
                    )
                else:
                    await _ask_client(
                        self.client_unregister_capability_async(
                            types.UnregistrationParams(
                                unregisterations=[
                                    types.Unregistration(
                                        id=COMPLETION_REGISTRATION_ID,
                                        method=types.TEXT_DOCUMENT_COMPLETION,
                                    )
                                ]
                            )
                        )
                    )
                self.completion_registered = wanted
            except Exception as exc:
                log.warning("completion (un)registration failed: %s", exc)

    async def _register(self, registration_id: str, method: str, options: Any) -> None:
        await _ask_client(
            self.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=registration_id, method=method, register_options=options
                        )
                    ]
                )
            )
        )

    async def register_watchers(self) -> None:
        """Ask the client to watch the settings files, when it can."""
        if not self.watchers_are_dynamic or self.watchers_registered:
            return
        self.watchers_registered = True
        watchers = [
            types.FileSystemWatcher(glob_pattern=str(path)) for path in self.settings_files()
        ]
        watchers.append(types.FileSystemWatcher(glob_pattern="**/.pi/settings.json"))
        try:
            await self._register(
                WATCHER_REGISTRATION_ID,
                types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
            )
        except Exception as exc:
            self.watchers_registered = False
            log.warning("watcher registration failed: %s", exc)

    def start_polling(self) -> None:
        """Watch the settings files in-process (clients that cannot watch for us)."""
        if self._poll_task is None and self.poll_interval > 0:
            self._poll_task = asyncio.get_running_loop().create_task(self._poll())

    async def _poll(self) -> None:
        while not self._shut_down:
            await asyncio.sleep(self.poll_interval)
            stamps = {str(p): _stamp(p) for p in self.settings_files()}
            if stamps != self._file_stamps:
                log.info("settings file changed on disk; reloading")
                try:
                    await self.reload(pull=False)
                except Exception:
                    log.exception("reload after a file change failed")

    @property
    def shutdown_requested(self) -> bool:
        return self._shut_down

    def stop(self) -> None:
        """``shutdown``: unregister, stop watching, and clear the configuration."""
        self._shut_down = True
        if self._poll_task is not None:
            self._poll_task.cancel()
            self._poll_task = None
        unregister: list[types.Unregistration] = []
        if self.completion_registered:
            unregister.append(
                types.Unregistration(
                    id=COMPLETION_REGISTRATION_ID, method=types.TEXT_DOCUMENT_COMPLETION
                )
            )
        if self.watchers_registered:
            unregister.append(
                types.Unregistration(
                    id=WATCHER_REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES
                )
            )
        if unregister:
            # Not awaited: after ``shutdown`` pygls drops every message but ``exit``.
            self.client_unregister_capability(
                types.UnregistrationParams(unregisterations=unregister)
            )
        self.completion_registered = False
        self.watchers_registered = False
        self.configs = {}


async def _ask_client(request: Awaitable[Any]) -> Any:
    """Await a request to the client, giving up after a while without cancelling it:
    a late answer must land on a live future, not on a cancelled one."""
    return await asyncio.wait_for(asyncio.shield(request), CLIENT_REQUEST_TIMEOUT)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


# ---------------------------------------------------------------------- handlers


def create_server(options: ServerOptions | None = None) -> SnippetsServer:
    """A server with every handler registered."""
    server = SnippetsServer(options)

    @server.feature(types.INITIALIZE)
    def initialize(ls: SnippetsServer, params: types.InitializeParams) -> None:
        init = plain_json(params.initialization_options)
        if isinstance(init, dict):
            ls.init_namespace = init.get(SETTINGS_KEY)
            if isinstance(init.get("trustProjectSettings"), bool):
                ls.trust_project = init["trustProjectSettings"] or ls.options.trust_project
            interval = init.get("pollInterval")
            if isinstance(interval, int | float) and not isinstance(interval, bool):
                ls.poll_interval = max(0.0, float(interval))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: SnippetsServer, params: types.InitializedParams) -> None:
        if ls._initialized:
            return
        ls._initialized = True
        await ls.register_watchers()
        await ls.ensure_loaded()
        if not ls.watchers_are_dynamic:
            ls.start_polling()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: SnippetsServer, params: None) -> None:
        ls.stop()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: SnippetsServer, params: types.DidChangeConfigurationParams
    ) -> None:
        pulled = get_capability(ls.caps, "workspace.configuration", False)
        if not pulled:
            settings = plain_json(params.settings)
            if isinstance(settings, dict) and SETTINGS_KEY in settings:
                ls.pulled_namespace = settings[SETTINGS_KEY]
        await ls.reload(pull=pulled)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(
        ls: SnippetsServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        await ls.reload(pull=False)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(
        ls: SnippetsServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        await ls.reload(pull=False)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=False),
    )
    async def completion(
        ls: SnippetsServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        config = await ls.loaded_config_for(params.text_document.uri)
        document = ls.documents.get(params.text_document.uri)
        position = Position(params.position.line, params.position.character)
        if document is None or not document.contains(position):
            return None
        encoding = ls.encoding
        before, _ = document.text_before(position, encoding)
        suggestions = suggest_completion(before, config)
        if suggestions is None:
            return None
        return _completion_list(
            suggestions,
            position.line,
            before,
            encoding,
            snippet_support=ls.snippet_support,
            markdown=ls.markdown_documentation,
        )

    @server.feature(EXPAND)
    async def snippets_expand(ls: SnippetsServer, params: object) -> dict[str, Any]:
        request = _parse(ExpandParams, params, EXPAND)
        config = await ls.loaded_config_for(request.uri)
        result = expand(request.text, config.values)
        return ExpandResult(text=result.text, changed=result.changed).model_dump()

    @server.feature(LIST)
    async def snippets_list(ls: SnippetsServer, params: object) -> dict[str, Any]:
        request = _parse(ListParams, params, LIST)
        return SnippetsState.of(await ls.loaded_config_for(request.uri)).to_json()

    @server.feature(RELOAD)
    async def snippets_reload(ls: SnippetsServer, params: object) -> dict[str, Any]:
        request = _parse(ListParams, params, RELOAD)
        await ls.ensure_loaded()
        await ls.reload()
        return SnippetsState.of(ls.config_for(request.uri)).to_json()

    return server


def _parse(model: Any, params: object, method: str) -> Any:
    try:
        return parse_params(model, plain_json(params), method)
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


def escape_snippet(text: str) -> str:
    """Escape ``\\``, ``$`` and ``}`` so a snippet-format insert arrives literally."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def _completion_list(
    suggestions: Suggestions,
    line: int,
    before: str,
    encoding: Encoding,
    *,
    snippet_support: bool,
    markdown: bool,
) -> types.CompletionList:
    """LSP items: the edit replaces only the token, from its ``%`` to the cursor."""
    token_range = types.Range(
        start=types.Position(line, units_length(before[: suggestions.token.start], encoding)),
        end=types.Position(line, units_length(before, encoding)),
    )
    text_format = (
        types.InsertTextFormat.Snippet if snippet_support else types.InsertTextFormat.PlainText
    )
    items = []
    for item in suggestions.items:
        new_text = escape_snippet(item.insert_text) if snippet_support else item.insert_text
        items.append(
            types.CompletionItem(
                label=item.label,
                label_details=types.CompletionItemLabelDetails(description=item.preview),
                kind=types.CompletionItemKind.Snippet,
                detail=item.preview,
                documentation=types.MarkupContent(
                    kind=types.MarkupKind.Markdown, value=item.snippet.value
                )
                if markdown
                else item.snippet.value,
                sort_text=item.sort_text,
                filter_text=item.label,
                insert_text_format=text_format,
                text_edit=types.TextEdit(range=token_range, new_text=new_text),
            )
        )
    return types.CompletionList(is_incomplete=suggestions.incomplete, items=items)
