"""``pi-snippets.saveSnippet`` (docs/lsp.md, "Save selection as snippet"): an edit of the
user settings file through the client that adds one member and leaves every other byte
alone; the snippet is live at once, before the editor saves the file."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .conftest import apply_text_edits, as_dict, capabilities, document_edits

SAVE = "pi-snippets.saveSnippet"
STYLED = (
    '{\r\n\t"theme": "😀 dark",\r\n\t"piSimpleSnippets": {\r\n\t\t"snippets": {\r\n'
    '\t\t\t"greet": "Hello"\r\n\t\t}\r\n\t},\r\n\t"z": [1,2]\r\n}\r\n'
)


async def save(session, arguments: dict[str, object]) -> dict[str, object]:
    result = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=SAVE, arguments=[arguments])
    )
    return as_dict(result)


async def names(session, uri: str | None = None) -> dict[str, str]:
    state = as_dict(await session.request("snippets/list", {"uri": uri} if uri else {}))
    return {s["name"]: s["value"] for s in state["snippets"]}


def editor_text(session, before: str, encoding: str = "utf-16") -> str:
    """What the editor's buffer of the user file holds after the applied edit."""
    (params,) = session.applied_edits[-1:]
    (edits,) = document_edits(params.edit).values()
    return apply_text_edits(before, edits, encoding)


@pytest.mark.parametrize("kind", ["visual-studio-code", "neovim"])
async def test_the_snippet_is_added_in_the_files_style_and_live_at_once(start, kind):
    session = await start(kind)
    session.settings_file.write_text(STYLED, encoding="utf-8", newline="")
    await session.request("snippets/reload", {})
    result = await save(session, {"text": "Use your MCP tools\nto find it"})
    assert result == {
        "name": "use-your-mcp",
        "uri": session.settings_file.as_uri(),
        "applied": True,
    }
    (params,) = session.applied_edits
    assert params.label == "Save snippet %use-your-mcp"
    encoding = "utf-8" if kind == "neovim" else "utf-16"
    assert editor_text(session, STYLED, encoding) == STYLED.replace(
        '"greet": "Hello"\r\n',
        '"greet": "Hello",\r\n\t\t\t"use-your-mcp": "Use your MCP tools\\nto find it"\r\n',
    )
    # Live at once, though the editor has not saved the file.
    assert session.settings_file.read_bytes().decode("utf-8") == STYLED
    assert (await names(session))["use-your-mcp"] == "Use your MCP tools\nto find it"
    expanded = as_dict(await session.request("snippets/expand", {"text": "%use-your-mcp"}))
    assert expanded["text"] == "Use your MCP tools\nto find it"
    uri = session.open("prompt.md", "%use-y")
    completion = await session.complete(uri, 0, 6)
    assert completion is not None and [i.label for i in completion.items] == ["%use-your-mcp"]
    assert any("saved %use-your-mcp in" in m.message for m in session.client.messages)


async def test_until_the_file_changes_on_disk_then_the_disk_wins(start):
    session = await start("visual-studio-code", settings={"snippets": {"greet": "Hello"}})
    before = session.settings_file.read_text()
    await save(session, {"text": "Saved text", "name": "saved"})
    assert "saved" in await names(session)
    # The editor saves the file: same content, new stamp; the disk is read again.
    session.settings_file.write_text(editor_text(session, before))
    await session.request("snippets/reload", {})
    assert (await names(session))["saved"] == "Saved text"
    # Anything else rewrites it without the snippet: the disk wins.
    session.write_settings({"snippets": {"greet": "Hello"}})
    await session.request("snippets/reload", {})
    assert "saved" not in await names(session)


async def test_closing_the_edited_file_unsaved_drops_the_edit(start):
    session = await start("visual-studio-code", settings={"snippets": {"greet": "Hello"}})
    uri = session.settings_file.as_uri()
    text = session.settings_file.read_text()
    session.open_uri(uri, text, language="json")
    await save(session, {"text": "Saved text", "name": "saved"})
    assert "saved" in await names(session)
    mark = session.mark()
    session.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await session.next_load(mark)
    assert "saved" not in await names(session)


async def test_an_open_settings_buffer_is_edited_with_its_version(start):
    session = await start("visual-studio-code", settings={"snippets": {"greet": "Hello"}})
    uri = session.settings_file.as_uri()
    buffer = '{"piSimpleSnippets": {"snippets": {"greet": "Hello", "draft": "unsaved"}}}'
    session.open_uri(uri, buffer, language="json", version=9)
    await save(session, {"text": "Saved text", "name": "saved"})
    (params,) = session.applied_edits
    (change,) = params.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.version == 9
    assert editor_text(session, buffer) == (
        '{"piSimpleSnippets": {"snippets": {"greet": "Hello", "draft": "unsaved", '
        '"saved": "Saved text"}}}'
    )
    # The session reads the edited buffer: the draft too.
    assert await names(session) == {"greet": "Hello", "draft": "unsaved", "saved": "Saved text"}


