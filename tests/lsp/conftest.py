"""pytest-lsp sessions against the real server started over stdio.

Each session has its own settings folder (``PI_CODING_AGENT_DIR``) and workspace, a
client declaring one real editor's capabilities, and a record of what the server
registered with it. ``start`` gives a test servers of its own; ``shared`` gives a test
that only reads a server it shares with the module's other tests (see each fixture).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_asyncio import is_async_test
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "pi_snippets_lsp"]
#: Seconds the in-process watcher waits between looks; tests keep it short.
POLL = 0.1
#: The server's minimum poll interval is larger: the servers of these tests allow it.
POLL_FLAGS = ["--min-poll-interval", str(POLL)]


def capabilities(kind: str) -> types.ClientCapabilities:
    """Canned capabilities of a real editor, or a bare client.

    ``plain``: no dynamic registration, no snippet support, no workspace/configuration,
    no position encodings: the least an LSP client can be. ``utf-32``: VS Code's
    capabilities, offering only UTF-32 positions.
    """
    if kind == "plain":
        return types.ClientCapabilities()
    if kind == "utf-32":
        caps = client_capabilities("visual-studio-code")
        caps.general = types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf32]
        )
        return caps
    return client_capabilities(kind)


CLIENTS = ["neovim", "visual-studio-code", "plain"]
#: What our own clients send to get ``snippets/didLoad``.
OPT_IN = {"notifications": ["snippets/didLoad"]}
#: Notifications of the LSP specification a server may send.
STANDARD_NOTIFICATIONS = frozenset(
    {
        "window/showMessage",
        "window/logMessage",
        "telemetry/event",
        "textDocument/publishDiagnostics",
        "$/progress",
        "$/logTrace",
        "$/cancelRequest",
    }
)
#: One client per position encoding: Neovim (UTF-8), VS Code (UTF-16), UTF-32.
ENCODINGS = {"neovim": "utf-8", "visual-studio-code": "utf-16", "utf-32": "utf-32"}

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in code units of ``encoding`` (counted by Python's codecs,
    not by the server's code)."""
    if encoding == "utf-32":
        return len(text)
    codec = "utf-16-le" if encoding == "utf-16" else "utf-8"
    return len(text.encode(codec, "surrogatepass")) // (2 if encoding == "utf-16" else 1)


