"""Editing a snippet's value as plain text (docs/lsp.md, "Edit snippet"):
``pi-snippets.editSnippet`` answers the value, unescaped, and where it is written;
``pi-snippets.setSnippetValue`` writes a new value back, escaped, as one edit of the file
Pi takes the snippet from, through the client; a file changed meanwhile, a layer the user
cannot write and bad text are refused and lose nothing. Against the real server, in every
position encoding."""

from __future__ import annotations

import json
import os

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .conftest import ENCODINGS, apply_text_edits, as_dict, document_edits, lsp_position, offset_of

EDIT = "pi-snippets.editSnippet"
SET = "pi-snippets.setSnippetValue"
REQUEST_FAILED = -32803

#: Non-ASCII before the snippets, CRLF, an escaped value with every kind of escape, a
#: duplicated key (the last counts) and a member after the edited one.
FILE = (
    '{\r\n  "theme": "😀😀 中文",\r\n  "piSimpleSnippets": {\r\n    "snippets": {\r\n'
    '      "tricky": "old",\r\n'
    '      "tricky": "Say \\"hi\\" to C:\\\\dir,\\n100% caf\\u00e9 😀\\ttab",\r\n'
    '      "other": "Other"\r\n    }\r\n  }\r\n}\r\n'
)
OLD = 'Say "hi" to C:\\dir,\n100% café 😀\ttab'
#: What the user types: quotes, backslashes, line breaks, %, non-ASCII, a tab, a control.
NEW = 'New "quoted" \\n is not a break, C:\\\\x\nsecond line 100%% 中文 😀\n\tend\x01 `$1`'


async def command(session, name: str, arguments: object) -> object:
    result = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=[arguments])
    )
    return as_dict(result)


async def values(session, uri: str | None = None) -> dict[str, str]:
    state = as_dict(await session.request("snippets/list", {"uri": uri} if uri else {}))
    return {s["name"]: s["value"] for s in state["snippets"]}


def where(position: types.Position) -> dict[str, int]:
    return {"line": position.line, "character": position.character}


async def setup(session, text: str = FILE) -> None:
    session.settings_file.write_text(text, encoding="utf-8", newline="")
    await session.request("snippets/reload", {})


def edited(session, before: str, encoding: str) -> str:
    (params,) = session.applied_edits
    (edits,) = document_edits(params.edit).values()
    return apply_text_edits(before, edits, encoding)


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_the_value_opens_unescaped_and_goes_back_escaped(start, kind):
    encoding = ENCODINGS[kind]
    session = await start(kind)
    await setup(session)
    opened = await command(session, EDIT, {"name": "tricky"})
    assert isinstance(opened, dict)
    token = '"Say \\"hi\\" to C:\\\\dir,\\n100% caf\\u00e9 😀\\ttab"'
    start_at = FILE.index(token)
    span = opened["range"]
    assert (
        offset_of(FILE, types.Position(**span["start"]), encoding),
        offset_of(FILE, types.Position(**span["end"]), encoding),
    ) == (start_at, start_at + len(token))
    assert {k: opened[k] for k in ("name", "value", "uri", "source", "layer")} == {
        "name": "tricky",
        "value": OLD,
        "uri": session.settings_file.as_uri(),
        "source": str(session.settings_file),
        "layer": "user",
    }
    result = await command(session, SET, {"name": "tricky", "value": NEW, "previous": OLD})
    assert result == {
        "name": "tricky",
        "uri": session.settings_file.as_uri(),
        "applied": True,
        "changed": True,
    }
    (params,) = session.applied_edits
    assert params.label == "Edit snippet %tricky"
    after = edited(session, FILE, encoding)
    # One token changed, every other byte kept; JSON.parse reads the new value exactly.
    assert after == FILE.replace(token, json.dumps(NEW, ensure_ascii=False))
    assert json.loads(after)["piSimpleSnippets"]["snippets"]["tricky"] == NEW
    assert "中文 😀" in after and "\\u4e2d" not in after
    # Live at once, though the editor has not saved the file; the disk is untouched.
    assert (await values(session))["tricky"] == NEW
    assert session.settings_file.read_bytes().decode() == FILE
    # Opening it again gives what was typed, exactly.
    again = await command(session, EDIT, {"name": "tricky"})
    assert isinstance(again, dict) and again["value"] == NEW


