"""Code actions on a prompt and ``pi-snippets.expandDocument`` (docs/lsp.md, "Code actions
and commands"): edits of exactly the changed markers, the same text as ``snippets/expand``."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .conftest import (
    ENCODINGS,
    apply_text_edits,
    as_dict,
    capabilities,
    document_edits,
    lsp_position,
    lsp_range,
    offset_of,
)

SNIPPETS = {"greet": "Hello\nthere", "a": "AAA", "same": "%same"}
TEXT = "😀 中文 %greet x%greet\r\n한국어，%%a %nope (%a) %same\r\nlast %a"
EXPAND = "pi-snippets.expandDocument"
SAVE = "pi-snippets.saveSnippet"


async def actions(
    session, uri: str, span: types.Range, only: list[str] | None = None
) -> list[types.CodeAction | types.Command]:
    result = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=span,
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    return list(result or [])


async def submitted(session, text: str) -> str:
    return as_dict(await session.request("snippets/expand", {"text": text}))["text"]


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_a_cursor_on_a_marker_expands_that_marker_only(shared, kind):
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    cursor = lsp_position(TEXT, TEXT.index("(%a)") + 2, encoding)
    (action,) = await actions(session, uri, types.Range(cursor, cursor))
    assert isinstance(action, types.CodeAction)
    assert (action.title, action.kind) == ("Expand snippet markers", "refactor.rewrite")
    assert action.edit is not None
    (edits,) = document_edits(action.edit).values()
    marker = TEXT.index("(%a)") + 1
    assert [(e.range, e.new_text) for e in edits] == [
        (lsp_range(TEXT, marker, marker + 2, encoding), "AAA")
    ]


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_a_selection_expands_the_markers_it_touches_and_offers_saving(shared, kind):
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    first, last = TEXT.index("%greet") + 3, TEXT.index("%same") + 1  # cuts two markers
    expand_action, save_action = await actions(session, uri, lsp_range(TEXT, first, last, encoding))
    assert isinstance(expand_action, types.CodeAction) and expand_action.edit is not None
    (edits,) = document_edits(expand_action.edit).values()
    # %greet, %%a and (%a) change; %same expands to itself: no edit; x%greet, %nope: none.
    assert [e.new_text for e in edits] == ["Hello\nthere", "%a", "AAA"]
    line_end = TEXT.index("\r\nlast")
    assert apply_text_edits(TEXT, edits, encoding) == (
        await submitted(session, TEXT[:line_end]) + TEXT[line_end:]
    )
    assert isinstance(save_action, types.CodeAction)
    assert (save_action.title, save_action.kind) == ("Save selection as snippet", "refactor")
    assert save_action.edit is None and save_action.command is not None
    assert save_action.command.command == SAVE
    assert list(save_action.command.arguments or []) == [{"text": TEXT[first:last], "uri": uri}]


async def test_vscode_gets_a_versioned_document_edit(shared):
    session = await shared("visual-studio-code", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", "x %a")
    session.change(uri, 7, types.TextDocumentContentChangeWholeDocument(text="y %a %a"))
    (action, _) = await actions(
        session, uri, types.Range(types.Position(0, 0), types.Position(0, 7))
    )
    assert isinstance(action, types.CodeAction) and action.edit is not None
    (change,) = action.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document == types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=7)


@pytest.mark.parametrize(
    ("only", "titles"),
    [
        pytest.param(["quickfix"], [], id="quickfix-only"),
        pytest.param(["refactor.rewrite"], ["Expand snippet markers"], id="rewrite-only"),
        pytest.param(["refactor"], ["Expand snippet markers", "Save selection as snippet"],
                     id="refactor-covers-both"),
    ],
)  # fmt: skip
async def test_only_asks_for_some_kinds(shared, only, titles):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", "x %a y")
    found = await actions(
        session, uri, types.Range(types.Position(0, 0), types.Position(0, 6)), only
    )
    assert [a.title for a in found] == titles


async def test_nothing_to_expand_and_no_selection_means_no_action(shared):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", "x %nope %same")
    for offset in (3, 10):
        cursor = types.Position(0, offset)
        assert await actions(session, uri, types.Range(cursor, cursor)) == []


async def test_a_client_without_literals_gets_the_commands(shared):
    caps = capabilities("visual-studio-code")
    assert caps.text_document is not None and caps.text_document.code_action is not None
    caps.text_document.code_action.code_action_literal_support = None
    session = await shared(capabilities_override=caps, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", "x %a y")
    expand_command, save_command = await actions(
        session, uri, types.Range(types.Position(0, 1), types.Position(0, 4))
    )
    assert isinstance(expand_command, types.Command)
    assert expand_command.command == EXPAND
    assert list(expand_command.arguments or []) == [
        {
            "uri": uri,
            "range": {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 4}},
        }
    ]
    assert isinstance(save_command, types.Command) and save_command.command == SAVE


# --------------------------------------------------------------------------- the command


async def execute(session, command: str, *arguments: object) -> object:
    return await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(arguments))
    )


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_expand_document_edits_exactly_the_changed_spans(start, kind):
    encoding = ENCODINGS[kind]
    session = await start(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    result = await execute(session, EXPAND, {"uri": uri})
    assert as_dict(result) == {"applied": True, "changed": 4}
    (params,) = session.applied_edits
    assert params.label == "Expand snippet markers"
    (edits,) = document_edits(params.edit).values()
    # Each edit covers one marker exactly, nothing around it; %same is unchanged: no edit.
    replaced = [
        TEXT[offset_of(TEXT, e.range.start, encoding) : offset_of(TEXT, e.range.end, encoding)]
        for e in edits
    ]
    assert replaced == ["%greet", "%%a", "%a", "%a"]
    assert apply_text_edits(TEXT, edits, encoding) == await submitted(session, TEXT)


async def test_expand_document_on_a_range(start):
    session = await start("neovim", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", "%a %a\n%a")
    span = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 2}}
    assert as_dict(await execute(session, EXPAND, {"uri": uri, "range": span})) == {
        "applied": True,
        "changed": 1,
    }
    (edits,) = document_edits(session.applied_edits[0].edit).values()
    assert [(e.range.start.line, e.new_text) for e in edits] == [(1, "AAA")]


async def test_expand_document_with_nothing_to_expand_sends_no_edit(start):
    session = await start("neovim", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", "%nope %same")
    assert as_dict(await execute(session, EXPAND, {"uri": uri})) == {"applied": False, "changed": 0}
    assert session.applied_edits == []


async def test_a_refused_edit_is_reported(start):
    session = await start("neovim", settings={"snippets": SNIPPETS})
    session.refuse_edits = True
    uri = session.open("prompt.md", "%a")
    assert as_dict(await execute(session, EXPAND, {"uri": uri})) == {"applied": False, "changed": 0}
    assert any(
        "did not apply Expand snippet markers: refused" in w for w in session.warnings_shown()
    )


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param([], id="no-arguments"),
        pytest.param([{"uri": 5}], id="uri-not-a-string"),
        pytest.param([{"uri": "file:///not/open.md"}], id="not-open"),
        pytest.param([{"uri": "file:///x", "range": {"start": {"line": -1}}}], id="bad-range"),
    ],
)
async def test_bad_arguments_are_invalid_params_and_the_session_goes_on(shared, arguments):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await execute(session, EXPAND, *arguments)
    assert EXPAND in str(caught.value)
    assert await submitted(session, "%a") == "AAA"
