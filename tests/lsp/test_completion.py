"""Completion as an editor sees it (docs/lsp.md, "Completion")."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import CLIENTS

SNIPPETS = {
    "use-mcp": "Use your MCP tools\n  to find   the information",
    "review": "Review $HOME ${1:x} and \\n}",
    "tests": "Write tests",
}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_percent_lists_every_snippet_in_name_order(shared, kind):
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("a.md", "Please %")
    result = await session.complete(uri, 0, 8)
    assert result is not None and result.is_incomplete is False
    assert [i.label for i in result.items] == ["%review", "%tests", "%use-mcp"]
    assert [i.sort_text for i in result.items] == ["0000", "0001", "0002"]
    assert [i.filter_text for i in result.items] == ["%review", "%tests", "%use-mcp"]


@pytest.mark.parametrize("kind", CLIENTS)
async def test_item_carries_preview_documentation_and_token_edit(shared, kind):
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("a.md", "x (%use tail")
    result = await session.complete(uri, 0, 7)
    assert result is not None
    (item,) = result.items
    assert item.label == "%use-mcp"
    assert item.kind == types.CompletionItemKind.Snippet
    # The row shows the preview; detail says what accepting does, not the preview again.
    assert item.label_details == types.CompletionItemLabelDetails(
        description="Use your MCP tools to find the information"
    )
    assert item.detail == "Inserts %use-mcp"
    if kind == "plain":  # no documentationFormat declared: plain text
        assert item.documentation == SNIPPETS["use-mcp"]
    else:  # the value shown literally: a fenced block, not a Markdown paragraph
        assert item.documentation == types.MarkupContent(
            kind=types.MarkupKind.Markdown,
            value="```text\nUse your MCP tools\n  to find   the information\n```",
        )
    # Only the active token is replaced: from the % to the cursor, not " tail".
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.range == types.Range(start=types.Position(0, 3), end=types.Position(0, 7))
    assert item.text_edit.new_text == "%use-mcp"


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("expand_on_completion", [False, True])
async def test_every_item_is_plain_text_inserted_as_is(shared, kind, expand_on_completion):
    """Nothing may re-indent the text or read it as a snippet (docs/lsp.md, "Completion")."""
    session = await shared(
        kind, settings={"snippets": SNIPPETS, "expandOnCompletion": expand_on_completion}
    )
    uri = session.open("a.md", "  - %")
    result = await session.complete(uri, 0, 5)
    assert result is not None and len(result.items) == len(SNIPPETS)
    for item in result.items:
        assert item.insert_text_mode == types.InsertTextMode.AsIs
        assert item.insert_text_format == types.InsertTextFormat.PlainText
        assert item.insert_text is None  # the textEdit is the one insert
    if kind == "neovim":  # it lists insertTextMode in completionList.itemDefaults
        assert result.item_defaults == types.CompletionItemDefaults(
            insert_text_mode=types.InsertTextMode.AsIs
        )
    else:
        assert result.item_defaults is None


@pytest.mark.parametrize("kind", CLIENTS)
async def test_value_arrives_unescaped_whatever_the_snippet_support(shared, kind):
    session = await shared(kind, settings={"snippets": SNIPPETS, "expandOnCompletion": True})
    uri = session.open("a.md", "%rev")
    result = await session.complete(uri, 0, 4)
    assert result is not None
    (item,) = result.items
    assert isinstance(item.text_edit, types.TextEdit)
    # `$HOME`, `${1:x}`, `\` and `}` are plain text: nothing to escape, no placeholder.
    assert item.text_edit.new_text == SNIPPETS["review"]
    assert item.detail == "Inserts the text (1 line)"


@pytest.mark.parametrize(
    ("value", "markdown"),
    [
        pytest.param("a `b` c", "```text\na `b` c\n```", id="single-backticks"),
        pytest.param("x ``` y", "````text\nx ``` y\n````", id="triple-backticks"),
        pytest.param("```\n*not* # a list", "````text\n```\n*not* # a list\n````", id="fence"),
    ],
)
async def test_markdown_documentation_fence_outlasts_every_backtick_run(shared, value, markdown):
    session = await shared("visual-studio-code", settings={"snippets": {"v": value}})
    uri = session.open("a.md", "%v")
    result = await session.complete(uri, 0, 2)
    assert result is not None
    (item,) = result.items
    assert item.documentation == types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown)


@pytest.mark.parametrize("kind", CLIENTS)
async def test_expand_on_completion_inserts_value_with_line_feeds(shared, kind):
    session = await shared(
        kind,
        settings={"snippets": {"multi": "one\r\ntwo\rthree\nfour"}, "expandOnCompletion": True},
    )
    uri = session.open("a.md", "%mu")
    result = await session.complete(uri, 0, 3)
    assert result is not None
    (item,) = result.items
    assert item.label == "%multi"  # the popup itself does not change
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.new_text == "one\ntwo\nthree\nfour"
    assert item.detail == "Inserts the text (4 lines)"


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("x%use", id="word-before-percent"),
        pytest.param("a,%use", id="ascii-punctuation-before-percent"),
        pytest.param("no marker here", id="no-percent"),
        pytest.param("%use-mcp now", id="cursor-after-token"),
        pytest.param("%.", id="query-rejected-by-name-rule"),
        pytest.param("%Use", id="uppercase"),
    ],
)
@pytest.mark.parametrize("kind", CLIENTS)
async def test_outside_a_token_answers_null(shared, kind, line):
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("a.md", line)
    assert await session.complete(uri, 0, len(line)) is None


@pytest.mark.parametrize("kind", CLIENTS)
async def test_token_without_match_is_an_empty_complete_list(shared, kind):
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("a.md", "%use-mcp.")
    result = await session.complete(uri, 0, 9)
    assert result is not None
    assert list(result.items) == [] and result.is_incomplete is False


async def test_fuzzy_order_is_pi_order(shared):
    names = {"abc": "1", "a-b-c": "2", "xaxbxc": "3", "cab": "4"}
    session = await shared("neovim", settings={"snippets": names})
    uri = session.open("a.md", "%abc")
    result = await session.complete(uri, 0, 4)
    assert result is not None
    # exact match first, then word-boundary matches, then scattered ones; "cab" fails.
    assert [i.label for i in result.items] == ["%abc", "%a-b-c", "%xaxbxc"]


@pytest.mark.parametrize("kind", CLIENTS)
async def test_at_most_twenty_items_and_incomplete_when_more(shared, kind):
    names = {f"s{n:02d}": f"value {n}" for n in range(25)}
    session = await shared(kind, settings={"snippets": names})
    uri = session.open("a.md", "%")
    result = await session.complete(uri, 0, 1)
    assert result is not None
    assert len(result.items) == 20 and result.is_incomplete is True
    narrowed = await shared(kind, settings={"snippets": dict(list(names.items())[:20])})
    uri = narrowed.open("a.md", "%")
    result = await narrowed.complete(uri, 0, 1)
    assert result is not None
    assert len(result.items) == 20 and result.is_incomplete is False


async def test_no_snippets_answers_null_from_static_provider(shared):
    session = await shared("neovim", settings={"snippets": {}})
    uri = session.open("a.md", "%")
    assert await session.complete(uri, 0, 1) is None


@pytest.mark.parametrize(
    ("prefix", "utf16", "utf8", "utf32"),
    [
        pytest.param("😀 ", 3, 5, 2, id="emoji"),
        pytest.param("中文，", 3, 9, 3, id="cjk-punctuation"),
        pytest.param("e\u0301 ", 3, 4, 3, id="combining-accent"),
        pytest.param("👩‍💻 (", 7, 13, 5, id="zwj-sequence-and-wrapper"),
    ],
)
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
async def test_range_is_exact_after_non_ascii_text(shared, prefix, utf16, utf8, utf32, encoding):
    caps = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[encoding])
    )
    session = await shared("neovim", settings={"snippets": SNIPPETS}, capabilities_override=caps)
    expected = {"utf-16": utf16, "utf-8": utf8, "utf-32": utf32}[encoding]
    text = prefix + "%use"
    uri = session.open("a.md", f"first line\n{text} after")
    cursor = expected + 4  # "%use" is ASCII in every encoding
    result = await session.complete(uri, 1, cursor)
    assert result is not None
    (item,) = result.items
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.range == types.Range(
        start=types.Position(1, expected), end=types.Position(1, cursor)
    )


async def test_incremental_edits_follow_lsp_lines_not_python_lines(shared):
    session = await shared("visual-studio-code", settings={"snippets": SNIPPETS})
    # U+0085 and U+2028 are line breaks to Python's splitlines(), not to LSP.
    uri = session.open("a.md", "a\x85b\u2028c\nx")
    session.change(
        uri,
        2,
        types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(1, 1), end=types.Position(1, 1)),
            text=" %rev",
        ),
    )
    result = await session.complete(uri, 1, 6)
    assert result is not None
    assert [i.label for i in result.items] == ["%review"]
    expanded = await session.request("snippets/list", {"uri": uri})
    assert expanded.snippets  # the session is still healthy


async def test_full_document_change_replaces_text(shared):
    session = await shared("neovim", settings={"snippets": SNIPPETS})
    uri = session.open("a.md", "nothing")
    session.change(uri, 2, types.TextDocumentContentChangeWholeDocument(text="line\n%te"))
    result = await session.complete(uri, 1, 3)
    assert result is not None
    assert [i.label for i in result.items] == ["%tests"]