def lsp_position(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of a code-point offset (lines split at CR, LF and CRLF only)."""
    starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]
    line = max(i for i, start in enumerate(starts) if start <= offset)
    return types.Position(line, units(text[starts[line] : offset], encoding))


def lsp_range(text: str, start: int, end: int, encoding: str) -> types.Range:
    return types.Range(lsp_position(text, start, encoding), lsp_position(text, end, encoding))


def offset_of(text: str, position: types.Position, encoding: str) -> int:
    """The code-point offset of an LSP position (which must be exact, not clamped)."""
    starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]
    offset = starts[position.line]
    while units(text[starts[position.line] : offset], encoding) < position.character:
        offset += 1
    assert units(text[starts[position.line] : offset], encoding) == position.character
    return offset


def apply_text_edits(text: str, edits: Sequence[types.TextEdit], encoding: str) -> str:
    """``text`` after ``edits`` (non-overlapping, ranges of the original), as an editor does."""
    spans = [
        (offset_of(text, e.range.start, encoding), offset_of(text, e.range.end, encoding), e)
        for e in edits
    ]
    for start, end, edit in sorted(spans, key=lambda s: s[0], reverse=True):
        text = text[:start] + edit.new_text + text[end:]
    return text


def document_edits(edit: types.WorkspaceEdit) -> dict[str, list[types.TextEdit]]:
    """The text edits of a workspace edit per URI, whichever form it took."""
    found: dict[str, list[types.TextEdit]] = {}
    for uri, edits in (edit.changes or {}).items():
        found.setdefault(uri, []).extend(edits)
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            found.setdefault(change.text_document.uri, []).extend(
                e for e in change.edits if isinstance(e, types.TextEdit)
            )
    return found


@dataclass
class Session:
    """One editor talking to one server."""

    client: LanguageClient
    home: Path
    workspace: Path
    registrations: dict[str, types.Registration] = field(default_factory=dict)
    registration_log: list[tuple[str, str]] = field(default_factory=list)
    #: ``snippets/didLoad`` params (the session opted in unless ``opt_in=False``).
    loads: list[Any] = field(default_factory=list)
    #: The method of every notification the server sent, in order.
    notifications: list[str] = field(default_factory=list)
    #: ``workspace/applyEdit`` requests received (answered applied unless refused).
    applied_edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    refuse_edits: bool = False
    fail_edits: bool = False
    #: ``workspace/semanticTokens/refresh`` requests received.
    token_refreshes: int = 0
    #: URIs the test opened (``shared`` closes them after the test).
    opened: list[str] = field(default_factory=list)
    _load_event: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def settings_file(self) -> Path:
        return self.home / "settings.json"

    def write_settings(self, namespace: object, path: Path | None = None) -> None:
        target = path or self.settings_file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"piSimpleSnippets": namespace}), encoding="utf-8")

    def uri(self, name: str) -> str:
        return (self.workspace / name).as_uri()

    def open(self, name: str, text: str, language: str = "markdown") -> str:
        return self.open_uri(self.uri(name), text, language)

    def open_uri(self, uri: str, text: str, language: str = "markdown", version: int = 1) -> str:
        if uri not in self.opened:
            self.opened.append(uri)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language, version=version, text=text
                )
            )
        )
        return uri

    def change(
        self, uri: str, version: int, *changes: types.TextDocumentContentChangeEvent
    ) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=list(changes),
            )
        )

    async def complete(self, uri: str, line: int, character: int) -> types.CompletionList | None:
        result = await self.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
            )
        )
        assert result is None or isinstance(result, types.CompletionList)
        return result

    async def request(self, method: str, params: object) -> Any:
        return await self.client.protocol.send_request_async(method, params)

    def custom_notifications(self) -> list[str]:
        """Notifications outside the LSP specification that the server sent."""
        return [m for m in self.notifications if m not in STANDARD_NOTIFICATIONS]

    def mark(self) -> int:
        """How many loads were seen so far, to wait for the next one."""
        return len(self.loads)

    async def next_load(self, after: int, timeout: float = 10.0) -> Any:
        """Wait for the ``snippets/didLoad`` after the ``after``-th one."""

        async def wait() -> Any:
            while len(self.loads) <= after:
                self._load_event.clear()
                await self._load_event.wait()
            return self.loads[after]

        return await asyncio.wait_for(wait(), timeout)

    def warnings_shown(self) -> list[str]:
        return [m.message for m in self.client.messages if m.type == types.MessageType.Warning]

    def infos_shown(self) -> list[str]:
        return [m.message for m in self.client.messages if m.type == types.MessageType.Info]


def as_dict(value: Any) -> Any:
    """Custom results arrive as namedtuples; compare them as plain JSON."""
    if hasattr(value, "_asdict"):
        return {k: as_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [as_dict(v) for v in value]
    return value


SessionFactory = Callable[..., Any]


def _tell_code_actions_from_commands(client: LanguageClient) -> None:
    """lsprotocol reads any code action that carries a ``command`` as a ``Command``; LSP
    clients tell them apart by whether ``command`` is a string (a ``Command``'s is)."""

    def structure(value: Any, _: object) -> types.Command | types.CodeAction:
        converter = client.protocol._converter
        if isinstance(value.get("command"), str):
            return converter.structure(value, types.Command)
        return converter.structure(value, types.CodeAction)

    client.protocol._converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 - the key lsprotocol uses
        structure,
    )


async def open_session(
    root: Path,
    kind: str = "neovim",
    *,
    settings: object = None,
    init: dict[str, Any] | None = None,
    configuration: object = None,
    folders: list[Path] | None = None,
    args: list[str] | None = None,
    capabilities_override: types.ClientCapabilities | None = None,
    initialize: bool = True,
    opt_in: bool = True,
    wrap: list[str] | None = None,
) -> Session:
    """The real server over stdio with its own settings folder (``root/home``) and workspace
    (``root/ws``), as the ``start`` fixture describes; ``wrap`` is a command the server
    runs under (``setpriv ... --``)."""
    home = root / "home"
    home.mkdir(parents=True)
    workspace = root / "ws"
    workspace.mkdir()
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(home)}
    config = ClientServerConfig(
        server_command=[*(wrap or []), *SERVER, *POLL_FLAGS, *(args or [])], server_env=env
    )
    client = await config.start()
    _tell_code_actions_from_commands(client)
    session = Session(client=client, home=home, workspace=workspace)
    if settings is not None:
        session.write_settings(settings)
    if configuration is not None:
        client.set_configuration(configuration, section="piSimpleSnippets")

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        for reg in params.registrations:
            session.registrations[reg.id] = reg
            session.registration_log.append(("register", reg.method))

    @client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def unregister(params: types.UnregistrationParams) -> None:
        for unreg in params.unregisterations:
            session.registrations.pop(unreg.id, None)
            session.registration_log.append(("unregister", unreg.method))

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        session.applied_edits.append(params)
        if session.fail_edits:  # an error answer, as Eglot gives when the user declines
            raise RuntimeError("User cancelled server edit")
        if session.refuse_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="refused")
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.WORKSPACE_SEMANTIC_TOKENS_REFRESH)
    def refresh_tokens(params: None) -> None:
        session.token_refreshes += 1

    @client.feature("snippets/didLoad")
    def did_load(params: Any) -> None:
        session.loads.append(as_dict(params))
        session._load_event.set()

    handle_notification = client.protocol._handle_notification

    def record_notification(method_name: str, params: Any) -> None:
        session.notifications.append(method_name)
        handle_notification(method_name, params)

    client.protocol._handle_notification = record_notification  # type: ignore[method-assign]

    if initialize:
        options: dict[str, Any] = {"pollInterval": POLL, **(OPT_IN if opt_in else {})}
        options.update(init or {})
        roots = folders if folders is not None else [workspace]
        try:
            await client.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities_override or capabilities(kind),
                    initialization_options=options,
                    workspace_folders=[
                        types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in roots
                    ],
                    root_uri=roots[0].as_uri() if roots else None,
                )
            )
            if opt_in:
                await session.next_load(0)
            else:  # answered once the first generation is loaded
                await session.request("snippets/list", {})
        except BaseException:
            await close_session(session)
            raise
    return session


