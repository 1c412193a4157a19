"""Managing snippets where they are used: rename, references, workspace and document
symbols (docs/lsp.md, "Rename", "References", "Symbols").

A snippet is named at a cursor either by a marker in a prompt (``%review``, never an
escape) or by its key in a settings file the session reads. Either way it is the snippet
Pi takes: the name and the settings file that defines it in the merge (``Snippet.source``).
A key of a file Pi does not take the snippet from (a lower layer that another overrides,
an entry Pi skips) names nothing to rename: the error says which file does.

Its *uses* are the markers Pi would expand to it in the open prompt documents: markers
of that name (``core.markers``, so never ``%%name`` and never ``x%name``) in the
documents whose own generation takes the snippet from the same file.

Rename answers with one ``WorkspaceEdit``, which the client applies (and can undo as one
step, or show in a preview first): the key in the defining file (every occurrence, see
``settings.snippet_keys``) and every use. The server edits nothing itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_snippets_lsp.core.catalog import snippet_named
from pi_snippets_lsp.core.documents import Document, Position
from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.core.grammar import TRIGGER, is_valid_name
from pi_snippets_lsp.core.hover import layer_of
from pi_snippets_lsp.core.markers import iter_markers
from pi_snippets_lsp.core.snippet import Snippet, preview
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.handlers.common import prompt_marker, settings_document
from pi_snippets_lsp.lsp.offload import off_loop
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.settings.files import SettingsFileError
from pi_snippets_lsp.settings.folders import path_of_uri
from pi_snippets_lsp.settings.snippet_keys import SnippetKey, key_at, rename_edits, snippet_keys
from pi_snippets_lsp.wire.errors import REQUEST_FAILED

#: Workspace symbols answered at most (a picker filters further as the user types).
WORKSPACE_SYMBOL_LIMIT: Final = 200
#: The kind of a snippet's symbol: the key of a settings file.
SNIPPET_KIND: Final = types.SymbolKind.Key


def failed(message: str) -> JsonRpcException:
    return JsonRpcException(message, code=REQUEST_FAILED)


@dataclass(frozen=True, slots=True)
class Target:
    """The snippet a cursor names, and the range of its name there (no ``%``, no quotes)."""

    name: str
    #: The snippet Pi takes for that name in the cursor's document, or None.
    snippet: Snippet | None
    range: types.Range
    #: The cursor is on a key of a settings file: its path.
    key_file: str | None = None


def register(server: SnippetsServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(
        ls: SnippetsServer, params: types.PrepareRenameParams
    ) -> types.PrepareRenamePlaceholder | None:
        target = await target_at(ls, params.text_document.uri, params.position)
        if target is None:
            return None
        definer(ls, target)  # refused here already, with the reason
        return types.PrepareRenamePlaceholder(range=target.range, placeholder=target.name)

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    async def rename(ls: SnippetsServer, params: types.RenameParams) -> types.WorkspaceEdit:
        target = await target_at(ls, params.text_document.uri, params.position)
        if target is None:
            raise failed("rename: no snippet marker or snippet key here")
        return await rename_edit(ls, target, params.new_name)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(
        ls: SnippetsServer, params: types.ReferenceParams
    ) -> list[types.Location] | None:
        target = await target_at(ls, params.text_document.uri, params.position)
        if target is None or target.snippet is None:
            return None
        snippet = target.snippet
        if target.key_file is not None and not same_file(snippet.source, target.key_file):
            return None
        found: list[types.Location] = []
        if params.context.include_declaration:
            found.extend(await definitions(ls, snippet))
        for uri, document, spans in await uses(ls, snippet):
            found.extend(
                types.Location(uri=uri, range=translate.lsp_range(document, a, b, ls.encoding))
                for a, b in spans
            )
        return found

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: SnippetsServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        config = await ls.session.loaded_config_for(None)
        query = params.query.strip().removeprefix(TRIGGER)
        ranked = config.name_index.rank(query, WORKSPACE_SYMBOL_LIMIT).indices
        return await symbols_of(ls, [config.snippets[i] for i in ranked])

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(
        ls: SnippetsServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation] | None:
        uri = params.text_document.uri
        await ls.session.ensure_loaded()
        document = ls.documents.get(uri)
        if document is None or uri not in ls.settings_documents:
            return None
        keys = await off_loop(ls, len(document.text), snippet_keys, document.text)
        return outline(ls, document, keys)


# --------------------------------------------------------------------------- the target


async def target_at(ls: SnippetsServer, uri: str, position: types.Position) -> Target | None:
    """The snippet named at the cursor: a marker in a prompt, a key in a settings file."""
    if uri in ls.settings_documents:
        config = await ls.session.loaded_config_for(uri)
        document = ls.documents.get(uri)
        path = path_of_uri(uri)
        if document is None or path is None:
            return None
        offset = document.offset_at(Position(position.line, position.character), ls.encoding)
        key = await off_loop(ls, len(document.text), key_at, document.text, offset)
        if key is None:
            return None
        inside = translate.lsp_range(document, key.key_start + 1, key.key_end - 1, ls.encoding)
        return Target(key.name, snippet_named(config, key.name), inside, key_file=path)
    found = await prompt_marker(ls, uri, position)
    if found is None or found[2].marker.escape:
        return None
    _, config, spot = found
    line = position.line
    name_range = types.Range(
        types.Position(line, spot.start + len(TRIGGER)), types.Position(line, spot.end)
    )
    return Target(spot.marker.name, snippet_named(config, spot.marker.name), name_range)


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (a symlink to a settings file counts as it)."""
    if os.path.normpath(a) == os.path.normpath(b):
        return True
    return os.path.realpath(a) == os.path.realpath(b)


