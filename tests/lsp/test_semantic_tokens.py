"""Semantic tokens (docs/lsp.md, "Semantic tokens"): the markers that will expand and the
escapes, with standard types; nothing else; full and range; refreshed on reload. Also the
capabilities each kind of client is offered for the editor features."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from pi_snippets_lsp.core.semantic_tokens import semantic_tokens
from pi_snippets_lsp.core.serving import OFF_LOOP_CHARS
from pi_snippets_lsp.lsp.handlers.semantic_tokens import tokens_json

from .conftest import ENCODINGS, capabilities, lsp_position, lsp_range, units

SNIPPETS = {"greet": "Hello", "a": "AAA"}
TEXT = "😀 中文 %greet x%greet %Greet\r\n한국어，%%a %nope (%a)\r\n%a"


async def full(session, uri: str) -> list[int]:
    result = await session.client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(result, types.SemanticTokens)
    return list(result.data)


def expected_tokens(text: str, spans: list[tuple[str, int, str]], encoding: str) -> list[int]:
    """Encode (needle, occurrence index, type) the LSP way, counting with Python codecs."""
    data, last_line, last_char = [], 0, 0
    types_ = {"macro": 0, "string": 1}
    for needle, nth, kind in spans:
        start = -1
        for _ in range(nth + 1):
            start = text.index(needle, start + 1)
        position = lsp_position(text, start, encoding)
        delta_line = position.line - last_line
        delta = position.character - (last_char if delta_line == 0 else 0)
        data += [delta_line, delta, units(needle, encoding), types_[kind], 0]
        last_line, last_char = position.line, position.character
    return data


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_full_tokens_are_the_markers_and_escapes_only(shared, kind):
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    assert await full(session, uri) == expected_tokens(
        TEXT,
        [("%greet", 0, "macro"), ("%%a", 0, "string"), ("%a", 1, "macro"), ("%a", 2, "macro")],
        encoding,
    )


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_range_tokens_are_those_in_the_range(shared, kind):
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", TEXT)
    # From inside the escape to the end of line 1: the escape (cut) and (%a).
    first = TEXT.index("%%a") + 1
    last = TEXT.index("(%a)") + 4
    result = await session.client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=lsp_range(TEXT, first, last, encoding),
        )
    )
    assert isinstance(result, types.SemanticTokens)
    whole = expected_tokens(TEXT, [("%%a", 0, "string"), ("%a", 1, "macro")], encoding)
    assert list(result.data) == whole


async def test_tokens_follow_edits_and_reloads_and_the_client_is_asked_to_refresh(start):
    session = await start("neovim", settings={"snippets": SNIPPETS})
    uri = session.open("prompt.md", "%new %a")
    assert await full(session, uri) == [0, 5, 2, 0, 0]
    session.change(
        uri,
        2,
        types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="%greet "
        ),
    )
    assert await full(session, uri) == [0, 0, 6, 0, 0, 0, 12, 2, 0, 0]
    refreshes = session.token_refreshes
    session.write_settings({"snippets": {**SNIPPETS, "new": "now configured"}})
    await session.request("snippets/reload", {})
    for _ in range(100):
        if session.token_refreshes > refreshes:
            break
        await asyncio.sleep(0.05)
    assert session.token_refreshes > refreshes
    assert await full(session, uri) == [0, 0, 6, 0, 0, 0, 7, 4, 0, 0, 0, 5, 2, 0, 0]


async def test_nothing_configured_means_no_token(shared):
    session = await shared("neovim")
    uri = session.open("prompt.md", "%%a %a")
    assert await full(session, uri) == []


async def test_settings_files_have_no_tokens(start):
    session = await start("neovim", settings={"snippets": {"a": "x", "b": "see %a"}})
    uri = session.settings_file.as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="json", version=1, text=session.settings_file.read_text()
            )
        )
    )
    result = await session.client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert result is None


#: A document the server computes on a worker thread (over ``core.serving.OFF_LOOP_CHARS``):
#: columns past the numerals the answer keeps written (4096), many lines and windows.
LARGE = "".join(f"{'x' * (13 * i)} %a (%greet)\r\n\n中 %%a{'😀' * i}\r%a " for i in range(700))


@pytest.mark.parametrize("kind", ENCODINGS)
async def test_a_large_documents_tokens_are_written_whole(shared, kind):
    assert len(LARGE) > OFF_LOOP_CHARS
    encoding = ENCODINGS[kind]
    session = await shared(kind, settings={"snippets": SNIPPETS})
    uri = session.open("large.md", LARGE)
    data = await full(session, uri)
    assert data == semantic_tokens(LARGE, SNIPPETS, encoding)
    assert len(data) == 5 * 4 * 700
    assert max(data[1::5]) > 4096


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no marker",
        "%a",
        "%%a x %a\n" * 3000,
        ("%a " + " " * 9) * 3000,
        LARGE,
        " " * 100_000 + "%a",
        "%a %a" * 5000 + " " * 255 + "%a",
        "%a %a" * 5000 + " " * 250 + "%a",
    ],
)
def test_the_answer_is_the_json_of_the_tokens(text: str) -> None:
    written = tokens_json(text, SNIPPETS, "utf-16")
    assert json.loads(written) == {"data": semantic_tokens(text, SNIPPETS, "utf-16")}
    assert " " not in written


# --------------------------------------------------------------------------- capabilities


async def initialize(start, caps: types.ClientCapabilities) -> types.ServerCapabilities:
    session = await start("plain", initialize=False)
    result = await session.client.initialize_session(
        types.InitializeParams(capabilities=caps, initialization_options={"pollInterval": 0})
    )
    return result.capabilities


async def test_capabilities_of_a_full_client(start):
    caps = await initialize(start, capabilities("visual-studio-code"))
    assert caps.hover_provider is True
    assert caps.definition_provider is True
    tokens = caps.semantic_tokens_provider
    assert isinstance(tokens, types.SemanticTokensOptions)
    assert list(tokens.legend.token_types) == ["macro", "string"]
    assert list(tokens.legend.token_modifiers) == []
    assert tokens.full is True and tokens.range is True
    actions = caps.code_action_provider
    assert isinstance(actions, types.CodeActionOptions)
    assert sorted(actions.code_action_kinds or []) == ["quickfix", "refactor", "refactor.rewrite"]
    assert caps.execute_command_provider is not None
    assert sorted(caps.execute_command_provider.commands) == [
        "pi-snippets.editSnippet",
        "pi-snippets.expandDocument",
        "pi-snippets.saveSnippet",
        "pi-snippets.setSnippetValue",
    ]


async def test_a_client_without_literals_gets_commands_only(start):
    caps = capabilities("visual-studio-code")
    assert caps.text_document is not None and caps.text_document.code_action is not None
    caps.text_document.code_action.code_action_literal_support = None
    assert (await initialize(start, caps)).code_action_provider is True


async def test_capabilities_of_a_bare_client_are_only_what_it_can_use(start):
    caps = await initialize(start, types.ClientCapabilities())
    assert caps.hover_provider is True and caps.definition_provider is True
    assert caps.semantic_tokens_provider is None  # it never asks for them
    assert caps.code_action_provider is None  # it can take neither edits nor commands
    assert caps.execute_command_provider is not None
    assert list(caps.execute_command_provider.commands) == []  # it cannot apply their edits
