"""The protocol shape Neovim's completion plugins depend on, with their own capabilities.

nvim-cmp and blink.cmp cannot be installed in CI (no registry we reach has them), so their
source was read (nvim-cmp a1d5048, cmp-nvim-lsp cbc7b02, blink.cmp 73ea297) and what it
needs from the server is checked here, with the client capabilities each one declares:

- Both apply a plain-text item's ``textEdit`` with ``vim.lsp.util.apply_text_edits``, byte
  for byte (nvim-cmp ``core.confirm``, blink.cmp ``completion/accept`` and
  ``lib/text_edits.apply``), but hand a snippet-format item to the snippet engine
  (``vim.snippet.expand`` in nvim-cmp's recommended config and blink.cmp's defaults),
  which re-indents later lines. Neither reads ``insertTextMode``. So every item must say
  ``insertTextFormat: 1`` (PlainText), whatever ``snippetSupport`` says.
- Both take the edit's ``range`` (a plain ``TextEdit``) on the cursor's line and shift its
  end with the cursor (nvim-cmp ``diff_after``, blink.cmp
  ``compensate_for_cursor_movement``): the range must run from the ``%`` to the cursor.
- nvim-cmp shows ``labelDetails.description`` in the menu column and ``detail`` above the
  documentation; blink.cmp shows ``labelDetails`` and the documentation: the preview goes
  in ``labelDetails.description``, the value literally in ``documentation``.
- Both list ``insertTextMode`` in ``completionList.itemDefaults`` (applied when an item has
  none).
"""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter

VALUE = "Review $HOME:\n\tuse `x` }\n  end ${1:y}"

#: cmp-nvim-lsp ``default_capabilities()`` (lua/cmp_nvim_lsp/init.lua).
CMP_NVIM_LSP: dict[str, Any] = {
    "textDocument": {
        "completion": {
            "dynamicRegistration": False,
            "completionItem": {
                "snippetSupport": True,
                "commitCharactersSupport": True,
                "deprecatedSupport": True,
                "preselectSupport": True,
                "tagSupport": {"valueSet": [1]},
                "insertReplaceSupport": True,
                "resolveSupport": {
                    "properties": [
                        "documentation",
                        "additionalTextEdits",
                        "insertTextFormat",
                        "insertTextMode",
                        "command",
                    ]
                },
                "insertTextModeSupport": {"valueSet": [1, 2]},
                "labelDetailsSupport": True,
            },
            "contextSupport": True,
            "insertTextMode": 1,
            "completionList": {
                "itemDefaults": [
                    "commitCharacters",
                    "editRange",
                    "insertTextFormat",
                    "insertTextMode",
                    "data",
                ]
            },
        }
    }
}

#: blink.cmp ``get_lsp_capabilities()`` (lua/blink/cmp/sources/lib/init.lua).
BLINK_CMP: dict[str, Any] = {
    "textDocument": {
        "completion": {
            "completionItem": {
                "snippetSupport": True,
                "commitCharactersSupport": False,
                "documentationFormat": ["markdown", "plaintext"],
                "deprecatedSupport": True,
                "preselectSupport": False,
                "tagSupport": {"valueSet": [1]},
                "insertReplaceSupport": True,
                "resolveSupport": {
                    "properties": [
                        "documentation",
                        "detail",
                        "additionalTextEdits",
                        "command",
                        "data",
                    ]
                },
                "insertTextModeSupport": {"valueSet": [1]},
                "labelDetailsSupport": True,
            },
            "completionList": {
                "itemDefaults": [
                    "commitCharacters",
                    "editRange",
                    "insertTextFormat",
                    "insertTextMode",
                    "data",
                ]
            },
            "contextSupport": True,
            "insertTextMode": 1,
        }
    }
}

PLUGINS = {"nvim-cmp": CMP_NVIM_LSP, "blink.cmp": BLINK_CMP}


def capabilities(raw: dict[str, Any]) -> types.ClientCapabilities:
    return default_converter().structure(raw, types.ClientCapabilities)


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize(
    ("text", "line", "character"),
    [
        pytest.param("  - %rev", 0, 8, id="indented-list-item"),
        pytest.param("intro\nsee %re", 1, 7, id="end-of-file-without-final-newline"),
    ],
)
async def test_items_are_what_the_plugins_insert_exactly(start, plugin, text, line, character):
    session = await start(
        capabilities_override=capabilities(PLUGINS[plugin]),
        settings={"snippets": {"rev": VALUE}, "expandOnCompletion": True},
    )
    uri = session.open("a.md", text)
    result = await session.complete(uri, line, character)
    assert result is not None
    (item,) = result.items
    assert item.insert_text_format == types.InsertTextFormat.PlainText
    assert item.insert_text_mode == types.InsertTextMode.AsIs
    assert item.insert_text is None
    assert isinstance(item.text_edit, types.TextEdit)  # a range, not insert/replace
    percent = text.split("\n")[line].index("%")
    assert item.text_edit.range == types.Range(
        start=types.Position(line, percent), end=types.Position(line, character)
    )
    assert item.text_edit.new_text == VALUE
    assert result.item_defaults == types.CompletionItemDefaults(
        insert_text_mode=types.InsertTextMode.AsIs
    )


@pytest.mark.parametrize("plugin", PLUGINS)
async def test_row_preview_and_literal_documentation(start, plugin):
    session = await start(
        capabilities_override=capabilities(PLUGINS[plugin]), settings={"snippets": {"rev": VALUE}}
    )
    uri = session.open("a.md", "%")
    result = await session.complete(uri, 0, 1)
    assert result is not None
    (item,) = result.items
    assert item.label_details == types.CompletionItemLabelDetails(
        description="Review $HOME: use `x` } end ${1:y}"
    )
    assert item.detail == "Inserts %rev"
    assert item.text_edit is not None and item.text_edit.new_text == "%rev"
    if plugin == "blink.cmp":  # declares Markdown documentation
        assert item.documentation == types.MarkupContent(
            kind=types.MarkupKind.Markdown, value=f"```text\n{VALUE}\n```"
        )
    else:  # cmp-nvim-lsp's table alone declares no documentationFormat: plain text
        assert item.documentation == VALUE
