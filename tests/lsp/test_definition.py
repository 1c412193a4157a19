"""Go to definition on a marker (docs/lsp.md, "Go to definition"): the key of the snippet in
the settings file that won the merge, exact in every encoding; client layers: null."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from .conftest import ENCODINGS, lsp_position, lsp_range

#: Non-ASCII values and an escaped key before the key looked for; CRLF line breaks.
FILE = (
    '{\r\n  "theme": "😀😀 中文",\r\n  "piSimpleSnippets": {\r\n    "snippets": {\r\n'
    '      "cjk": "中文中文😀",\r\n      "gr\\u0065et": "hi",\r\n      "dup": "first",\r\n'
    '      "dup": "second"\r\n    }\r\n  }\r\n}\r\n'
)
PROMPT = "😀 中文 %greet %dup （%cjk）"


async def definition(session, uri: str, position: types.Position) -> object:
    return await session.client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position
        )
    )


async def at(session, uri: str, text: str, needle: str, encoding: str) -> object:
    return await definition(session, uri, lsp_position(text, text.index(needle) + 1, encoding))


def key_range(text: str, key_token: str, encoding: str, last: bool = False) -> types.Range:
    start = text.rindex(key_token) if last else text.index(key_token)
    return lsp_range(text, start, start + len(key_token), encoding)


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_definition_is_the_key_in_the_settings_file(start, kind):
    encoding = ENCODINGS[kind]
    session = await start(kind)
    session.settings_file.write_text(FILE, encoding="utf-8")
    await session.request("snippets/reload", {})
    uri = session.open("prompt.md", PROMPT)
    result = await at(session, uri, PROMPT, "%greet", encoding)
    assert result == types.Location(
        uri=session.settings_file.as_uri(), range=key_range(FILE, '"gr\\u0065et"', encoding)
    )
    result = await at(session, uri, PROMPT, "%cjk", encoding)
    assert isinstance(result, types.Location)
    assert result.range == key_range(FILE, '"cjk"', encoding)


async def test_a_duplicated_key_points_at_the_last_one_which_counts(start):
    session = await start("visual-studio-code")
    session.settings_file.write_text(FILE, encoding="utf-8")
    await session.request("snippets/reload", {})
    uri = session.open("prompt.md", PROMPT)
    result = await at(session, uri, PROMPT, "%dup", "utf-16")
    assert isinstance(result, types.Location)
    assert result.range == key_range(FILE, '"dup"', "utf-16", last=True)


async def test_a_bom_on_disk_is_not_counted(start):
    session = await start("visual-studio-code")
    session.settings_file.write_text("\ufeff" + FILE, encoding="utf-8")
    await session.request("snippets/reload", {})
    uri = session.open("prompt.md", PROMPT)
    result = await at(session, uri, PROMPT, "%cjk", "utf-16")
    assert isinstance(result, types.Location)
    assert result.range == key_range(FILE, '"cjk"', "utf-16")


async def test_the_open_buffer_is_read_unsaved_edits_included(start):
    session = await start("neovim")
    session.settings_file.write_text(FILE, encoding="utf-8")
    await session.request("snippets/reload", {})
    edited = FILE.replace('"theme": "😀😀 中文",', '"theme": "😀😀 中文 more",\r\n  "x": 1,')
    settings_uri = session.settings_file.as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=settings_uri, language_id="json", version=3, text=edited
            )
        )
    )
    uri = session.open("prompt.md", PROMPT)
    result = await at(session, uri, PROMPT, "%cjk", "utf-8")
    assert result == types.Location(uri=settings_uri, range=key_range(edited, '"cjk"', "utf-8"))


async def test_the_file_that_won_the_merge(start):
    session = await start(
        "neovim",
        settings={"snippets": {"same": "user", "mine": "user"}},
        init={"trustProjectSettings": True},
    )
    project = session.workspace / ".pi" / "settings.json"
    session.write_settings({"snippets": {"same": "project"}}, project)
    await session.request("snippets/reload", {})
    text = "%same %mine"
    uri = session.open("prompt.md", text)
    same = await at(session, uri, text, "%same", "utf-8")
    assert isinstance(same, types.Location) and same.uri == project.as_uri()
    mine = await at(session, uri, text, "%mine", "utf-8")
    assert isinstance(mine, types.Location) and mine.uri == session.settings_file.as_uri()


async def test_client_layer_escape_and_non_markers_have_no_definition(start):
    session = await start(
        "neovim",
        settings={"snippets": {"greet": "hi"}},
        init={"piSimpleSnippets": {"snippets": {"ours": "client"}}},
    )
    text = "%ours %%greet x%greet %nope"
    uri = session.open("prompt.md", text)
    for needle in ["%ours", "%%greet", "x%greet", "%nope"]:
        offset = text.index(needle) + needle.index("%") + 2
        assert await definition(session, uri, lsp_position(text, offset, "utf-8")) is None


async def test_multi_root_each_folder_goes_to_its_own_file(start, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        (folder / ".pi").mkdir(parents=True)
        (folder / ".pi" / "settings.json").write_text(
            json.dumps({"piSimpleSnippets": {"snippets": {"same": folder.name}}})
        )
    session = await start("neovim", folders=[one, two], init={"trustProjectSettings": True})
    for folder in (one, two):
        uri = (folder / "p.md").as_uri()
        session.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text="%same"
                )
            )
        )
        result = await definition(session, uri, types.Position(0, 1))
        assert isinstance(result, types.Location)
        assert result.uri == (folder / ".pi" / "settings.json").as_uri()
