"""The ``pi-snippets.saveSnippet`` command: add a text to the user settings file under a
valid, unused name, through the editor when it can edit (or create) the file, else by the
server itself; then make it live (docs/lsp.md, "Save selection as snippet").
"""

from __future__ import annotations

import asyncio
from typing import Any

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from pi_snippets_lsp.core.code_actions import SAVE_COMMAND
from pi_snippets_lsp.core.config import MESSAGE_PREFIX
from pi_snippets_lsp.core.documents import Document
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.handlers.common import apply_edit, params_of, settings_document
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.settings.files import SettingsFileError
from pi_snippets_lsp.settings.overlay import create_file
from pi_snippets_lsp.settings.safe_write import SettingsWriteError
from pi_snippets_lsp.settings.save_snippet import (
    SaveSnippetError,
    derive_name,
    file_names,
    name_problem,
    snippet_insertion,
)
from pi_snippets_lsp.wire.messages import SaveSnippetParams


def register(server: SnippetsServer) -> None:
    @server.command(SAVE_COMMAND)
    async def save_snippet(ls: SnippetsServer, *args: Any) -> dict[str, Any]:
        request = params_of(SaveSnippetParams, args[0] if args else None, SAVE_COMMAND)
        return await _save_snippet(ls, request)


async def _save_snippet(ls: SnippetsServer, request: SaveSnippetParams) -> dict[str, Any]:
    if not request.text.strip():
        raise JsonRpcInvalidParams(f"{SAVE_COMMAND}: `text` is empty")
    await ls.session.ensure_loaded()
    path = ls.session.user_file
    try:
        document, opened = await settings_document(ls, path)
    except SettingsFileError as exc:  # there is a file, but not one to edit: never create
        raise JsonRpcInvalidParams(f"{SAVE_COMMAND}: {exc}; not saved") from None
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
        except SettingsWriteError as exc:  # caught by snippet_insertion already
            raise JsonRpcInvalidParams(f"{SAVE_COMMAND}: {exc}") from None
        except OSError as exc:  # it appeared meanwhile, the disk is full, no permission
            raise JsonRpcInternalError(f"{SAVE_COMMAND}: cannot create {path}: {exc}") from None
        applied, unsaved = True, False
    else:
        target = document or Document(uri=uri, text="")
        edits = translate.text_edits(target, insertion.edits, ls.encoding)
        version = target.version if opened else None
        edit = translate.workspace_edit(uri, version, edits, features, create=insertion.create)
        applied = unsaved = await apply_edit(ls, edit, f"Save snippet %{name}")
        if applied:
            ls.session.files.edited.put(path, insertion.text)
    if applied:
        await ls.session.reload(pull=False)
        note = " (unsaved in the editor: save the file to keep it)" if unsaved else ""
        ls.show("info", f"{MESSAGE_PREFIX} saved %{name} in {path}{note}")
    return {"name": name, "uri": uri, "applied": applied}
