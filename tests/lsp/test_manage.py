"""Managing snippets where they are used (docs/lsp.md, "Unknown markers: did you mean",
"Rename", "References", "Symbols"), against the real server, in every position encoding."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import ENCODINGS, apply_text_edits, document_edits, lsp_position, offset_of

#: Non-ASCII text before the keys; an escaped key; a duplicated key; CRLF line breaks.
FILE = (
    '{\r\n  "theme": "😀😀 中文",\r\n  "piSimpleSnippets": {\r\n    "snippets": {\r\n'
    '      "review": "Review this change 😀",\r\n      "re\\u0062ase": "Rebase it",\r\n'
    '      "dup": "first",\r\n      "tests": "Run the tests",\r\n      "dup": "second"\r\n'
    "    }\r\n  }\r\n}\r\n"
)
#: Markers of ``review`` Pi expands, and look-alikes it leaves alone.
PROMPT = "😀 中文 %review, (%review) x%review %%review --format=%review\n%review-"
OTHER = "中文，%review %tests"


async def settle(session) -> None:
    """Let background work (hints are computed after the event that asks for them)
    finish: a request queued behind it, then the loop's next turns."""
    await session.request("snippets/list", {})
    await asyncio.sleep(0.2)
    await session.request("snippets/list", {})


async def hints_for(session, uri: str, timeout: float = 10.0) -> list[types.Diagnostic]:
    """The next diagnostics published for ``uri``."""

    async def wait() -> list[types.Diagnostic]:
        while uri not in session.client.diagnostics:
            await asyncio.sleep(0.02)
        return list(session.client.diagnostics.pop(uri))

    return await asyncio.wait_for(wait(), timeout)


def covered(text: str, found: types.Diagnostic | types.Location, encoding: str) -> str:
    r = found.range
    return text[offset_of(text, r.start, encoding) : offset_of(text, r.end, encoding)]


async def setup(session) -> None:
    session.settings_file.write_text(FILE, encoding="utf-8")
    await session.request("snippets/reload", {})


# --------------------------------------------------------------------------- hints

TYPOS = "中文 %reveiw, (%tets) x%reveiw --format=%tets 100% %%reveiw %zzzzzz %review\n`%rebsae`"


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_a_typo_gets_one_hint_naming_the_snippet(start, kind):
    encoding = ENCODINGS[kind]
    session = await start(kind)
    await setup(session)
    uri = session.open("prompt.md", TYPOS)
    found = await hints_for(session, uri)
    assert [(covered(TYPOS, d, encoding), d.message) for d in found] == [
        ("%reveiw", "unknown snippet %reveiw; did you mean %review?"),
        ("%tets", "unknown snippet %tets; did you mean %tests?"),
        ("%rebsae", "unknown snippet %rebsae; did you mean %rebase?"),
    ]
    assert {d.severity for d in found} == {types.DiagnosticSeverity.Hint}


async def test_the_quick_fix_renames_the_marker_and_the_hint_goes(start):
    session = await start("visual-studio-code")
    await setup(session)
    text = "please %reveiw it"
    uri = session.open("prompt.md", text)
    (hint,) = await hints_for(session, uri)
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=hint.range,
            context=types.CodeActionContext(diagnostics=[hint]),
        )
    )
    fixes = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.kind == "quickfix"]
    (fix,) = fixes
    assert fix.title == "Change to %review" and fix.is_preferred
    assert fix.edit is not None
    (edits,) = document_edits(fix.edit).values()
    text = apply_text_edits(text, edits, "utf-16")
    assert text == "please %review it"
    session.change(uri, 2, types.TextDocumentContentChangeWholeDocument(text=text))
    assert await hints_for(session, uri) == []


async def test_hints_follow_reloads_and_close(start):
    session = await start("neovim")
    await setup(session)
    uri = session.open("prompt.md", "%reveiw")
    assert len(await hints_for(session, uri)) == 1
    session.write_settings({"snippets": {"review": "R", "reveiw": "typo kept on purpose"}})
    await session.request("snippets/reload", {})
    assert await hints_for(session, uri) == []
    session.write_settings({"snippets": {"review": "R"}})
    await session.request("snippets/reload", {})
    assert len(await hints_for(session, uri)) == 1
    session.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await hints_for(session, uri) == []


