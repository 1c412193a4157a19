"""Settings files open in the editor: their diagnostics, from the buffer's text (unsaved
edits included), published as they open, change and close, and when the workspace
folders change which files are settings files (docs/lsp.md, "Settings files").
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.server import SnippetsServer, WorkspaceEvent
from pi_snippets_lsp.settings.diagnostics import settings_diagnostics
from pi_snippets_lsp.settings.folders import path_of_uri


def register(server: SnippetsServer) -> None:
    server.workspace_listeners.append(workspace_changed)


def workspace_changed(ls: SnippetsServer, uri: str | None, event: WorkspaceEvent) -> None:
    if event == "folders":
        folders_changed(ls)
    elif uri is not None and event == "closed":
        document_closed(ls, uri)
    elif uri is not None:
        document_changed(ls, uri, opened=event == "opened")


def document_changed(ls: SnippetsServer, uri: str, opened: bool) -> None:
    """``didOpen``/``didChange``: a settings file's diagnostics, from the buffer's text."""
    if opened and ls.session.is_settings_file(uri):
        ls.settings_documents.add(uri)
    if uri in ls.settings_documents:
        publish(ls, uri)


def document_closed(ls: SnippetsServer, uri: str) -> None:
    """``didClose``: clear its diagnostics; an edited settings file is read from disk
    again (closing it saved the edit, which the stamp shows, or discarded it)."""
    if uri in ls.settings_documents:
        ls.settings_documents.discard(uri)
        publish(ls, uri)
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
            publish(ls, uri)


def publish(ls: SnippetsServer, uri: str) -> None:
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
