"""What several handlers share: the prompt document of a request and its generation,
the marker under the cursor, a settings file as the editor has it, and asking the
client to apply an edit.

A settings file open in the editor is not a prompt: it gets its diagnostics and their
quick fixes, and none of the marker features (a ``%name`` inside a snippet's text is not
a marker of anything the user is about to send). docs/lsp.md, "Settings files".
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any, Final

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from pi_snippets_lsp.core.config import MESSAGE_PREFIX, Config, plain_json
from pi_snippets_lsp.core.documents import Document, Position
from pi_snippets_lsp.core.hover import LineMarker, marker_on_line
from pi_snippets_lsp.lsp.offload import off_loop
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.settings.folders import path_of_uri
from pi_snippets_lsp.settings.overlay import read_text
from pi_snippets_lsp.wire.messages import InvalidParams, parse_params

log = logging.getLogger(__name__)

#: Seconds the client may take to apply an edit (it may ask the user first).
APPLY_EDIT_TIMEOUT: Final = 60.0


def params_of(model: Any, params: object, method: str) -> Any:
    """A custom request's (or command's) params, checked by its ``wire.messages`` model;
    anything that does not fit is -32602 with the model's message."""
    try:
        return parse_params(model, plain_json(params), method)
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


async def prompt(ls: SnippetsServer, uri: str) -> tuple[Document, Config] | None:
    """An open prompt document (not a settings file) and its generation."""
    config = await ls.session.loaded_config_for(uri)
    document = ls.documents.get(uri)
    if document is None or uri in ls.settings_documents:
        return None
    return document, config


async def prompt_marker(
    ls: SnippetsServer, uri: str, position: types.Position
) -> tuple[Document, Config, LineMarker] | None:
    """The marker under the cursor in an open prompt, with its document and generation,
    found in its line alone (off the loop when the line is long: see
    ``core.hover.marker_on_line``)."""
    found = await prompt(ls, uri)
    if found is None:
        return None
    document, config = found
    line = document.line(position.line)
    spot = await off_loop(
        ls, len(line), marker_on_line, line, position.character, ls.encoding, config.values
    )
    return None if spot is None else (document, config, spot)


def offsets(ls: SnippetsServer, document: Document, span: Any) -> tuple[int, int]:
    """An LSP range (or its params model) as code-point offsets, in order."""
    start = document.offset_at(Position(span.start.line, span.start.character), ls.encoding)
    end = document.offset_at(Position(span.end.line, span.end.character), ls.encoding)
    return min(start, end), max(start, end)


async def settings_document(ls: SnippetsServer, path: Path) -> tuple[Document | None, bool]:
    """A settings file as the editor has it, and whether the editor has it open: the open
    buffer; else the text the session reads for it (an edit the editor has not saved
    yet); else the file on disk; None when there is no such file. A file that is there
    but cannot be read (not a regular file, too large, not UTF-8) is a
    ``SettingsFileError``."""
    wanted = os.path.normpath(path)
    for uri, document in ls.documents.items():
        if path_of_uri(uri) == wanted:
            return document, True
    text = ls.session.files.edited.text(path)
    if text is None:
        text = await asyncio.to_thread(read_text, path)
    return (None if text is None else Document(uri=path.as_uri(), text=text)), False


async def apply_edit(ls: SnippetsServer, edit: types.WorkspaceEdit, label: str) -> bool:
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