async def test_a_missing_file_is_created_by_the_client(start):
    session = await start("visual-studio-code")
    assert not session.settings_file.exists()
    await save(session, {"text": "First snippet"})
    (params,) = session.applied_edits
    create, edit = params.edit.document_changes or []
    assert isinstance(create, types.CreateFile) and create.uri == session.settings_file.as_uri()
    assert isinstance(edit, types.TextDocumentEdit) and edit.text_document.version is None
    assert editor_text(session, "") == (
        '{\n  "piSimpleSnippets": {\n    "snippets": {\n      "first-snippet": "First snippet"\n'
        "    }\n  }\n}\n"
    )
    # The client created it (empty) and left the text unsaved: still live.
    session.settings_file.write_text("")
    assert await names(session) == {"first-snippet": "First snippet"}


async def test_a_client_that_cannot_create_files_gets_it_created_by_the_server(start):
    caps = capabilities("visual-studio-code")
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.resource_operations = None
    session = await start(capabilities_override=caps)
    await save(session, {"text": "First snippet", "name": "first"})
    assert session.applied_edits == []
    assert json.loads(session.settings_file.read_text()) == {
        "piSimpleSnippets": {"snippets": {"first": "First snippet"}}
    }
    assert await names(session) == {"first": "First snippet"}


async def test_a_file_the_server_cannot_create_is_a_clear_error(start, tmp_path):
    caps = capabilities("visual-studio-code")
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.resource_operations = None
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    target = blocker / "settings.json"
    session = await start(capabilities_override=caps, args=["--settings", str(target)])
    with pytest.raises(JsonRpcException) as caught:
        await save(session, {"text": "First snippet", "name": "first"})
    # Found when the file is read (a path through a file is no place for one), before
    # anything is written.
    assert f"{target}: Not a directory" in str(caught.value)
    assert as_dict(await session.request("snippets/expand", {"text": "%first"}))["changed"] is False


async def test_a_file_without_the_namespace_gets_it(start):
    session = await start("neovim")
    text = '{\n    "theme": "dark"\n}\n'
    session.settings_file.write_text(text)
    await session.request("snippets/reload", {})
    await save(session, {"text": "x y", "name": "xy"})
    assert editor_text(session, text, "utf-8") == (
        '{\n    "theme": "dark",\n    "piSimpleSnippets": {\n        "snippets": {\n'
        '            "xy": "x y"\n        }\n    }\n}\n'
    )


async def test_a_derived_name_is_unused_in_every_layer_and_in_the_file(start):
    session = await start(
        "neovim",
        settings={"snippets": {"use-your-mcp": "user", "Use Your MCP-2": "invalid but there"}},
        init={"piSimpleSnippets": {"snippets": {"use-your-mcp-3": "client"}}},
    )
    result = await save(session, {"text": "Use your MCP tools"})
    assert result["name"] == "use-your-mcp-2"  # the invalid key is spelled differently


async def test_the_given_name_is_used_when_valid_and_unused(start):
    session = await start("neovim", settings={"snippets": {"greet": "Hello"}})
    result = await save(session, {"text": "Some text", "name": "mine"})
    assert result["name"] == "mine" and "mine" in await names(session)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        pytest.param({"text": "x", "name": "Bad Name"}, "not a valid snippet name", id="invalid"),
        pytest.param({"text": "x", "name": "greet"}, '"greet" already exists', id="taken"),
        pytest.param({"text": "  \n"}, "`text` is empty", id="blank-text"),
        pytest.param({"name": "x"}, "`text`", id="no-text"),
    ],
)
async def test_bad_requests_change_nothing(start, arguments, words):
    session = await start("neovim", settings={"snippets": {"greet": "Hello"}})
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await save(session, arguments)
    assert words in str(caught.value)
    assert session.applied_edits == []
    assert await names(session) == {"greet": "Hello"}


async def test_an_invalid_settings_file_is_not_touched(start):
    session = await start("neovim")
    session.settings_file.write_text('{"piSimpleSnippets": {"snippets": {')
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await save(session, {"text": "x"})
    assert "is not valid JSON" in str(caught.value) and "fix it first" in str(caught.value)
    assert session.applied_edits == []


async def test_a_refused_edit_saves_nothing(start):
    session = await start("neovim", settings={"snippets": {"greet": "Hello"}})
    session.refuse_edits = True
    result = await save(session, {"text": "Some text", "name": "mine"})
    assert result["applied"] is False
    assert "mine" not in await names(session)


async def test_an_error_answer_to_the_edit_saves_nothing_and_says_so(start):
    session = await start("neovim", settings={"snippets": {"greet": "Hello"}})
    session.fail_edits = True
    result = await save(session, {"text": "Some text", "name": "mine"})
    assert result["applied"] is False
    assert any("did not apply Save snippet %mine" in w for w in session.warnings_shown())
    assert "mine" not in await names(session)


async def test_the_code_action_runs_the_command(start):
    session = await start("visual-studio-code", settings={"snippets": {"greet": "Hello"}})
    uri = session.open("prompt.md", "Review this diff carefully")
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 16)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    (action,) = actions or []
    assert isinstance(action, types.CodeAction) and action.command is not None
    # An editor runs the command; it may add the name it asked the user for.
    (arguments,) = action.command.arguments or []
    await save(session, {**arguments, "name": "review"})
    assert (await names(session))["review"] == "Review this diff"