async def close_session(session: Session) -> None:
    """Ends the session and its server, whatever state the test left them in."""
    with contextlib.suppress(Exception):  # a test may have ended the session itself
        await asyncio.wait_for(session.client.shutdown_session(), 10)
    # pygls's client.stop() waits for the process without ending it: a session that
    # was never initialized (or a failed test) must not hang the suite.
    process = session.client._server
    if process is not None and process.returncode is None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), 5)
        if process.returncode is None:
            process.kill()
    await session.client.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def start(tmp_path: Path) -> AsyncIterator[SessionFactory]:
    """``await start(kind, settings=..., init=..., configuration=...)`` -> Session.

    Each call starts a server of its own, ended after the test: for a test that changes
    anything (settings files, configuration, reloads, saves) or checks what the server
    sends unasked (registrations, notifications, messages, loads).

    The session opts in to ``snippets/didLoad`` (as our own clients do) and waits for
    the first one; ``opt_in=False`` sends no opt-in and waits for ``snippets/list``.
    """
    sessions: list[Session] = []

    async def factory(kind: str = "neovim", **kwargs: Any) -> Session:
        session = await open_session(tmp_path / f"s{len(sessions)}", kind, **kwargs)
        sessions.append(session)
        return session

    yield factory

    for session in sessions:
        await close_session(session)


