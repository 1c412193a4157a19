"""``lsp_json`` writes lsprotocol values exactly as lsprotocol's own converter does.

The server writes its lsprotocol results with ``lsp_json`` (no cattrs code generation
on the way to answering ``initialize``); a client must not see a byte of difference:
names, left-out defaults, the properties sent even as ``null``, enums, nesting.
"""

from __future__ import annotations

import inspect
from typing import Any

import attrs
import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pi_snippets_lsp.lsp.lspjson import lsp_json
from pi_snippets_lsp.lsp.setup import create_server
from pytest_lsp import client_capabilities

CONVERTER = get_converter()


def assert_same(value: Any) -> None:
    assert lsp_json(value) == CONVERTER.unstructure(value)


def _range(a: int, b: int) -> types.Range:
    return types.Range(types.Position(a, 0), types.Position(b, 3))


SAMPLES = [
    pytest.param(
        types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, "x")), id="hover"
    ),
    pytest.param(
        types.Hover(
            contents=types.MarkupContent(types.MarkupKind.PlainText, "x"), range=_range(1, 1)
        ),
        id="hover-with-range",
    ),
    pytest.param(types.Location("file:///a", _range(0, 2)), id="location"),
    pytest.param([types.Location("file:///a", _range(0, 2))], id="locations"),
    pytest.param(types.SemanticTokens(data=[0, 1, 2, 0, 0]), id="semantic-tokens"),
    pytest.param(types.SemanticTokens(data=[], result_id="3"), id="semantic-tokens-result-id"),
    pytest.param([types.TextEdit(_range(0, 1), "new")], id="text-edits"),
    pytest.param(
        [
            types.CodeAction(
                title="Expand",
                kind=types.CodeActionKind.RefactorInline,
                edit=types.WorkspaceEdit(
                    changes={"file:///a": [types.TextEdit(_range(0, 1), "x")]}
                ),
                is_preferred=False,
                diagnostics=[],
            ),
            types.CodeAction(
                title="Save",
                command=types.Command("Save", "pi.save", arguments=[{"uri": "file:///a", "n": 1}]),
            ),
        ],
        id="code-actions",
    ),
    pytest.param(
        types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    types.OptionalVersionedTextDocumentIdentifier("file:///a", version=None),
                    [types.TextEdit(_range(0, 1), "x")],
                )
            ]
        ),
        id="document-changes-with-a-null-version",
    ),
    pytest.param(
        types.Diagnostic(
            _range(0, 1),
            "bad",
            severity=types.DiagnosticSeverity.Warning,
            source="pi",
            code="invalid-name",
            tags=[types.DiagnosticTag.Unnecessary],
        ),
        id="diagnostic",
    ),
    pytest.param(
        types.CompletionList(
            is_incomplete=False,
            items=[types.CompletionItem("%a", kind=types.CompletionItemKind.Snippet)],
        ),
        id="completion-list",
    ),
    pytest.param(None, id="null"),
    pytest.param([], id="empty-list"),
]


@pytest.mark.parametrize("value", SAMPLES)
def test_results_are_written_as_lsprotocol_writes_them(value: Any) -> None:
    assert_same(value)


def every_default_constructible_class() -> list[type]:
    classes = []
    for _, cls in inspect.getmembers(types, inspect.isclass):
        if not attrs.has(cls):
            continue
        if all(field.default is not attrs.NOTHING for field in attrs.fields(cls)):
            classes.append(cls)
    return classes


@pytest.mark.parametrize("cls", every_default_constructible_class(), ids=lambda c: c.__name__)
def test_every_default_value_is_written_as_lsprotocol_writes_it(cls: type) -> None:
    """Defaults left out, special properties (sent even as null) kept."""
    assert_same(cls())


@pytest.mark.parametrize("client", ["visual-studio-code", "neovim", "emacs"])
def test_the_initialize_answer_is_the_one_lsprotocol_would_write(client: str) -> None:
    server = create_server()
    params = types.InitializeParams(
        capabilities=client_capabilities(client), process_id=None, root_uri=None
    )
    result = server.protocol.lsp_initialize(params)
    answer = next(result) if inspect.isgenerator(result) else result
    while inspect.isgenerator(result):  # pygls yields its user handler, then answers
        try:
            answer = result.send(None)
        except StopIteration as stop:
            answer = stop.value
            break
    assert isinstance(answer, types.InitializeResult)
    assert_same(answer)
