"""The handlers of the editor features: hover, definition, semantic tokens, code actions,
the two commands, and the diagnostics of open settings files.

docs/lsp.md, "Markers in the editor" and "Settings files". Each handler converts
positions with the document's codec, calls a pure module of ``features/`` with the
document's generation, and translates the answer (``translate.py``). ``server.py``
registers them (:func:`register`) and tells this module when a document opens, changes
or closes.

A settings file open in the editor is not a prompt: it gets its diagnostics and their
quick fixes, and none of the marker features (a ``%name`` inside a snippet's text is not
a marker of anything the user is about to send).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from pi_snippets_lsp.core.code_actions import (
    EXPAND_COMMAND,
    EXPAND_KIND,
    QUICKFIX_KIND,
    SAVE_COMMAND,
    SAVE_KIND,
    Action,
    expansion_edits,
    kind_wanted,
    prompt_actions,
)
from pi_snippets_lsp.core.config import MESSAGE_PREFIX, Config, plain_json
from pi_snippets_lsp.core.documents import Document, Position
from pi_snippets_lsp.core.hover import hover_text, layer_of
from pi_snippets_lsp.core.markers import Marker, marker_at
from pi_snippets_lsp.core.semantic_tokens import TOKEN_MODIFIERS, TOKEN_TYPES, semantic_tokens
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.session import path_of_uri
from pi_snippets_lsp.settings.diagnostics import settings_diagnostics
from pi_snippets_lsp.settings.locate import snippet_key_span
from pi_snippets_lsp.settings.overlay import create_file, read_text
from pi_snippets_lsp.settings.save_snippet import (
    SaveSnippetError,
    derive_name,
    file_names,
    name_problem,
    snippet_insertion,
)
from pi_snippets_lsp.wire.messages import (
    ExpandDocumentParams,
    InvalidParams,
    SaveSnippetParams,
    parse_params,
)

if TYPE_CHECKING:
    from pi_snippets_lsp.lsp.server import SnippetsServer

log = logging.getLogger(__name__)

#: Seconds the client may take to apply an edit (it may ask the user first).
APPLY_EDIT_TIMEOUT: Final = 60.0
_LEGEND: Final = types.SemanticTokensLegend(
    token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS)
)
_ACTION_KINDS: Final = [QUICKFIX_KIND, SAVE_KIND, EXPAND_KIND]


def register(server: SnippetsServer) -> None:
    """Register the editor features' handlers on ``server``."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SnippetsServer, params: types.HoverParams) -> types.Hover | None:
        found = await _prompt_marker(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        document, config, marker = found
        snippet = _snippet(config, marker.name)
        layer = layer_of(snippet.source, ls.session.user_file) if snippet else "client"
        markdown = ls.session.features.hover_markdown
        text = hover_text(marker, None if marker.escape else snippet, layer, markdown)
        return translate.hover(document, marker, text, markdown, ls.encoding)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(
        ls: SnippetsServer, params: types.DefinitionParams
    ) -> types.Location | None:
        found = await _prompt_marker(ls, params.text_document.uri, params.position)
        if found is None or found[2].escape:
            return None
        snippet = _snippet(found[1], found[2].name)
        if snippet is None or layer_of(snippet.source, ls.session.user_file) == "client":
            return None
        target, _ = await _settings_document(ls, Path(snippet.source))
        span = snippet_key_span(target.text, snippet.name) if target else None
        if target is None or span is None:
            return None
        return types.Location(uri=target.uri, range=translate.lsp_range(target, *span, ls.encoding))

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, _LEGEND)
    async def tokens_full(
        ls: SnippetsServer, params: types.SemanticTokensParams
    ) -> types.SemanticTokens | None:
        found = await _prompt(ls, params.text_document.uri)
        if found is None:
            return None
        document, config = found
        return types.SemanticTokens(data=semantic_tokens(document, config.values, ls.encoding))

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, _LEGEND)
    async def tokens_range(
        ls: SnippetsServer, params: types.SemanticTokensRangeParams
    ) -> types.SemanticTokens | None:
        found = await _prompt(ls, params.text_document.uri)
        if found is None:
            return None
        document, config = found
        start, end = _offsets(ls, document, params.range)
        data = semantic_tokens(document, config.values, ls.encoding, start, end)
        return types.SemanticTokens(data=data)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=_ACTION_KINDS)
    )
    async def code_action(
        ls: SnippetsServer, params: types.CodeActionParams
    ) -> list[types.CodeAction | types.Command] | None:
        uri = params.text_document.uri
        config = await ls.session.loaded_config_for(uri)
        document = ls.documents.get(uri)
        if document is None:
            return None
        if uri in ls.settings_documents:
            return _quick_fixes(ls, document, params.context) or None
        start, end = _offsets(ls, document, params.range)
        features = ls.session.features
        only, can_save = params.context.only, features.apply_edit
        actions = prompt_actions(
            document.text, config.values, start, end, only=only, uri=uri, can_save=can_save
        )
        results = [translate.code_action(a, document, features) for a in actions]
        return [r for r in results if r is not None] or None

    # pygls resolves a command handler's annotations when it runs, and ``SnippetsServer``
    # is imported here only for type checking (server.py imports this module): ``Any``.
    @server.command(EXPAND_COMMAND)
    async def expand_document(ls: Any, *args: Any) -> dict[str, Any]:
        return await _expand_document(ls, args)

    @server.command(SAVE_COMMAND)
    async def save_snippet(ls: Any, *args: Any) -> dict[str, Any]:
        return await _save_snippet(ls, _command_params(SaveSnippetParams, args, SAVE_COMMAND))


