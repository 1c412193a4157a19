"""Plain results of the core as LSP shapes: lsprotocol values, and the completion list as
JSON text.

docs/lsp.md. The core modules answer in plain data and code-point offsets; this module
turns them into LSP shapes with positions in the negotiated encoding, so the handlers
(``lsp.handlers``) stay a few lines each.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from itertools import repeat
from typing import Final

from lsprotocol import types

from pi_snippets_lsp.core.code_actions import EXPAND_COMMAND, EXPAND_KIND, Action
from pi_snippets_lsp.core.completion import Popup, sort_text, suggestion
from pi_snippets_lsp.core.documents import Document, Encoding, units_length
from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.core.hover import fence
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.lsp.options import ClientFeatures
from pi_snippets_lsp.settings.diagnostics import SettingsDiagnostic

TRIGGER_CHARACTERS: Final = ["%"]
#: The completion list default the server can send, when the client takes it.
INSERT_TEXT_MODE_DEFAULT: Final = "insertTextMode"


def literal_markdown(text: str) -> str:
    """``text`` as a fenced Markdown code block, so it shows exactly as written.

    A Markdown paragraph would join lines and turn ``*``, ``#`` or backticks into
    formatting. The fence is longer than any backtick run in the text (``fence``), and
    the info string ``text`` keeps renderers from highlighting it as code.
    """
    ticks = fence(text)
    return f"{ticks}text\n{text}\n{ticks}"


#: LSP enum values of an item (``CompletionItemKind.Snippet``, ``InsertTextFormat``
#: ``PlainText``, ``InsertTextMode.AsIs``).
_SNIPPET_KIND: Final = int(types.CompletionItemKind.Snippet)
_PLAIN_TEXT: Final = int(types.InsertTextFormat.PlainText)
_AS_IS: Final = int(types.InsertTextMode.AsIs)


class JsonText(str):
    """A result already encoded as JSON (ASCII, compact): the server writes it into the
    answer as it is (``server.SnippetsProtocol``)."""


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


#: JSON's own string encoder (C), ASCII: what ``json.dumps`` writes for a string.
_STRING: Final = json.encoder.encode_basestring_ascii


@functools.lru_cache(maxsize=1024)
def _encoded_item(snippet: Snippet, expand_on_completion: bool, markdown: bool) -> tuple[str, str]:
    """The parts of a snippet's ``CompletionItem`` that no request changes, encoded: the
    fields before ``sortText`` (``"label":...``, no braces) and the ``newText``. The
    fields are ``core.completion.suggestion``'s, as the API lists them; only the rank
    (``sortText``) and the range are the request's, spliced in by ``completion_list``.

    The popup shows the same snippets on keystroke after keystroke, and encoding their
    texts (the documentation is the whole value) is most of building a list: a snippet's
    parts are encoded once and kept for the latest thousand. Written field by field with
    JSON's string encoder, in the order ``json.dumps`` of the item would write them, so a
    snippet new to the popup builds no dict to encode.
    """
    entry = suggestion(snippet, 0, expand_on_completion)
    label = _STRING(entry.label)
    if markdown:
        docs = f'{{"kind":"markdown","value":{_STRING(literal_markdown(entry.value))}}}'
    else:
        docs = _STRING(entry.value)
    fields = (
        f'"label":{label},"labelDetails":{{"description":{_STRING(entry.preview)}}},'
        f'"kind":{_SNIPPET_KIND},"detail":{_STRING(entry.accept_summary)},'
        f'"documentation":{docs},"filterText":{label},'
        f'"insertTextFormat":{_PLAIN_TEXT},"insertTextMode":{_AS_IS},'
        f'"data":{{"source":{_STRING(entry.source)}}}'
    )
    return fields, _STRING(entry.insert_text)


def completion_list(
    listed: Popup,
    line: int,
    before: str,
    encoding: Encoding,
    features: ClientFeatures,
) -> JsonText:
    """The LSP ``CompletionList``, encoded (docs/lsp.md, "Completion"): each item's edit
    replaces only the token, from its ``%`` to the cursor (``sort_text``: its rank).

    ``before`` is the cursor line's text before the cursor; ``listed`` was computed on
    it, so its replace range indexes it. The insert is plain text with
    ``insertTextMode: asIs`` for every client, so the text arrives exactly as configured:
    snippet format would send it through snippet engines that re-indent later lines and
    turn tabs into spaces (``vim.snippet.expand``, which nvim-cmp and blink.cmp call
    whatever ``insertTextMode`` says), and a value has no tabstops for that format to
    serve. ``asIs`` stops clients that honor it (VS Code, lsp-mode) from adjusting
    indentation; it is also the list's default for clients that take
    ``itemDefaults.insertTextMode``. Written as JSON text, not lsprotocol objects: the
    list is answered on every keystroke after ``%``, so it is spliced from each
    snippet's parts, encoded once (``_encoded_item``), and converts or encodes no item
    per keystroke (scripts/bench measures it against the protocol's own floor).
    """
    start = units_length(before[: listed.replace_start], encoding)
    end = units_length(before[: listed.replace_end], encoding)
    edit = (
        f'"textEdit":{{"range":{{"start":{{"line":{line},"character":{start}}},'
        f'"end":{{"line":{line},"character":{end}}}}},"newText":'
    )
    encoded = map(
        _encoded_item,
        listed.snippets,
        repeat(listed.expand_on_completion),
        repeat(features.completion_markdown),
    )
    items = ",".join(
        [
            f'{{{fields},"sortText":"{sort_text(rank)}",{edit}{new_text}}}}}'
            for rank, (fields, new_text) in enumerate(encoded)
        ]
    )
    defaults = ""
    if INSERT_TEXT_MODE_DEFAULT in features.item_defaults:
        defaults = f'"itemDefaults":{{"insertTextMode":{_AS_IS}}},'
    incomplete = "true" if listed.is_incomplete else "false"
    return JsonText(f'{{"isIncomplete":{incomplete},{defaults}"items":[{items}]}}')


# --------------------------------------------------------------------------- editor features


def lsp_range(document: Document, start: int, end: int, encoding: Encoding) -> types.Range:
    """Code-point offsets of ``document`` as an LSP range in ``encoding``."""
    a, b = document.position_at(start, encoding), document.position_at(end, encoding)
    return types.Range(
        start=types.Position(a.line, a.character), end=types.Position(b.line, b.character)
    )


def text_edits(
    document: Document, edits: Sequence[TextEdit], encoding: Encoding
) -> list[types.TextEdit]:
    return [
        types.TextEdit(range=lsp_range(document, e.start, e.end, encoding), new_text=e.new_text)
        for e in edits
    ]


def workspace_edit(
    uri: str,
    version: int | None,
    edits: Sequence[types.TextEdit],
    features: ClientFeatures,
    create: bool = False,
) -> types.WorkspaceEdit:
    """One document's edits: versioned ``documentChanges`` when the client takes them
    (``version`` None for a document the editor does not have open), else ``changes``.

    ``create``: the file does not exist; a ``CreateFile`` comes first (callers check
    ``features.create_files``).
    """
    if not features.document_changes:
        return types.WorkspaceEdit(changes={uri: list(edits)})
    document_edit = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=list(edits),
    )
    changes: list[types.TextDocumentEdit | types.CreateFile] = []
    if create:
        changes.append(
            types.CreateFile(
                uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
            )
        )
    changes.append(document_edit)
    return types.WorkspaceEdit(document_changes=changes)


_SEVERITIES: Final = {
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
}


def diagnostic(
    document: Document, found: SettingsDiagnostic, encoding: Encoding
) -> types.Diagnostic:
    return types.Diagnostic(
        range=lsp_range(document, found.start, found.end, encoding),
        severity=_SEVERITIES[found.severity],
        source=found.source,
        message=found.message,
    )


def code_action(
    action: Action,
    document: Document,
    features: ClientFeatures,
    diagnostics: Sequence[types.Diagnostic] = (),
) -> types.CodeAction | types.Command | None:
    """A code action; for a client without code action literals, the command that does
    the same (the expansion becomes ``pi-snippets.expandDocument`` on the markers' range),
    or None when there is none (a quick fix is only an edit)."""
    encoding = features.encoding
    if not features.code_action_literals:
        if action.kind == EXPAND_KIND and action.edits:
            start = min(e.start for e in action.edits)
            end = max(e.end for e in action.edits)
            span = lsp_range(document, start, end, encoding)
            arguments = {"uri": document.uri, "range": _to_json(span)}
            return types.Command(title=action.title, command=EXPAND_COMMAND, arguments=[arguments])
        if action.command is not None:
            return types.Command(
                title=action.title, command=action.command, arguments=[dict(action.arguments)]
            )
        return None
    edit = None
    if action.edits:
        lsp_edits = text_edits(document, action.edits, encoding)
        edit = workspace_edit(document.uri, document.version, lsp_edits, features)
    command = None
    if action.command is not None:
        command = types.Command(
            title=action.title, command=action.command, arguments=[dict(action.arguments)]
        )
    return types.CodeAction(
        title=action.title,
        kind=action.kind,
        diagnostics=list(diagnostics) or None,
        is_preferred=True if diagnostics else None,
        edit=edit,
        command=command,
    )


def _to_json(value: types.Range) -> dict[str, object]:
    return {
        "start": {"line": value.start.line, "character": value.start.character},
        "end": {"line": value.end.line, "character": value.end.character},
    }


def honest_capabilities(capabilities: types.ServerCapabilities, features: ClientFeatures) -> None:
    """Offer a client only what it can use (docs/lsp.md, "Capabilities").

    Semantic tokens only to a client that asks for them; code action kinds only to a
    client that takes code action literals (LSP forbids them otherwise); the commands only
    to a client that can apply the edits they make (``workspace/applyEdit``); no code
    actions to a client that can take neither edits nor commands.
    """
    if not features.semantic_tokens:
        capabilities.semantic_tokens_provider = None
    if not features.apply_edit:
        capabilities.execute_command_provider = types.ExecuteCommandOptions(commands=[])
    if not features.code_action_literals:
        capabilities.code_action_provider = True if features.apply_edit else None
