"""Unknown markers that are typos of a snippet's name: one Hint each, with a quick fix
(docs/lsp.md, "Unknown markers: did you mean").

``%reveiw`` is sent to the model as typed; a Hint says so and names ``%review``. The
rule is ``core.closest``'s (one or two edits, a transposition counting one), and only
markers Pi would expand had the name been right get one: never an escape, ``x%name``,
``100%`` or ``--format=%h``. Hints are pushed (``textDocument/publishDiagnostics``) for
open prompt documents as they open and change, again after each reload (the names
changed) and when the workspace folders change; a document's hints are cleared when it
closes. Only to a client that declares ``publishDiagnostics``, and not when the
initialization option ``unknownMarkerHints`` is false. A large document is scanned off
the event loop (``lsp.offload``); an answer computed for a version the document has
left is not sent (the newer version's is).

What one document may cost is bounded like every push: a document gets its first
``MAX_TYPO_HINTS`` hints (past that many, more hints tell the person nothing new, and
each is kept and sent whole), and a refresh takes the text only once the connection
has room for more (``offload.wait_for_room``): changes that come meanwhile are one scan
of the text as it is then, so a client that never reads costs ``--max-unsent``, not a
publish per change.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from itertools import islice
from typing import Final

from lsprotocol import types

from pi_snippets_lsp.core.closest import TypoIndex, UnknownMarker, unknown_markers
from pi_snippets_lsp.core.code_actions import QUICKFIX_KIND, Action, kind_wanted
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.documents import Document, Position
from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.core.grammar import TRIGGER
from pi_snippets_lsp.lsp import offload, translate
from pi_snippets_lsp.lsp.offload import off_loop
from pi_snippets_lsp.lsp.server import SnippetsServer, WorkspaceEvent
from pi_snippets_lsp.settings.diagnostics import SOURCE

#: The ``code`` of the hint: what its quick fix recognizes.
HINT_CODE: Final = "unknown-snippet"
#: The most hints one document gets (its first typos).
MAX_TYPO_HINTS: Final = 1000

#: Per session: the open documents whose last published hints were not none.
_shown: weakref.WeakKeyDictionary[SnippetsServer, set[str]] = weakref.WeakKeyDictionary()
#: Per session: the documents whose refresh is scheduled but has not read the text yet
#: (a burst of changes is then one scan, of the text as it is when the scan starts).
_pending: weakref.WeakKeyDictionary[SnippetsServer, set[str]] = weakref.WeakKeyDictionary()
#: The typo index of the latest generations (by identity; a generation is immutable).
_indexes: dict[int, tuple[weakref.ref[Config], TypoIndex]] = {}
_INDEXES_KEPT: Final = 8


def register(server: SnippetsServer) -> None:
    server.workspace_listeners.append(workspace_changed)
    server.link.reload_listeners.append(lambda: refresh_all(server))


def enabled(ls: SnippetsServer) -> bool:
    return ls.session.options.unknown_marker_hints and ls.session.features.publish_diagnostics


def workspace_changed(ls: SnippetsServer, uri: str | None, event: WorkspaceEvent) -> None:
    if event == "folders":
        refresh_all(ls)
    elif uri is not None and event == "closed":
        shown = _shown.get(ls)
        if shown is not None and uri in shown:
            shown.discard(uri)
            _publish(ls, uri, [], None)
    elif uri is not None and enabled(ls):
        schedule(ls, uri)


def refresh_all(ls: SnippetsServer) -> None:
    """Every open prompt again (a new generation, or new folders)."""
    if enabled(ls):
        for uri in list(ls.documents):
            schedule(ls, uri)


def schedule(ls: SnippetsServer, uri: str) -> None:
    """A refresh of ``uri``, unless one is scheduled that has not read the text yet."""
    pending = _pending.setdefault(ls, set())
    if uri not in pending:
        pending.add(uri)
        ls.spawn(refresh(ls, uri))


def typo_index(config: Config) -> TypoIndex:
    """The generation's names, indexed once for as long as the generation is recent."""
    entry = _indexes.get(id(config))
    if entry is not None and entry[0]() is config:
        return entry[1]
    index = TypoIndex(s.name for s in config.snippets)
    if len(_indexes) >= _INDEXES_KEPT:
        del _indexes[next(iter(_indexes))]
    _indexes[id(config)] = (weakref.ref(config), index)
    return index


def _scan(text: str, config: Config, index: TypoIndex) -> list[UnknownMarker]:
    return list(islice(unknown_markers(text, config.values, index), MAX_TYPO_HINTS))


async def refresh(ls: SnippetsServer, uri: str) -> None:
    """Publish the hints of the prompt ``uri`` as it is now (nothing when there were
    none and are none)."""
    try:
        config = await ls.session.loaded_config_for(uri)
        await offload.wait_for_room(ls)
    finally:
        _pending.setdefault(ls, set()).discard(uri)
    document = ls.documents.get(uri)
    shown = _shown.setdefault(ls, set())
    if document is None or uri in ls.settings_documents:
        shown.discard(uri)  # a settings file's diagnostics are the settings module's
        return
    version, text = document.version, document.text
    found = await off_loop(ls, len(text), _scan, text, config, typo_index(config))
    if ls.documents.get(uri) is not document or document.version != version:
        return  # changed meanwhile: the newer version's refresh publishes
    if not found and uri not in shown:
        return
    if found:
        shown.add(uri)
    else:
        shown.discard(uri)
    diagnostics = [hint(document, u, ls) for u in found]
    _publish(ls, uri, diagnostics, version)


def hint(document: Document, found: UnknownMarker, ls: SnippetsServer) -> types.Diagnostic:
    return types.Diagnostic(
        range=translate.lsp_range(document, found.start, found.end, ls.encoding),
        severity=types.DiagnosticSeverity.Hint,
        code=HINT_CODE,
        source=SOURCE,
        message=f"unknown snippet {TRIGGER}{found.name}; did you mean {TRIGGER}{found.suggestion}?",
        data={"name": found.suggestion},
    )


def _publish(
    ls: SnippetsServer, uri: str, diagnostics: list[types.Diagnostic], version: int | None
) -> None:
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
    )


async def quick_fixes(
    ls: SnippetsServer,
    document: Document,
    config: Config,
    diagnostics: Sequence[types.Diagnostic],
    only: Sequence[str] | None,
) -> list[types.CodeAction | types.Command]:
    """ "Change to %review" for each of the request's diagnostics that is one of our
    hints, recomputed on its line as the text is now (a stale one gets no fix)."""
    if not kind_wanted(QUICKFIX_KIND, only):
        return []
    fixes: list[types.CodeAction | types.Command] = []
    index: TypoIndex | None = None
    for diagnostic in diagnostics:
        if diagnostic.code != HINT_CODE or diagnostic.source != SOURCE:
            continue
        line = diagnostic.range.start.line
        if not 0 <= line < document.line_count:
            continue
        index = index or typo_index(config)
        text = document.line(line)
        line_start = document.offset_at(Position(line, 0), ls.encoding)
        start = (
            document.offset_at(Position(line, diagnostic.range.start.character), ls.encoding)
            - line_start
        )
        on_line = await off_loop(ls, len(text), _scan, text, config, index)
        for found in on_line:
            if found.start != start:
                continue
            edit = TextEdit(
                line_start + found.start + len(TRIGGER), line_start + found.end, found.suggestion
            )
            title = f"Change to {TRIGGER}{found.suggestion}"
            action = Action(title, QUICKFIX_KIND, (edit,))
            fix = translate.code_action(action, document, ls.session.features, [diagnostic])
            if fix is not None:
                fixes.append(fix)
    return fixes