def definer(ls: SnippetsServer, target: Target) -> Snippet:
    """The snippet to rename, or the reason it cannot be (``RequestFailed``)."""
    snippet = target.snippet
    label = f"%{target.name}"
    if snippet is None:
        raise failed(f"rename: Pi has no snippet {label} here (an entry it skips?)")
    if layer_of(snippet.source, ls.session.user_file) == "client":
        raise failed(
            f"rename: {label} is defined in the editor's settings ({snippet.source}); "
            "rename it there"
        )
    if target.key_file is not None and not same_file(snippet.source, target.key_file):
        raise failed(f"rename: Pi takes {label} from {snippet.source}; rename it there")
    return snippet


# --------------------------------------------------------------------------- rename


async def rename_edit(ls: SnippetsServer, target: Target, new_name: str) -> types.WorkspaceEdit:
    snippet = definer(ls, target)
    name = snippet.name
    if not is_valid_name(new_name):
        raise failed(
            f'rename: "{new_name}" is not a valid snippet name: use lowercase letters, '
            'digits, ".", "_" and "-", starting and ending with a letter or digit'
        )
    if new_name == name:
        raise failed(f"rename: the snippet is named {name} already")
    try:
        defining, opened = await settings_document(ls, Path(snippet.source))
    except SettingsFileError as exc:
        raise failed(f"rename: {exc}") from None
    if defining is None:
        raise failed(f"rename: {snippet.source} is gone; reload the snippets")
    keys = await off_loop(ls, len(defining.text), snippet_keys, defining.text)
    taken = {k.name for k in keys}
    for config in ls.session.configs.values():
        taken.update(s.name for s in config.snippets)
    if new_name in taken:
        raise failed(f'rename: a snippet named "{new_name}" already exists')
    key_edits = rename_edits(defining.text, name, new_name)
    if not key_edits:
        raise failed(f"rename: {snippet.source} does not define {name} any more; save it first")
    changes: list[tuple[str, int | None, list[types.TextEdit]]] = [
        (
            defining.uri,
            defining.version if opened else None,
            translate.text_edits(defining, key_edits, ls.encoding),
        )
    ]
    for uri, document, spans in await uses(ls, snippet):
        edits = [TextEdit(a + len(TRIGGER), b, new_name) for a, b in spans]
        changes.append((uri, document.version, translate.text_edits(document, edits, ls.encoding)))
    return workspace_edit(ls, changes)


def workspace_edit(
    ls: SnippetsServer, changes: list[tuple[str, int | None, list[types.TextEdit]]]
) -> types.WorkspaceEdit:
    """Edits of several documents: versioned ``documentChanges`` when the client takes
    them (the version None for a file the editor does not have open), else ``changes``."""
    if not ls.session.features.document_changes:
        return types.WorkspaceEdit(changes={uri: edits for uri, _, edits in changes})
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version
                ),
                edits=list(edits),
            )
            for uri, version, edits in changes
        ]
    )


# --------------------------------------------------------------------------- uses


