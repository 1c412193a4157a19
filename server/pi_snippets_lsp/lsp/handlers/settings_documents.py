"""Settings files open in the editor: their diagnostics, from the buffer's text (unsaved
edits included), published as they open, change and close, and when the workspace
folders change which files are settings files (docs/lsp.md, "Settings files").

Where they are computed (docs/reliability.md): one session's settings document must not
hold the daemon's other sessions, and a client that changes it without reading the
diagnostics must not grow the daemon.

- A small text (under ``ON_LOOP_CHARS``) is checked on the event loop at once: it costs
  less than the hop to a thread, and its diagnostics go out before the answer to the
  next request.
- A larger one is checked by one job per document (``_Job``) on a worker thread
  (``lsp.offload``), which also encodes the notification there: on the loop, only its
  bytes are written. It starts once the text has not changed for ``QUIET`` seconds, and a
  change while it runs does not start another: the job drops what it computed for the
  older text and checks the text as it is once changes pause again, so a storm of changes
  costs one job at a time per document, never one per change, and none while it lasts.
- The job waits for its connection's unsent answers to leave room
  (``offload.wait_for_room``) before it takes the text and before it writes, and drops a
  result that a change has made stale meanwhile: what a connection queues stays within
  ``--max-unsent`` whatever its client sends.
"""

from __future__ import annotations

import asyncio
import functools
import json
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lsprotocol import types

from pi_snippets_lsp.core.documents import Document, Encoding
from pi_snippets_lsp.lsp import offload, translate
from pi_snippets_lsp.lsp.lspjson import lsp_json
from pi_snippets_lsp.lsp.server import SnippetsServer, WorkspaceEvent
from pi_snippets_lsp.settings.diagnostics import settings_diagnostics
from pi_snippets_lsp.settings.folders import path_of_uri

#: Characters of a settings document checked on the event loop; a longer one is checked
#: on a worker thread. Small, because the cost depends on the problems as well as on the
#: size: a text that is nothing but problems costs a few milliseconds per KiB.
ON_LOOP_CHARS: Final = 1024
#: Seconds without a change before a job takes the text: while changes come faster, it
#: waits, and the text they leave is checked once.
QUIET: Final = 0.1
#: Diagnostics placed between two looks at whether the text has changed meanwhile.
_STALE_EVERY: Final = 256


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


@dataclass(eq=False)
class _Job:
    """The diagnostics job of one large settings document. ``changes`` counts the calls
    to ``publish`` for it: a result computed before the last one is stale."""

    changes: int = 0
    #: The loop's time at the last change.
    changed_at: float = 0.0

    def changed_since(self, seen: int) -> bool:
        return self.changes != seen


#: Per session: the jobs under way, by document.
_jobs: weakref.WeakKeyDictionary[SnippetsServer, dict[str, _Job]] = weakref.WeakKeyDictionary()


def publish(ls: SnippetsServer, uri: str) -> None:
    """A settings document's diagnostics as it is now (none once it is closed or no
    settings file): at once for a small text, else by its job (see the module)."""
    jobs = _jobs.setdefault(ls, {})
    job = jobs.get(uri)
    now = asyncio.get_running_loop().time()
    if job is not None:
        job.changes += 1  # what the job is computing is stale now
        job.changed_at = now
    document = ls.documents.get(uri)
    if document is None or uri not in ls.settings_documents:
        _send(ls, uri, [], document.version if document else None)
    elif len(document.text) < ON_LOOP_CHARS:
        found = [
            translate.diagnostic(document, d, ls.encoding)
            for d in settings_diagnostics(document.text)
        ]
        _send(ls, uri, found, document.version)
    elif job is None:
        job = jobs[uri] = _Job(changed_at=now)
        ls.spawn(_run(ls, uri, job))


def _wanted(ls: SnippetsServer, uri: str) -> Document | None:
    """The document, when it still needs its job (open, a settings file, large)."""
    document = ls.documents.get(uri)
    if document is None or uri not in ls.settings_documents:
        return None
    return document if len(document.text) >= ON_LOOP_CHARS else None


async def _run(ls: SnippetsServer, uri: str, job: _Job) -> None:
    """Check the document until a result is written that no change has made stale, or
    the document no longer needs the job (its last change published at once)."""
    try:
        while True:
            await _settled(ls, job)
            document = _wanted(ls, uri)
            if document is None:
                return
            seen = job.changes
            body = await offload.on_worker(
                ls,
                _encoded,
                uri,
                document.text,
                document.version,
                ls.encoding,
                functools.partial(job.changed_since, seen),
            )
            if body is None or job.changes != seen:
                continue
            await offload.wait_for_room(ls)
            if job.changes != seen:
                continue
            ls.protocol._write(body)
            return
    finally:
        job.changes += 1  # ended (the session closed, too): a worker still on it stops
        jobs = _jobs.get(ls)
        if jobs is not None and jobs.get(uri) is job:
            del jobs[uri]


async def _settled(ls: SnippetsServer, job: _Job) -> None:
    """Return once the document has not changed for ``QUIET`` seconds and the
    connection has room."""
    loop = asyncio.get_running_loop()
    while True:
        await offload.wait_for_room(ls)
        wait = job.changed_at + QUIET - loop.time()
        if wait <= 0:
            return
        await asyncio.sleep(wait)


def _encoded(
    uri: str, text: str, version: int, encoding: Encoding, stale: Callable[[], bool]
) -> bytes | None:
    """On a worker: the ``publishDiagnostics`` notification of ``text``, encoded; None
    once ``stale()`` (a change came meanwhile: nothing more is computed for this text)."""
    if stale():  # changed while the job waited for a worker
        return None
    document = Document(uri=uri, text=text)
    found = settings_diagnostics(text)
    # Each diagnostic encoded on its own: one call of the JSON encoder over them all
    # would hold the GIL, and so the event loop, for as long as it runs.
    encoded: list[str] = []
    for i, problem in enumerate(found):
        if i % _STALE_EVERY == 0 and stale():
            return None
        diagnostic = lsp_json(translate.diagnostic(document, problem, encoding))
        encoded.append(json.dumps(diagnostic, separators=(",", ":")))
    params = json.dumps({"uri": uri, "version": version}, separators=(",", ":"))
    body = (
        f'{{"jsonrpc":"2.0","method":"{types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}",'
        f'"params":{params[:-1]},"diagnostics":[{",".join(encoded)}]}}}}'
    )
    return body.encode("ascii")


def _send(
    ls: SnippetsServer, uri: str, diagnostics: list[types.Diagnostic], version: int | None
) -> None:
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
    )