async def test_a_large_prompt_and_a_burst_of_changes_end_with_the_last_texts_hints(start):
    """A large document is scanned off the event loop; hints of a version the document
    has left are not sent, so what is shown last is the last text's."""
    session = await start("neovim")
    await setup(session)
    words = "word " * 20000  # ASCII: a column is a character in every encoding
    big = words + "%reveiw"
    uri = session.open("big.md", big)
    (hint,) = await hints_for(session, uri)
    assert hint.range == types.Range(types.Position(0, len(words)), types.Position(0, len(big)))
    for version in range(2, 12):
        typo = "%rebsae" if version == 11 else ("%tets" if version % 2 else "%reveiw %tets")
        text = words + typo
        session.change(uri, version, types.TextDocumentContentChangeWholeDocument(text=text))

    async def last_text_shown() -> None:
        while True:
            shown = await hints_for(session, uri)
            if [d.message for d in shown] == ["unknown snippet %rebsae; did you mean %rebase?"]:
                return

    await asyncio.wait_for(last_text_shown(), 10)
    await settle(session)
    assert uri not in session.client.diagnostics  # nothing older came after


async def test_the_option_turns_hints_off(start):
    session = await start("neovim", init={"unknownMarkerHints": False})
    await setup(session)
    uri = session.open("prompt.md", "%reveiw")
    await settle(session)
    assert uri not in session.client.diagnostics


async def test_a_client_without_diagnostics_gets_none(start):
    session = await start("plain")
    await setup(session)
    uri = session.open("prompt.md", "%reveiw")
    await settle(session)
    assert uri not in session.client.diagnostics


# --------------------------------------------------------------------------- rename


async def rename(session, uri: str, position: types.Position, new_name: str):
    return await session.client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position,
            new_name=new_name,
        )
    )


async def prepare(session, uri: str, position: types.Position):
    return await session.client.text_document_prepare_rename_async(
        types.PrepareRenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position
        )
    )


def at(text: str, needle: str, encoding: str, plus: int = 1) -> types.Position:
    return lsp_position(text, text.index(needle) + plus, encoding)


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_rename_from_a_marker_edits_the_key_and_every_use(start, kind):
    encoding = ENCODINGS[kind]
    session = await start(kind)
    await setup(session)
    uri = session.open("prompt.md", PROMPT)
    other = session.open("other.md", OTHER)
    spot = at(PROMPT, "(%review", encoding, plus=4)
    prepared = await prepare(session, uri, spot)
    assert isinstance(prepared, types.PrepareRenamePlaceholder)
    assert prepared.placeholder == "review"
    assert covered(PROMPT, prepared, encoding) == "review"
    edit = await rename(session, uri, spot, "code-review")
    edits = document_edits(edit)
    settings_uri = session.settings_file.as_uri()
    assert set(edits) == {settings_uri, uri, other}
    assert apply_text_edits(FILE, edits[settings_uri], encoding) == FILE.replace(
        '"review":', '"code-review":'
    )
    assert apply_text_edits(PROMPT, edits[uri], encoding) == (
        "😀 中文 %code-review, (%code-review) x%review %%review --format=%review\n%code-review-"
    )
    assert apply_text_edits(OTHER, edits[other], encoding) == "中文，%code-review %tests"


async def test_rename_from_a_key_renames_every_occurrence_and_unescapes(start):
    session = await start("visual-studio-code")
    await setup(session)
    settings_uri = session.settings_file.as_uri()
    session.open_uri(settings_uri, FILE, language="json")
    uri = session.open("prompt.md", "%dup and %rebase")
    spot = at(FILE, '"dup"', "utf-16", plus=2)
    prepared = await prepare(session, settings_uri, spot)
    assert isinstance(prepared, types.PrepareRenamePlaceholder) and prepared.placeholder == "dup"
    edits = document_edits(await rename(session, settings_uri, spot, "dup2"))
    assert apply_text_edits(FILE, edits[settings_uri], "utf-16") == FILE.replace(
        '"dup":', '"dup2":'
    )
    assert apply_text_edits("%dup and %rebase", edits[uri], "utf-16") == "%dup2 and %rebase"
    escaped = at(FILE, '"re\\u0062ase"', "utf-16", plus=3)
    edits = document_edits(await rename(session, settings_uri, escaped, "rebase-main"))
    assert apply_text_edits(FILE, edits[settings_uri], "utf-16") == FILE.replace(
        '"re\\u0062ase":', '"rebase-main":'
    )


async def test_the_open_settings_buffer_is_edited_at_its_version(start):
    session = await start("visual-studio-code")
    await setup(session)
    settings_uri = session.settings_file.as_uri()
    edited = FILE.replace('"theme"', '"theme2"')
    session.open_uri(settings_uri, edited, language="json", version=7)
    uri = session.open("prompt.md", "%tests")
    edit = await rename(session, uri, types.Position(0, 2), "run-tests")
    versions = {
        c.text_document.uri: c.text_document.version
        for c in edit.document_changes or []
        if isinstance(c, types.TextDocumentEdit)
    }
    assert versions == {settings_uri: 7, uri: 1}
    edits = document_edits(edit)
    assert apply_text_edits(edited, edits[settings_uri], "utf-16") == edited.replace(
        '"tests":', '"run-tests":'
    )