async def _expand_document(ls: SnippetsServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Expand the markers of a document (or of a range of it) through the client."""
    request = _command_params(ExpandDocumentParams, args, EXPAND_COMMAND)
    config = await ls.session.loaded_config_for(request.uri)
    document = ls.documents.get(request.uri)
    if document is None:
        raise JsonRpcInvalidParams(f"{EXPAND_COMMAND}: {request.uri} is not open")
    start, end = 0, len(document.text)
    if request.range is not None:
        start, end = _offsets(ls, document, request.range)
    edits = expansion_edits(document.text, config.values, start, end)
    if not edits:
        return {"applied": False, "changed": 0}
    lsp_edits = translate.text_edits(document, edits, ls.encoding)
    edit = translate.workspace_edit(document.uri, document.version, lsp_edits, ls.session.features)
    applied = await _apply(ls, edit, "Expand snippet markers")
    return {"applied": applied, "changed": len(edits) if applied else 0}


# ---------------------------------------------------------------------- settings documents


def document_changed(ls: SnippetsServer, uri: str, opened: bool) -> None:
    """``didOpen``/``didChange``: a settings file's diagnostics, from the buffer's text."""
    if opened and ls.session.is_settings_file(uri):
        ls.settings_documents.add(uri)
    if uri in ls.settings_documents:
        _publish(ls, uri)


def document_closed(ls: SnippetsServer, uri: str) -> None:
    """``didClose``: clear its diagnostics; an edited settings file is read from disk
    again (closing it saved the edit, which the stamp shows, or discarded it)."""
    if uri in ls.settings_documents:
        ls.settings_documents.discard(uri)
        _publish(ls, uri)
    path = path_of_uri(uri)
    if path is not None and ls.session.files.edited.drop(Path(path)):
        ls.spawn(ls.session.reload(pull=False))


def folders_changed(ls: SnippetsServer) -> None:
    """The settings files are those of the new folders: re-check every open document."""
    for uri in ls.documents:
        is_settings = ls.session.is_settings_file(uri)
        if is_settings != (uri in ls.settings_documents):
            if is_settings:
                ls.settings_documents.add(uri)
            else:
                ls.settings_documents.discard(uri)
            _publish(ls, uri)


def _publish(ls: SnippetsServer, uri: str) -> None:
    document = ls.documents.get(uri)
    diagnostics = []
    if document is not None and uri in ls.settings_documents:
        diagnostics = [
            translate.diagnostic(document, found, ls.encoding)
            for found in settings_diagnostics(document.text)
        ]
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri, diagnostics=diagnostics, version=document.version if document else None
        )
    )


def _quick_fixes(
    ls: SnippetsServer, document: Document, context: types.CodeActionContext
) -> list[types.CodeAction | types.Command]:
    """The fixes of the request's diagnostics, recomputed from the current text: a
    diagnostic of the request is ours when its range and message are those of one."""
    if not kind_wanted(QUICKFIX_KIND, context.only):
        return []
    fixes: list[types.CodeAction | types.Command] = []
    for found in settings_diagnostics(document.text):
        if found.fix is None:
            continue
        ours = translate.diagnostic(document, found, ls.encoding)
        asked = context.diagnostics
        if not any(d.range == ours.range and d.message == ours.message for d in asked):
            continue
        action = Action(found.fix.title, QUICKFIX_KIND, found.fix.edits)
        fix = translate.code_action(action, document, ls.session.features, [ours])
        if fix is not None:
            fixes.append(fix)
    return fixes


# ---------------------------------------------------------------------- helpers


async def _prompt(ls: SnippetsServer, uri: str) -> tuple[Document, Config] | None:
    """An open prompt document (not a settings file) and its generation."""
    config = await ls.session.loaded_config_for(uri)
    document = ls.documents.get(uri)
    if document is None or uri in ls.settings_documents:
        return None
    return document, config


async def _prompt_marker(
    ls: SnippetsServer, uri: str, position: types.Position
) -> tuple[Document, Config, Marker] | None:
    found = await _prompt(ls, uri)
    if found is None:
        return None
    document, config = found
    offset = document.offset_at(Position(position.line, position.character), ls.encoding)
    marker = marker_at(document.text, offset, config.values)
    return None if marker is None else (document, config, marker)


def _snippet(config: Config, name: str) -> Snippet | None:
    return next((s for s in config.snippets if s.name == name), None)


def _offsets(ls: SnippetsServer, document: Document, span: Any) -> tuple[int, int]:
    """An LSP range (or its params model) as code-point offsets, in order."""
    start = document.offset_at(Position(span.start.line, span.start.character), ls.encoding)
    end = document.offset_at(Position(span.end.line, span.end.character), ls.encoding)
    return min(start, end), max(start, end)


async def _settings_document(ls: SnippetsServer, path: Path) -> tuple[Document | None, bool]:
    """A settings file as the editor has it, and whether the editor has it open: the open
    buffer; else the text the session reads for it (an edit the editor has not saved
    yet); else the file on disk; None when there is no such file."""
    wanted = os.path.normpath(path)
    for uri, document in ls.documents.items():
        if path_of_uri(uri) == wanted:
            return document, True
    text = ls.session.files.edited.text(path)
    if text is None:
        text = await asyncio.to_thread(read_text, path)
    return (None if text is None else Document(uri=path.as_uri(), text=text)), False


def _command_params(model: Any, args: tuple[Any, ...], command: str) -> Any:
    try:
        return parse_params(model, plain_json(args[0]) if args else None, command)
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


async def _apply(ls: SnippetsServer, edit: types.WorkspaceEdit, label: str) -> bool:
    """``workspace/applyEdit``; whether the client applied it. A refusal, an error answer
    (Eglot answers one when the user declines) or no answer in time is told to the user
    and counts as not applied."""
    request = ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
    try:
        result = await asyncio.wait_for(asyncio.shield(request), APPLY_EDIT_TIMEOUT)
    except Exception as exc:  # the client's error answer, or a timeout
        log.warning("workspace/applyEdit failed: %r", exc)
        reason = str(exc) or "no answer"
    else:
        if result.applied:
            return True
        reason = result.failure_reason or ""
    ls.show(
        "warning",
        f"{MESSAGE_PREFIX} the editor did not apply {label}{': ' if reason else ''}{reason}",
    )
    return False


async def _save_snippet(ls: SnippetsServer, request: SaveSnippetParams) -> dict[str, Any]:
    """Add the text to the user settings file through the editor, and make it live."""
    if not request.text.strip():
        raise JsonRpcInvalidParams(f"{SAVE_COMMAND}: `text` is empty")
    await ls.session.ensure_loaded()
    path = ls.session.user_file
    document, opened = await _settings_document(ls, path)
    text = document.text if document else None
    taken = file_names(text) | {s.name for c in ls.session.configs.values() for s in c.snippets}
    if request.name is not None and (problem := name_problem(request.name, taken)):
        raise JsonRpcInvalidParams(f"{SAVE_COMMAND}: {problem}")
    name = request.name or derive_name(request.text, taken)
    try:
        insertion = snippet_insertion(text, name, request.text, str(path))
    except SaveSnippetError as exc:
        raise JsonRpcInvalidParams(f"{SAVE_COMMAND}: {exc}") from None
    features = ls.session.features
    uri = document.uri if document else path.as_uri()
    if insertion.create and not (features.document_changes and features.create_files):
        # The editor cannot create files: the server writes the new file itself.
        try:
            await asyncio.to_thread(create_file, path, insertion.text)
        except OSError as exc:  # it appeared meanwhile, or the folder is not writable
            raise JsonRpcInternalError(f"{SAVE_COMMAND}: cannot create {path}: {exc}") from None
        applied, unsaved = True, False
    else:
        target = document or Document(uri=uri, text="")
        edits = translate.text_edits(target, insertion.edits, ls.encoding)
        version = target.version if opened else None
        edit = translate.workspace_edit(uri, version, edits, features, create=insertion.create)
        applied = unsaved = await _apply(ls, edit, f"Save snippet %{name}")
        if applied:
            ls.session.files.edited.put(path, insertion.text)
    if applied:
        await ls.session.reload(pull=False)
        note = " (unsaved in the editor: save the file to keep it)" if unsaved else ""
        ls.show("info", f"{MESSAGE_PREFIX} saved %{name} in {path}{note}")
    return {"name": name, "uri": uri, "applied": applied}