class SharedSessions:
    """Servers started once and handed to every test that asks with the same arguments.

    A few stay running (``keep``, the most recently used); an older one is ended when a
    new one is needed, so a module's parametrized tests (which pytest runs one after the
    other) reuse theirs without holding a server per distinct argument set for the module.
    """

    def __init__(self, root: Path, keep: int = 8) -> None:
        self.root = root
        self.keep = keep
        self.sessions: dict[str, Session] = {}
        self.started = 0

    async def get(self, kind: str, **kwargs: Any) -> Session:
        for refused in ("folders", "initialize", "args"):
            assert refused not in kwargs, f"{refused}=...: use the start fixture"
        key = json.dumps([kind, kwargs], sort_keys=True, default=repr)
        session = self.sessions.pop(key, None)
        process = session.client._server if session is not None else None
        if session is not None and (process is None or process.returncode is not None):
            await close_session(session)  # a failed test ended it: the next gets a fresh one
            session = None
        if session is None:
            if len(self.sessions) >= self.keep:
                oldest = next(iter(self.sessions))
                await close_session(self.sessions.pop(oldest))
            # Nothing changes the files of a shared session: the server needs no looks.
            init = {"pollInterval": 0, **(kwargs.pop("init", None) or {})}
            session = await open_session(
                self.root / f"shared{self.started}", kind, init=init, **kwargs
            )
            self.started += 1
        self.sessions[key] = session  # now the most recently used
        return session

    async def close(self) -> None:
        for session in self.sessions.values():
            await close_session(session)
        self.sessions.clear()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def _shared_sessions(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[SharedSessions]:
    pool = SharedSessions(tmp_path_factory.mktemp("shared"))
    yield pool
    await pool.close()


@pytest_asyncio.fixture(loop_scope="session")
async def shared(_shared_sessions: SharedSessions) -> AsyncIterator[SessionFactory]:
    """``await shared(kind, settings=..., init=..., capabilities_override=...)`` -> Session,
    like ``start``, but one server per module for each set of arguments, shared by the tests
    that ask for it: a server start is about two seconds, most of an LSP test's time.

    Safe for a test that only opens documents, edits them and asks (completion, hover,
    tokens, code actions, ``snippets/expand``, ``snippets/list``), because:

    - the server's state such a test can touch is its open documents, and every document a
      test opened is closed after it (``didClose``), so the next test opens its own
      ``a.md`` afresh;
    - nobody changes the settings the server loaded: the folder is the pool's, a test gets
      no ``tmp_path`` of the server's, and the server is told not to look at its files
      (``pollInterval`` 0), so every test sees the one generation it started with;
    - the arguments are the whole key, so a test never gets a server set up for another.

    Not for a test that writes settings, reloads, changes configuration, saves a snippet,
    applies edits, or checks what the server sent unasked (``loads``, ``notifications``,
    messages, registrations, diagnostics): those accumulate over the tests that share a
    session; such a test uses ``start``.
    """
    used: list[Session] = []

    async def factory(kind: str = "neovim", **kwargs: Any) -> Session:
        session = await _shared_sessions.get(kind, **kwargs)
        used.append(session)
        return session

    yield factory

    for session in used:
        for uri in session.opened:
            session.client.text_document_did_close(
                types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri)
                )
            )
        session.opened.clear()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every async test of this folder runs in the session's event loop: a shared session's
    client (``shared``) outlives a test, and a client belongs to the loop it started in."""
    here = Path(__file__).parent
    in_session_loop = pytest.mark.asyncio(loop_scope="session")
    for item in items:
        if is_async_test(item) and here in Path(item.path).parents:
            item.add_marker(in_session_loop, append=False)