@pytest.mark.parametrize(
    ("new_name", "reason"),
    [
        ("Code Review", "is not a valid snippet name"),
        ("-x", "is not a valid snippet name"),
        ("tests", 'a snippet named "tests" already exists'),
        ("review", "is named review already"),
    ],
)
async def test_a_bad_new_name_is_refused_saying_why(shared, new_name, reason):
    session = await shared("neovim", settings={"snippets": {"review": "R", "tests": "T"}})
    uri = session.open("prompt.md", "%review")
    with pytest.raises(JsonRpcException) as caught:
        await rename(session, uri, types.Position(0, 1), new_name)
    assert reason in caught.value.message


async def test_a_client_layer_snippet_is_refused(shared):
    session = await shared("neovim", init={"piSimpleSnippets": {"snippets": {"mine": "M"}}})
    uri = session.open("prompt.md", "%mine")
    with pytest.raises(JsonRpcException) as caught:
        await prepare(session, uri, types.Position(0, 1))
    assert "editor's settings (initializationOptions)" in caught.value.message


async def test_nothing_to_rename_off_a_marker(shared):
    session = await shared("neovim", settings={"snippets": {"review": "R"}})
    uri = session.open("prompt.md", "x%review %%review plain")
    for column in (3, 11, 20):
        assert await prepare(session, uri, types.Position(0, column)) is None
    with pytest.raises(JsonRpcException) as caught:
        await rename(session, uri, types.Position(0, 3), "other")
    assert "no snippet marker or snippet key here" in caught.value.message


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_references_are_the_uses_and_the_key(start, kind):
    encoding = ENCODINGS[kind]
    session = await start(kind)
    await setup(session)
    uri = session.open("prompt.md", PROMPT)
    other = session.open("other.md", OTHER)
    found = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=at(PROMPT, "%review", encoding),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert found is not None
    texts = {uri: PROMPT, other: OTHER, session.settings_file.as_uri(): FILE}
    assert [(loc.uri, covered(texts[loc.uri], loc, encoding)) for loc in found] == [
        (session.settings_file.as_uri(), '"review"'),
        (uri, "%review"),
        (uri, "%review"),
        (uri, "%review"),
        (other, "%review"),
    ]
    without = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=at(PROMPT, "%review", encoding),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert without == found[1:]


# --------------------------------------------------------------------------- symbols


async def test_workspace_symbols_by_pis_ranking_at_their_keys(start):
    session = await start("visual-studio-code")
    await setup(session)
    found = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="re"))
    assert found is not None
    names = [s.name for s in found]
    assert names == ["%rebase", "%review"]  # Pi's ranking: equal scores, the names' order
    (review,) = [s for s in found if s.name == "%review"]
    assert isinstance(review, types.SymbolInformation)
    assert review.container_name == "Review this change 😀"
    assert review.location.uri == session.settings_file.as_uri()
    assert covered(FILE, review.location, "utf-16") == '"review"'
    everything = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    assert [s.name for s in everything or []] == ["%dup", "%rebase", "%review", "%tests"]
    dup = next(s for s in everything or [] if s.name == "%dup")
    assert dup.location.range.start == at(FILE, '"dup": "second"', "utf-16", plus=0)


@pytest.mark.parametrize("kind", ["visual-studio-code", "plain"])
async def test_document_symbols_outline_a_settings_file(start, kind):
    session = await start(kind)
    await setup(session)
    settings_uri = session.settings_file.as_uri()
    session.open_uri(settings_uri, FILE, language="json")
    found = await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=settings_uri))
    )
    assert found is not None
    assert [s.name for s in found] == ["review", "rebase", "dup", "tests", "dup"]
    first = found[0]
    if kind == "plain":
        assert isinstance(first, types.SymbolInformation)
        assert covered(FILE, first.location, "utf-16") == '"review"'
    else:
        assert isinstance(first, types.DocumentSymbol)
        assert first.detail == "Review this change 😀"
        assert covered(FILE, first, "utf-16") == '"review": "Review this change 😀"'
        selection = types.Location(uri=settings_uri, range=first.selection_range)
        assert covered(FILE, selection, "utf-16") == '"review"'
    prompt = session.open("prompt.md", "%review")
    assert (
        await session.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=prompt))
        )
        is None
    )


def test_the_file_is_valid_json():
    assert json.loads(FILE)["piSimpleSnippets"]["snippets"]["dup"] == "second"
