"""Editing a snippet's value as plain text: the commands ``pi-snippets.editSnippet`` and
``pi-snippets.setSnippetValue`` (docs/lsp.md, "Edit snippet").

``editSnippet {name} | {uri, position}`` names the snippet (by name, or by the marker or
settings key at the cursor) and answers what an editor needs to open its value in a
buffer of its own: ``{name, value, uri, range, source, layer}``, the value unescaped as
``JSON.parse`` reads it from the file Pi takes the snippet from (as the editor has that
file: an unsaved buffer included), ``uri`` and ``range`` its value token there. Nothing
at the cursor: ``null``, so a client can offer a picker instead.

``setSnippetValue {name, value, previous}`` writes the buffer back: one edit of that
value token (``settings.snippet_edits``), applied by the editor through
``workspace/applyEdit`` as save-as-snippet's edit of an existing file is, so it can be
undone; then the file reads as edited until saved, and the snippets reload. ``previous``
is the value the buffer was opened with: a file that holds another one now was changed
meanwhile, and the write is refused, losing neither change.

A snippet of the editor's own settings (a client layer) has no file to write, and a file
this user cannot write is refused when the snippet is opened, before anything is typed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from pi_snippets_lsp.core.catalog import snippet_named
from pi_snippets_lsp.core.documents import Document
from pi_snippets_lsp.core.hover import layer_of
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.core.surrogates import first_lone_surrogate
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.handlers.common import apply_edit, params_of, settings_document
from pi_snippets_lsp.lsp.handlers.manage import same_file, target_at
from pi_snippets_lsp.lsp.offload import off_loop
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.settings.files import SettingsFileError
from pi_snippets_lsp.settings.snippet_edits import (
    SnippetEditError,
    set_value_edit,
    snippet_value,
    write_problem,
)
from pi_snippets_lsp.wire.errors import REQUEST_FAILED
from pi_snippets_lsp.wire.messages import EditSnippetParams, SetSnippetValueParams

EDIT_COMMAND: Final = "pi-snippets.editSnippet"
SET_VALUE_COMMAND: Final = "pi-snippets.setSnippetValue"


def failed(command: str, message: str) -> JsonRpcException:
    return JsonRpcException(f"{command}: {message}", code=REQUEST_FAILED)


def register(server: SnippetsServer) -> None:
    @server.command(EDIT_COMMAND)
    async def edit_snippet(ls: SnippetsServer, *args: Any) -> dict[str, Any] | None:
        request = params_of(EditSnippetParams, args[0] if args else None, EDIT_COMMAND)
        return await _edit(ls, request)

    @server.command(SET_VALUE_COMMAND)
    async def set_snippet_value(ls: SnippetsServer, *args: Any) -> dict[str, Any]:
        request = params_of(SetSnippetValueParams, args[0] if args else None, SET_VALUE_COMMAND)
        return await _set_value(ls, request)


async def _edit(ls: SnippetsServer, request: EditSnippetParams) -> dict[str, Any] | None:
    command = EDIT_COMMAND
    if request.name is not None:
        name = request.name
        snippet = snippet_named(await ls.session.loaded_config_for(request.uri), name)
    elif request.uri is not None and request.position is not None:
        at = types.Position(request.position.line, request.position.character)
        target = await target_at(ls, request.uri, at)
        if target is None:
            return None
        name, snippet = target.name, target.snippet
        key_file = target.key_file
        if snippet is not None and key_file is not None and not same_file(snippet.source, key_file):
            raise failed(command, f"Pi takes %{name} from {snippet.source}; edit it there")
    else:
        raise JsonRpcInvalidParams(f"{command}: give `name`, or `uri` and `position`")
    path = _defining_file(ls, command, name, snippet)
    document, _ = await _settings_text(ls, command, path)
    found = await off_loop(ls, len(document.text), snippet_value, document.text, name)
    if found is None:
        raise failed(command, f"{path} does not define %{name} any more; reload the snippets")
    return {
        "name": name,
        "value": found.value,
        "uri": document.uri,
        "range": translate.lsp_range(document, found.start, found.end, ls.encoding),
        "source": str(path),
        "layer": layer_of(str(path), ls.session.user_file),
    }


async def _set_value(ls: SnippetsServer, request: SetSnippetValueParams) -> dict[str, Any]:
    command, name = SET_VALUE_COMMAND, request.name
    if (surrogate := first_lone_surrogate(request.value)) is not None:
        raise JsonRpcInvalidParams(
            f"{command}: the text is not valid Unicode (a lone surrogate "
            f"U+{ord(surrogate.group()):04X} at character {surrogate.start()}); not saved"
        )
    snippet = snippet_named(await ls.session.loaded_config_for(request.uri), name)
    path = _defining_file(ls, command, name, snippet)
    document, opened = await _settings_text(ls, command, path)
    text = document.text
    try:
        change = await off_loop(
            ls,
            len(text),
            set_value_edit,
            *(text, name, request.value, str(path)),
            expected=request.previous,
        )
    except SnippetEditError as exc:
        raise failed(command, str(exc)) from None
    if not change.changed:
        return {"name": name, "uri": document.uri, "applied": True, "changed": False}
    edits = translate.text_edits(document, change.edits, ls.encoding)
    version = document.version if opened else None
    edit = translate.workspace_edit(document.uri, version, edits, ls.session.features)
    applied = await apply_edit(ls, edit, f"Edit snippet %{name}")
    if applied:
        ls.session.files.edited.put(path, change.text)
        await ls.session.reload(pull=False)
    return {"name": name, "uri": document.uri, "applied": applied, "changed": applied}


def _defining_file(ls: SnippetsServer, command: str, name: str, snippet: Snippet | None) -> Path:
    """The settings file Pi takes ``snippet`` from; a client layer has none."""
    if snippet is None:
        raise failed(command, f"Pi has no snippet %{name} here (renamed or removed?)")
    if layer_of(snippet.source, ls.session.user_file) == "client":
        raise failed(
            command,
            f"%{name} is defined in the editor's settings ({snippet.source}); edit it there",
        )
    return Path(snippet.source)


async def _settings_text(ls: SnippetsServer, command: str, path: Path) -> tuple[Document, bool]:
    """The defining file as the editor has it, if it is there and this user may write it."""
    try:
        document, opened = await settings_document(ls, path)
    except SettingsFileError as exc:
        raise failed(command, f"{exc}; not saved") from None
    if document is None:
        raise failed(command, f"{path} is gone; reload the snippets")
    if (problem := write_problem(path)) is not None:
        raise failed(command, problem)
    return document, opened