async def test_line_breaks_are_saved_as_newlines(start):
    session = await start("visual-studio-code")
    await setup(session)
    await command(session, SET, {"name": "other", "value": "a\r\nb\rc\n", "previous": "Other"})
    after = edited(session, FILE, "utf-16")
    assert '"other": "a\\nb\\nc\\n"' in after
    assert (await values(session))["other"] == "a\nb\nc\n"


async def test_the_same_value_is_no_edit(start):
    session = await start("neovim")
    await setup(session)
    result = await command(session, SET, {"name": "tricky", "value": OLD, "previous": OLD})
    assert result == {
        "name": "tricky",
        "uri": session.settings_file.as_uri(),
        "applied": True,
        "changed": False,
    }
    assert session.applied_edits == []


async def test_a_file_changed_meanwhile_is_refused_and_nothing_is_lost(start):
    session = await start("neovim")
    await setup(session)
    opened = await command(session, EDIT, {"name": "other"})
    assert isinstance(opened, dict) and opened["value"] == "Other"
    meanwhile = FILE.replace('"Other"', '"Changed by hand"')
    session.settings_file.write_text(meanwhile, encoding="utf-8", newline="")
    with pytest.raises(JsonRpcException) as caught:
        await command(session, SET, {"name": "other", "value": "Mine", "previous": "Other"})
    assert caught.value.code == REQUEST_FAILED
    assert "%other was changed in" in str(caught.value) and "not saved" in str(caught.value)
    assert session.applied_edits == []
    assert session.settings_file.read_bytes().decode() == meanwhile
    # Removed meanwhile: refused the same way.
    session.settings_file.write_text(FILE.replace('"other"', '"renamed"'), newline="")
    await session.request("snippets/reload", {})
    with pytest.raises(JsonRpcException) as caught:
        await command(session, SET, {"name": "other", "value": "Mine", "previous": "Other"})
    assert caught.value.code == REQUEST_FAILED and "no snippet %other" in str(caught.value)
    assert session.applied_edits == []


async def test_an_open_settings_buffer_is_edited_as_the_editor_has_it(start):
    """The settings file open with unsaved edits: the value is read from the buffer and the
    edit names the buffer's version, so an editor whose buffer moved on refuses it."""
    session = await start("visual-studio-code")
    await setup(session)
    buffer = FILE.replace('"Other"', '"Other, unsaved"')
    uri = session.open_uri(session.settings_file.as_uri(), buffer, "json", version=7)
    opened = await command(session, EDIT, {"name": "other"})
    assert isinstance(opened, dict) and opened["value"] == "Other, unsaved"
    await command(session, SET, {"name": "other", "value": "New", "previous": "Other, unsaved"})
    (params,) = session.applied_edits
    (change,) = params.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == uri and change.text_document.version == 7
    assert edited(session, buffer, "utf-16") == buffer.replace('"Other, unsaved"', '"New"')


async def test_the_cursor_names_the_snippet_a_marker_or_a_key(start):
    session = await start("visual-studio-code")
    await setup(session)
    prompt = "中文 %other and 100%"
    uri = session.open("prompt.md", prompt)
    at = lsp_position(prompt, prompt.index("%other") + 3, "utf-16")
    on_marker = await command(session, EDIT, {"uri": uri, "position": where(at)})
    assert isinstance(on_marker, dict) and on_marker["name"] == "other"
    nothing = lsp_position(prompt, len(prompt), "utf-16")
    assert await command(session, EDIT, {"uri": uri, "position": where(nothing)}) is None
    settings = session.open_uri(session.settings_file.as_uri(), FILE, "json")
    key = lsp_position(FILE, FILE.index('"other"') + 2, "utf-16")
    on_key = await command(session, EDIT, {"uri": settings, "position": where(key)})
    assert isinstance(on_key, dict) and on_key["name"] == "other" and on_key["value"] == "Other"
    with pytest.raises(JsonRpcInvalidParams):
        await command(session, EDIT, {"uri": uri})