def marker_spans(text: str, snippets: Mapping[str, str], name: str) -> list[tuple[int, int]]:
    """Where Pi would expand ``%name`` in ``text`` (escapes are not uses)."""
    return [
        (m.start, m.end) for m in iter_markers(text, snippets) if m.name == name and not m.escape
    ]


async def uses(
    ls: SnippetsServer, snippet: Snippet
) -> list[tuple[str, Document, list[tuple[int, int]]]]:
    """The open prompts' markers Pi would expand to ``snippet`` (the same name, taken
    from the same file), per document, in the documents' order."""
    found: list[tuple[str, Document, list[tuple[int, int]]]] = []
    for uri, document in list(ls.documents.items()):
        if uri in ls.settings_documents:
            continue
        config = ls.session.config_for(uri)
        mine = snippet_named(config, snippet.name)
        if mine is None or mine.source != snippet.source:
            continue
        text = document.text
        spans = await off_loop(ls, len(text), marker_spans, text, config.values, snippet.name)
        if spans:
            found.append((uri, document, spans))
    return found


async def definitions(ls: SnippetsServer, snippet: Snippet) -> list[types.Location]:
    """The key that defines ``snippet`` (the one ``JSON.parse`` keeps); none for a
    client layer or a file that no longer defines it."""
    if layer_of(snippet.source, ls.session.user_file) == "client":
        return []
    try:
        document, _ = await settings_document(ls, Path(snippet.source))
    except SettingsFileError:
        return []
    if document is None:
        return []
    keys = await off_loop(ls, len(document.text), snippet_keys, document.text)
    last = [k for k in keys if k.name == snippet.name][-1:]
    return [
        types.Location(
            uri=document.uri,
            range=translate.lsp_range(document, k.key_start, k.key_end, ls.encoding),
        )
        for k in last
    ]


# --------------------------------------------------------------------------- symbols


async def symbols_of(ls: SnippetsServer, snippets: list[Snippet]) -> list[types.SymbolInformation]:
    """Each snippet as a symbol at its key, its preview as the container name (a
    workspace symbol has no detail; pickers show the container name beside the name).
    Client-layer snippets have no key to point at and are left out."""
    files: dict[str, tuple[Document, dict[str, SnippetKey]] | None] = {}
    found: list[types.SymbolInformation] = []
    for snippet in snippets:
        source = snippet.source
        if layer_of(source, ls.session.user_file) == "client":
            continue
        if source not in files:
            files[source] = await _keys_of(ls, source)
        entry = files[source]
        key = entry[1].get(snippet.name) if entry else None
        if entry is None or key is None:
            continue
        document = entry[0]
        found.append(
            types.SymbolInformation(
                name=TRIGGER + snippet.name,
                kind=SNIPPET_KIND,
                location=types.Location(
                    uri=document.uri,
                    range=translate.lsp_range(document, key.key_start, key.key_end, ls.encoding),
                ),
                container_name=snippet.preview,
            )
        )
    return found


async def _keys_of(
    ls: SnippetsServer, source: str
) -> tuple[Document, dict[str, SnippetKey]] | None:
    try:
        document, _ = await settings_document(ls, Path(source))
    except SettingsFileError:
        return None
    if document is None:
        return None
    keys = await off_loop(ls, len(document.text), snippet_keys, document.text)
    return document, {k.name: k for k in keys}  # the last of a duplicated key wins


def outline(
    ls: SnippetsServer, document: Document, keys: list[SnippetKey]
) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
    """A settings file's snippets, in text order: hierarchical symbols (the preview as
    detail) for a client that takes them, else flat ones at each key."""
    encoding = ls.encoding
    if ls.session.features.hierarchical_symbols:
        return [
            types.DocumentSymbol(
                name=k.name,
                detail=preview(k.value) if k.value is not None else None,
                kind=SNIPPET_KIND,
                range=translate.lsp_range(document, k.start, k.end, encoding),
                selection_range=translate.lsp_range(document, k.key_start, k.key_end, encoding),
            )
            for k in keys
        ]
    return [
        types.SymbolInformation(
            name=k.name,
            kind=SNIPPET_KIND,
            location=types.Location(
                uri=document.uri,
                range=translate.lsp_range(document, k.key_start, k.key_end, encoding),
            ),
            container_name=preview(k.value) if k.value is not None else None,
        )
        for k in keys
    ]
