"""Settings files open in the editor (docs/settings-diagnostics.md): diagnostics from the
buffer's text at the exact key or value, live on every change, cleared when fixed and on
close, with quick fixes; only the settings files the server reads get them."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from .conftest import (
    ENCODINGS,
    apply_text_edits,
    document_edits,
    lsp_position,
    lsp_range,
    offset_of,
)

#: Non-ASCII values before the bad key: UTF-16, UTF-8 and UTF-32 columns all differ.
BAD = (
    '{\r\n  "theme": "😀😀 中文",\r\n  "piSimpleSnippets": {\r\n    "snippets": {\r\n'
    '      "ok": "中文😀", "Bad Name": "x",\r\n      "empty": ""\r\n    },\r\n'
    '    "expandOnCompletion": "true"\r\n  }\r\n}\r\n'
)


async def published(session, uri: str) -> list[types.Diagnostic] | None:
    """The diagnostics the server published for ``uri`` since the last call (None: none).

    A request answered after the notifications it follows proves they have arrived."""
    await session.request("snippets/list", {})
    found = session.client.diagnostics.pop(uri, None)
    return None if found is None else list(found)


def spans(text: str, found: list[types.Diagnostic], encoding: str) -> list[tuple[str, str]]:
    """(covered text, message) of each diagnostic, ranges decoded independently."""
    return [
        (
            text[offset_of(text, d.range.start, encoding) : offset_of(text, d.range.end, encoding)],
            d.message,
        )
        for d in found
    ]


def open_settings(session, text: str, path=None, version: int = 1) -> str:
    uri = (path or session.settings_file).as_uri()
    session.open_uri(uri, text, language="json", version=version)
    return uri


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_each_problem_at_its_exact_range_in_every_encoding(start, kind):
    encoding = ENCODINGS[kind]
    session = await start(kind)
    uri = open_settings(session, BAD)
    found = await published(session, uri)
    assert found is not None
    assert spans(BAD, found, encoding) == [
        ('"Bad Name"', 'ignored 1 snippet entry: "Bad Name" (invalid name)'),
        ('""', 'ignored 1 snippet entry: "empty" (value must be a non-empty string)'),
        (
            '"true"',
            "`expandOnCompletion` must be true or false, not a string; ignoring it "
            "(snippets are inserted as markers)",
        ),
    ]
    bad = BAD.index('"Bad Name"')
    assert found[0].range == lsp_range(BAD, bad, bad + len('"Bad Name"'), encoding)
    assert {d.severity for d in found} == {types.DiagnosticSeverity.Warning}
    assert {d.source for d in found} == {"pi-simple-snippets"}


async def test_live_through_did_change_and_cleared_when_fixed(start):
    session = await start("visual-studio-code")
    uri = open_settings(session, BAD)
    assert len(await published(session, uri) or []) == 3
    # Rename the bad key in the buffer (incremental change, UTF-16 range): two are left.
    bad = BAD.index('"Bad Name"')
    session.change(
        uri,
        2,
        types.TextDocumentContentChangePartial(
            range=lsp_range(BAD, bad, bad + len('"Bad Name"'), "utf-16"), text='"bad-name"'
        ),
    )
    assert len(await published(session, uri) or []) == 2
    fine = json.dumps({"piSimpleSnippets": {"snippets": {"ok": "fine"}}, "theme": "x"})
    session.change(uri, 3, types.TextDocumentContentChangeWholeDocument(text=fine))
    assert await published(session, uri) == []  # cleared
    session.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await published(session, uri) == []


@pytest.mark.parametrize(
    ("text", "offset", "message"),
    [
        pytest.param('{"a": 1,}', 8, "Expected double-quoted property name", id="trailing-comma"),
        pytest.param('{"😀": 1 "b": 2}', 8, "Expected ',' or '}' after property value",
                     id="missing-comma-after-emoji"),
        pytest.param('{\n  "a": tru\n}', 12, "Unexpected token", id="bad-literal"),
        pytest.param('{"a": "中文', 9, "Unterminated string", id="end-of-text"),
    ],
)  # fmt: skip
async def test_invalid_json_at_the_parse_error(start, text, offset, message):
    session = await start("visual-studio-code")
    uri = open_settings(session, text)
    (found,) = await published(session, uri) or [None]
    assert found is not None
    assert found.range.start == lsp_position(text, offset, "utf-16")
    assert message in found.message and found.message.startswith("This file is not valid JSON")


async def test_a_duplicate_key_is_flagged_at_the_last_occurrence(start):
    text = '{"piSimpleSnippets": {"snippets": {"x": "", "x": ""}}}'
    session = await start("neovim")
    uri = open_settings(session, text)
    (found,) = await published(session, uri) or [None]
    assert found is not None
    last = text.rindex('""')
    assert found.range == lsp_range(text, last, last + 2, "utf-8")


async def test_an_escaped_key_is_flagged_over_its_escapes(start):
    text = '{"piSimpleSnippets": {"snippets": {"😀 B\\u0061d": "x"}}}'
    session = await start("visual-studio-code")
    uri = open_settings(session, text)
    (found,) = await published(session, uri) or [None]
    assert found is not None
    key = text.index('"😀 B\\u0061d"')
    assert found.range == lsp_range(text, key, key + len('"😀 B\\u0061d"'), "utf-16")
    assert '"😀 Bad" (invalid name)' in found.message


async def test_shortcut_hints_are_information(start):
    text = '{"piSimpleSnippets": {"shortcut": "ctrl+i"}}'
    session = await start("neovim")
    uri = open_settings(session, text)
    (found,) = await published(session, uri) or [None]
    assert found is not None and found.severity == types.DiagnosticSeverity.Information
    assert "Tab" in found.message


async def fixes(session, uri: str, diagnostic: types.Diagnostic) -> list[object]:
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return list(actions or [])


async def test_quick_fixes_are_applied_and_rechecked(start):
    session = await start("visual-studio-code")
    uri = open_settings(session, BAD)
    current = await published(session, uri) or []
    text, version, titles = BAD, 1, []
    while current:
        (action,) = await fixes(session, uri, current[0])
        assert isinstance(action, types.CodeAction) and action.kind == "quickfix"
        assert list(action.diagnostics or []) == [current[0]] and action.is_preferred
        assert action.edit is not None
        titles.append(action.title)
        (edits,) = document_edits(action.edit).values()
        text = apply_text_edits(text, edits, "utf-16")
        version += 1
        session.change(uri, version, types.TextDocumentContentChangeWholeDocument(text=text))
        after = await published(session, uri)
        assert after is not None and len(after) == len(current) - 1  # that one is gone
        current = after
    assert titles == [
        'Rename to "bad-name"',
        'Remove the empty snippet "empty"',
        "Use the boolean true",
    ]
    assert json.loads(text)["piSimpleSnippets"] == {
        "snippets": {"ok": "中文😀", "bad-name": "x"},
        "expandOnCompletion": True,
    }


async def test_a_stale_diagnostic_gets_no_fix(start):
    session = await start("visual-studio-code")
    uri = open_settings(session, BAD)
    (first, *_) = await published(session, uri) or []
    session.change(uri, 2, types.TextDocumentContentChangeWholeDocument(text="{}"))
    assert await fixes(session, uri, first) == []


async def test_other_json_documents_get_nothing(start):
    session = await start("neovim")
    uri = session.open("other.json", BAD, language="json")
    assert await published(session, uri) is None
    pi_elsewhere = session.workspace / "sub" / ".pi" / "settings.json"
    assert await published(session, open_settings(session, BAD, pi_elsewhere)) is None


@pytest.mark.parametrize("trusted", [True, False])
async def test_project_files_trusted_or_not_get_diagnostics(start, trusted):
    session = await start("neovim", init={"trustProjectSettings": trusted})
    project = session.workspace / ".pi" / "settings.json"
    uri = open_settings(session, BAD, project)
    assert len(await published(session, uri) or []) == 3


async def test_multi_root_each_folders_project_file(start, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    session = await start("visual-studio-code", folders=[one, two])
    for folder in (one, two):
        uri = open_settings(session, BAD, folder / ".pi" / "settings.json")
        assert len(await published(session, uri) or []) == 3


async def test_a_settings_file_gets_no_snippet_completion(start):
    """A `%name` typed into a snippet's text is not a marker anything expands."""
    session = await start("neovim", settings={"snippets": {"greet": "Hello"}})
    text = '{"piSimpleSnippets": {"snippets": {"greet": "Hello", "x": "see %gr"}}}'
    uri = open_settings(session, text)
    position = lsp_position(text, text.index("%gr") + 3, "utf-8")
    assert await session.complete(uri, position.line, position.character) is None
    other = session.open("prompt.md", "see %gr")
    result = await session.complete(other, 0, 7)
    assert result is not None and [i.label for i in result.items] == ["%greet"]