async def test_the_layer_pi_takes_it_from_is_the_one_written(start):
    session = await start("neovim", init={"trustProjectSettings": True})
    session.write_settings({"snippets": {"shared": "user value"}})
    project = session.workspace / ".pi" / "settings.json"
    session.write_settings({"snippets": {"shared": "project value"}}, project)
    await session.request("snippets/reload", {})
    uri = session.open("prompt.md", "%shared")
    opened = await command(session, EDIT, {"name": "shared", "uri": uri})
    assert isinstance(opened, dict)
    assert (opened["value"], opened["layer"], opened["uri"]) == (
        "project value",
        "project",
        project.as_uri(),
    )
    await command(session, SET, {"name": "shared", "value": "edited", "uri": uri})
    (params,) = session.applied_edits
    assert list(document_edits(params.edit)) == [project.as_uri()]
    assert (await values(session, uri))["shared"] == "edited"
    assert json.loads(session.settings_file.read_text())["piSimpleSnippets"]["snippets"] == {
        "shared": "user value"
    }


async def test_a_layer_without_a_file_is_refused(start):
    session = await start("neovim", init={"piSimpleSnippets": {"snippets": {"mine": "Client"}}})
    for name, arguments in ((EDIT, {"name": "mine"}), (SET, {"name": "mine", "value": "x"})):
        with pytest.raises(JsonRpcException) as caught:
            await command(session, name, arguments)
        assert caught.value.code == REQUEST_FAILED
        assert "defined in the editor's settings" in str(caught.value)
    with pytest.raises(JsonRpcException) as caught:
        await command(session, EDIT, {"name": "nothing"})
    assert "no snippet %nothing" in str(caught.value)
    assert session.applied_edits == []


async def test_bad_text_and_a_refused_edit_change_nothing(start):
    session = await start("neovim")
    await setup(session)
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await command(session, SET, {"name": "other", "value": "bad \ud800 text"})
    assert "lone surrogate U+D800" in str(caught.value)
    with pytest.raises(JsonRpcInvalidParams):
        await command(session, SET, {"name": "other", "value": 3})
    session.refuse_edits = True
    result = await command(session, SET, {"name": "other", "value": "New", "previous": "Other"})
    assert isinstance(result, dict) and result["applied"] is False
    assert (await values(session))["other"] == "Other"
    assert any("did not apply Edit snippet %other" in m for m in session.warnings_shown())


async def test_a_file_that_does_not_parse_any_more_is_refused(start):
    session = await start("neovim")
    await setup(session)
    broken = FILE.replace('"Other"\r\n', '"Other",,\r\n')
    uri = session.open_uri(session.settings_file.as_uri(), broken, "json")
    with pytest.raises(JsonRpcException) as caught:
        await command(session, SET, {"name": "tricky", "value": "x", "previous": OLD})
    assert "is not valid JSON" in str(caught.value) and "not saved" in str(caught.value)
    assert uri and session.applied_edits == []


async def test_a_file_gone_meanwhile_is_refused(start):
    session = await start("neovim")
    await setup(session)
    session.settings_file.unlink()
    with pytest.raises(JsonRpcException) as caught:
        await command(session, SET, {"name": "other", "value": "x", "previous": "Other"})
    assert caught.value.code == REQUEST_FAILED
    assert f"{session.settings_file} is gone; reload the snippets" in str(caught.value)
    assert session.applied_edits == [] and not session.settings_file.exists()


#: Who owns the settings file when the server cannot write it, as root (CI).
NOBODY = 65534


async def test_a_file_this_user_cannot_write_is_refused_before_any_edit(start):
    """Another user's file (as root: uid 65534's 0644 file, the server without the
    capability that lets root write anyone's files), or a read-only one otherwise: the
    snippet does not even open for editing, so nothing typed is lost."""
    wrap: list[str] = []
    if os.geteuid() == 0:
        drop = "-dac_override,-dac_read_search"
        wrap = ["setpriv", "--bounding-set", drop, "--inh-caps", drop, "--"]
    session = await start("neovim", wrap=wrap)
    await setup(session)
    if os.geteuid() == 0:
        os.chown(session.settings_file, NOBODY, NOBODY)
    session.settings_file.chmod(0o444 if os.geteuid() else 0o644)
    before = session.settings_file.read_bytes()
    for name, arguments in (
        (EDIT, {"name": "other"}),
        (SET, {"name": "other", "value": "New", "previous": "Other"}),
    ):
        with pytest.raises(JsonRpcException) as caught:
            await command(session, name, arguments)
        assert caught.value.code == REQUEST_FAILED
        assert f"{session.settings_file} is not writable by this user; not saved" in str(
            caught.value
        )
    assert session.applied_edits == [] and session.settings_file.read_bytes() == before
