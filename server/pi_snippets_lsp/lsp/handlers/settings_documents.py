"""Settings files open in the editor: their diagnostics, from the buffer's text (unsaved
edits included), published as they open, change and close, and when the workspace
folders change which files are settings files (docs/lsp.md, "Settings files").
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from pi_snippets_lsp.core.documents import Document, Encoding
from pi_snippets_lsp.core.serving import OFF_LOOP_CHARS
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.offload import Pending, off_loop
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


#: The settings documents whose diagnostics are scheduled but have not read the text yet.
_pending = Pending()


def publish(ls: SnippetsServer, uri: str) -> None:
    """A settings document's diagnostics (none once it is closed or no settings file).

    A small document is checked on the loop at once; a large one on a worker thread
    (``offload``), one job per document however many changes come meanwhile, and its
    diagnostics are published only if the document is still at the version checked:
    one session's large settings file holds no other session's answers."""
    document = ls.documents.get(uri)
    if document is None or uri not in ls.settings_documents:
        _send(ls, uri, [], document.version if document else None)
    elif len(document.text) < OFF_LOOP_CHARS:
        _send(ls, uri, _diagnostics(document, ls.encoding), document.version)
    else:
        _pending.schedule(ls, uri, lambda: ls.spawn(_publish_large(ls, uri)))


async def _publish_large(ls: SnippetsServer, uri: str) -> None:
    _pending.started(ls, uri)
    document = ls.documents.get(uri)
    if document is None or uri not in ls.settings_documents:
        return  # closed or no settings file meanwhile: that change published
    # The worker reads the text as it is now (a string cannot change; the open document
    # does, on the loop) and places the diagnostics in a document of its own.
    version, text = document.version, document.text
    diagnostics = await off_loop(ls, len(text), _snapshot_diagnostics, uri, text, ls.encoding)
    if ls.documents.get(uri) is document and document.version == version:
        _send(ls, uri, diagnostics, version)


def _snapshot_diagnostics(uri: str, text: str, encoding: Encoding) -> list[types.Diagnostic]:
    return _diagnostics(Document(uri=uri, text=text), encoding)


def _diagnostics(document: Document, encoding: Encoding) -> list[types.Diagnostic]:
    return [
        translate.diagnostic(document, found, encoding)
        for found in settings_diagnostics(document.text)
    ]


def _send(
    ls: SnippetsServer, uri: str, diagnostics: list[types.Diagnostic], version: int | None
) -> None:
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
    )
