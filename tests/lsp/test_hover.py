"""Hover on a marker (docs/lsp.md, "Hover"): the snippet's whole text shown literally, the
file that defines it and its layer; an escape says it stays literal; anything else: null."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from .conftest import ENCODINGS, lsp_position, lsp_range

SNIPPETS = {"greet": "Hello there", "tricky": "Use `code` and ``more``\n# not a heading\n<b>x</b>"}
#: Emoji, CJK and CRLF before markers: every position must land in every encoding.
TEXT = "😀 中文 %greet and （%%greet）\r\n한국어，%greet.\r\nx%greet %Greet %nope %tricky"


async def hover(session, uri: str, position: types.Position) -> types.Hover | None:
    return await session.client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )


def occurrences(text: str, needle: str) -> list[int]:
    found, start = [], text.find(needle)
    while start >= 0:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_every_position_on_a_marker_hovers_it_in_every_encoding(shared, kind):
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    # The two expanding %greet markers (not x%greet, not inside %%greet).
    markers = [TEXT.index("%greet and"), TEXT.index("%greet.")]
    for marker in markers:
        end = marker + len("%greet")
        for offset in range(marker, end + 1):  # the start, inside, right after
            result = await hover(session, uri, lsp_position(TEXT, offset, encoding))
            assert result is not None, offset
            assert result.range == lsp_range(TEXT, marker, end, encoding)
            assert isinstance(result.contents, types.MarkupContent)
            assert "Hello there" in result.contents.value
        before = await hover(session, uri, lsp_position(TEXT, marker - 1, encoding))
        assert before is None


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_what_submission_leaves_alone_has_no_hover(shared, kind):
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    for needle in ["x%greet", "%Greet", "%nope"]:
        offset = TEXT.index(needle) + needle.index("%") + 2
        assert await hover(session, uri, lsp_position(TEXT, offset, encoding)) is None, needle


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_an_escape_says_it_stays_literal(shared, kind):
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    escape = TEXT.index("%%greet")
    result = await hover(session, uri, lsp_position(TEXT, escape + 3, encoding))
    assert result is not None
    assert result.range == lsp_range(TEXT, escape, escape + len("%%greet"), encoding)
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.value == (
        "`%%greet` is escaped: it is sent as the literal `%greet`, not expanded."
    )


async def test_markdown_client_sees_the_value_literally_in_a_longer_fence(shared):
    session = await shared("visual-studio-code", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    offset = TEXT.index("%tricky") + 1
    result = await hover(session, uri, lsp_position(TEXT, offset, "utf-16"))
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    assert result.contents.value == (
        "`%tricky` expands to:\n\n"
        f"```text\n{SNIPPETS['tricky']}\n```\n\n"
        f"From the user settings file: `{session.settings_file}`"
    )


async def test_plain_text_client_gets_plain_text(shared):
    session = await shared("plain", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    offset = TEXT.index("%tricky") + 1
    result = await hover(session, uri, lsp_position(TEXT, offset, "utf-16"))
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.PlainText
    assert result.contents.value == (
        f"%tricky expands to:\n\n{SNIPPETS['tricky']}\n\n"
        f"From the user settings file: {session.settings_file}"
    )


async def test_a_value_with_a_long_backtick_run_gets_a_longer_fence(shared):
    value = "a ```` b\r\nc"
    session = await shared("neovim", settings={"snippets": {"x": value}})
    uri = session.open("prompt.md", "%x")
    result = await hover(session, uri, types.Position(0, 1))
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    assert "`````text\na ```` b\nc\n`````" in result.contents.value


async def test_each_layer_is_named(start, tmp_path):
    session = await start(
        "neovim",
        settings={"snippets": {"mine": "user text"}},
        init={"trustProjectSettings": True, "piSimpleSnippets": {"snippets": {"ours": "client"}}},
    )
    project = session.workspace / ".pi" / "settings.json"
    session.write_settings({"snippets": {"proj": "project text"}}, project)
    await session.request("snippets/reload", {})
    text = "%mine %proj %ours"
    uri = session.open("prompt.md", text)
    seen = {}
    for name in ["mine", "proj", "ours"]:
        offset = text.index("%" + name) + 1
        result = await hover(session, uri, lsp_position(text, offset, "utf-8"))
        assert result is not None and isinstance(result.contents, types.MarkupContent)
        seen[name] = result.contents.value.split("\n\n")[-1]
    assert seen == {
        "mine": f"From the user settings file: `{session.settings_file}`",
        "proj": f"From the project settings file: `{project}`",
        "ours": "From the editor's settings: `initializationOptions`",
    }


async def test_multi_root_each_folder_hovers_its_own_snippet(start, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, value in [(one, "first"), (two, "second")]:
        (folder / ".pi").mkdir(parents=True)
        (folder / ".pi" / "settings.json").write_text(
            json.dumps({"piSimpleSnippets": {"snippets": {"same": value}}})
        )
    session = await start(
        "visual-studio-code", folders=[one, two], init={"trustProjectSettings": True}
    )
    for folder, value in [(one, "first"), (two, "second")]:
        uri = (folder / "p.md").as_uri()
        session.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text="%same"
                )
            )
        )
        result = await hover(session, uri, types.Position(0, 2))
        assert result is not None and isinstance(result.contents, types.MarkupContent)
        assert f"```text\n{value}\n```" in result.contents.value
        assert str(folder / ".pi" / "settings.json") in result.contents.value


async def test_nothing_configured_means_no_hover_even_on_an_escape(shared):
    session = await shared("neovim")
    uri = session.open("prompt.md", "%%x %y")
    assert await hover(session, uri, types.Position(0, 1)) is None
    assert await hover(session, uri, types.Position(0, 5)) is None


async def test_settings_files_get_no_marker_hover(start):
    session = await start("neovim", settings={"snippets": {"greet": "hi", "other": "x %greet"}})
    text = session.settings_file.read_text()
    uri = session.settings_file.as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)
        )
    )
    position = lsp_position(text, text.index("%greet") + 1, "utf-8")
    assert await hover(session, uri, position) is None
    # The same text in any other document is a prompt.
    other = session.open("copy.json", text, language="json")
    assert await hover(session, other, position) is not None


async def test_a_closed_document_has_no_hover(shared):
    session = await shared("neovim", settings={"snippets": {"greet": "hi"}})
    assert await hover(session, session.uri("never.md"), types.Position(0, 0)) is None
