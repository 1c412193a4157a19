"""What the client says at ``initialize``: options and capabilities, parsed once.

docs/lsp.md, "initializationOptions" and "Capabilities". A bad option value is named
and its default used; capabilities are read from their JSON by pure rules.
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.protocol import default_converter
from pytest_lsp import client_capabilities

from pi_snippets_lsp.lsp.options import (
    DEFAULT_POLL_INTERVAL,
    ClientFeatures,
    InitializationOptions,
    choose_encoding,
    parse_initialization_options,
)

# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(None, InitializationOptions(), id="absent"),
        pytest.param({}, InitializationOptions(), id="empty"),
        pytest.param(
            {
                "piSimpleSnippets": {"snippets": {"a": "b"}},
                "trustProjectSettings": True,
                "pollInterval": 0.25,
                "notifications": ["snippets/didLoad"],
                "unknownMarkerHints": False,
            },
            InitializationOptions(
                pi_simple_snippets={"snippets": {"a": "b"}},
                trust_project_settings=True,
                poll_interval=0.25,
                notifications=frozenset({"snippets/didLoad"}),
                unknown_marker_hints=False,
            ),
            id="every-option",
        ),
        pytest.param({"pollInterval": 0}, InitializationOptions(poll_interval=0), id="poll-off"),
        pytest.param({"pollInterval": 2}, InitializationOptions(poll_interval=2.0), id="int-poll"),
        pytest.param({"otherTool": 1}, InitializationOptions(), id="unknown-keys-ignored"),
        pytest.param(
            {"piSimpleSnippets": "not an object"},
            InitializationOptions(pi_simple_snippets="not an object"),
            id="namespace-validated-later-with-the-settings",
        ),
    ],
)
def test_good_options_are_taken_as_given(raw: object, expected: InitializationOptions) -> None:
    assert parse_initialization_options(raw) == (expected, ())


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param(
            {"pollInterval": "fast"},
            'initializationOptions.pollInterval must be a number of seconds, not "fast"; using 1.0',
            id="poll-interval-string",
        ),
        pytest.param(
            {"pollInterval": True},
            "initializationOptions.pollInterval must be a number of seconds, not true; using 1.0",
            id="poll-interval-bool-is-no-number",
        ),
        pytest.param(
            {"pollInterval": -1},
            "initializationOptions.pollInterval must be greater than or equal to 0, not -1; "
            "using 1.0",
            id="poll-interval-negative",
        ),
        pytest.param(
            {"pollInterval": float("inf")},
            "initializationOptions.pollInterval must be a finite number of seconds, "
            "not Infinity; using 1.0",
            id="poll-interval-infinite",
        ),
        pytest.param(
            {"trustProjectSettings": "yes"},
            'initializationOptions.trustProjectSettings must be true or false, not "yes"; '
            "using false",
            id="trust-string",
        ),
        pytest.param(
            {"trustProjectSettings": 1},
            "initializationOptions.trustProjectSettings must be true or false, not 1; using false",
            id="trust-number-is-no-bool",
        ),
        pytest.param(
            {"notifications": "snippets/didLoad"},
            "initializationOptions.notifications must be a list of method names, not "
            '"snippets/didLoad"; using []',
            id="notifications-string",
        ),
        pytest.param(
            {"unknownMarkerHints": "off"},
            'initializationOptions.unknownMarkerHints must be true or false, not "off"; using true',
            id="hints-not-a-boolean",
        ),
        pytest.param(
            [1, 2],
            "initializationOptions must be an object, not [1, 2]; ignoring it",
            id="not-an-object",
        ),
    ],
)
def test_a_bad_value_is_named_and_its_default_used(raw: object, problem: str) -> None:
    options, problems = parse_initialization_options(raw)
    assert problems == (problem,)
    assert options == InitializationOptions()


def test_one_bad_value_keeps_the_good_ones() -> None:
    options, problems = parse_initialization_options(
        {"pollInterval": "x", "trustProjectSettings": True, "piSimpleSnippets": {"a": 1}}
    )
    assert options.poll_interval == DEFAULT_POLL_INTERVAL
    assert options.trust_project_settings is True
    assert options.pi_simple_snippets == {"a": 1}
    assert len(problems) == 1


def test_unknown_notifications_are_named_and_the_known_kept() -> None:
    options, problems = parse_initialization_options(
        {"notifications": ["snippets/didLoad", "snippets/didload"]}
    )
    assert options.notifications == frozenset({"snippets/didLoad"})
    assert problems == (
        "initializationOptions.notifications: ignoring unknown snippets/didload "
        "(known: snippets/didLoad)",
    )


def test_a_long_bad_value_is_shortened_in_the_message() -> None:
    _, (problem,) = parse_initialization_options({"pollInterval": "x" * 100})
    assert '"xxxxxxxxxx' in problem and "…" in problem and len(problem) < 150


def test_long_values_are_shown_whole_up_to_40_characters() -> None:
    forty = "x" * 38  # 40 with the quotes
    _, (problem,) = parse_initialization_options({"pollInterval": forty})
    assert f'not "{forty}";' in problem


# --------------------------------------------------------------------------- capabilities


def caps_json(kind: str) -> object:
    return default_converter().unstructure(client_capabilities(kind))


@pytest.mark.parametrize(
    ("capabilities", "expected"),
    [
        pytest.param({}, ClientFeatures(), id="bare-client"),
        pytest.param(None, ClientFeatures(), id="null"),
        pytest.param({"textDocument": 5}, ClientFeatures(), id="malformed-parts-mean-no"),
        pytest.param(
            {"textDocument": {"completion": {"dynamicRegistration": True}}},
            ClientFeatures(completion_dynamic=True),
            id="dynamic-completion",
        ),
        pytest.param(
            {"textDocument": {"completion": {"dynamicRegistration": "yes"}}},
            ClientFeatures(),
            id="only-true-is-true",
        ),
        pytest.param(
            {"textDocument": {"completion": {"completionItem": {"snippetSupport": True}}}},
            ClientFeatures(),
            id="snippet-support-changes-nothing",  # items are plain text for every client
        ),
        pytest.param(
            {
                "textDocument": {
                    "completion": {
                        "completionItem": {"documentationFormat": ["plaintext", "markdown"]}
                    }
                }
            },
            ClientFeatures(completion_markdown=True),
            id="markdown-documentation",
        ),
        pytest.param(
            {"textDocument": {"completion": {"completionList": {"itemDefaults": ["editRange"]}}}},
            ClientFeatures(item_defaults=frozenset({"editRange"})),
            id="item-defaults",
        ),
        pytest.param(
            {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}},
            ClientFeatures(watchers_dynamic=True),
            id="watchers",
        ),
        pytest.param(
            {"workspace": {"configuration": True, "applyEdit": True}},
            ClientFeatures(configuration=True, apply_edit=True),
            id="configuration-and-apply-edit",
        ),
        pytest.param(
            {"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
            ClientFeatures(hover_markdown=True),
            id="hover-markdown",
        ),
        pytest.param(
            {
                "workspace": {
                    "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]}
                }
            },
            ClientFeatures(document_changes=True, create_files=True),
            id="workspace-edits",
        ),
        pytest.param(
            {"textDocument": {"semanticTokens": {"requests": {"full": True}}}},
            ClientFeatures(semantic_tokens=True),
            id="semantic-tokens",
        ),
        pytest.param(
            {
                "textDocument": {
                    "publishDiagnostics": {},
                    "rename": {"prepareSupport": True},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                }
            },
            ClientFeatures(
                publish_diagnostics=True, prepare_rename=True, hierarchical_symbols=True
            ),
            id="diagnostics-rename-symbols",
        ),
        pytest.param(
            {"textDocument": {"publishDiagnostics": True, "rename": {"prepareSupport": 1}}},
            ClientFeatures(),
            id="diagnostics-must-be-an-object-prepare-true",
        ),
        pytest.param(
            {"textDocument": {"semanticTokens": True}},
            ClientFeatures(),
            id="semantic-tokens-must-be-an-object",
        ),
        pytest.param(
            {"workspace": {"semanticTokens": {"refreshSupport": True}}},
            ClientFeatures(semantic_tokens_refresh=True),
            id="semantic-tokens-refresh",
        ),
        pytest.param(
            {
                "textDocument": {
                    "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": []}}}
                }
            },
            ClientFeatures(code_action_literals=True),
            id="code-action-literals",
        ),
        pytest.param(
            {"textDocument": {"codeAction": {"dynamicRegistration": True}}},
            ClientFeatures(),
            id="code-actions-without-literals-are-commands-only",
        ),
        pytest.param(
            {"general": {"positionEncodings": ["utf-32", "utf-8"]}},
            ClientFeatures(encoding="utf-32"),
            id="first-offered-encoding",
        ),
    ],
)
def test_client_features_from_capabilities(capabilities: object, expected: ClientFeatures) -> None:
    assert ClientFeatures.from_json(capabilities) == expected


def test_canned_editors() -> None:
    neovim = ClientFeatures.from_json(caps_json("neovim"))
    assert neovim.completion_markdown and "insertTextMode" in neovim.item_defaults
    assert not neovim.completion_dynamic
    assert neovim.encoding == "utf-8"
    assert neovim.hover_markdown and neovim.apply_edit and neovim.code_action_literals
    assert neovim.semantic_tokens and neovim.semantic_tokens_refresh
    vscode = ClientFeatures.from_json(caps_json("visual-studio-code"))
    assert vscode.completion_dynamic and vscode.watchers_dynamic and vscode.configuration
    assert vscode.hover_markdown and vscode.apply_edit and vscode.code_action_literals
    assert vscode.semantic_tokens and vscode.semantic_tokens_refresh
    assert vscode.document_changes and vscode.create_files
    assert vscode.encoding == "utf-16"


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        pytest.param((), "utf-16", id="none-offered-means-lsp-default"),
        pytest.param(("utf-8",), "utf-8", id="utf-8"),
        pytest.param(("latin-1", "utf-32", "utf-8"), "utf-32", id="unknown-skipped"),
        pytest.param(("latin-1",), "utf-16", id="nothing-known"),
    ],
)
def test_choose_encoding(offered: tuple[str, ...], chosen: str) -> None:
    assert choose_encoding(offered) == chosen


@pytest.mark.parametrize("kind", ["neovim", "visual-studio-code", "emacs"])
def test_encoding_choice_is_pygls_choice(kind: str) -> None:
    """The server reports pygls's choice in ``positionEncoding``; ours must be the same."""
    caps = client_capabilities(kind)
    pygls_choice = ServerCapabilitiesBuilder.choose_position_encoding(caps)
    assert ClientFeatures.from_json(caps_json(kind)).encoding == str(
        getattr(pygls_choice, "value", pygls_choice)
    )


def test_lsprotocol_capabilities_are_plain_json_after_unstructuring() -> None:
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            completion=types.CompletionClientCapabilities(dynamic_registration=True)
        )
    )
    assert ClientFeatures.from_json(default_converter().unstructure(caps)).completion_dynamic


def test_every_unknown_notification_is_named() -> None:
    _, problems = parse_initialization_options(
        {"notifications": ["snippets/didLoad", "b/two", "a/one"]}
    )
    assert problems == (
        "initializationOptions.notifications: ignoring unknown a/one, b/two "
        "(known: snippets/didLoad)",
    )


def test_a_bad_value_is_shown_as_typed_not_escaped() -> None:
    """The user reads the value as they wrote it: ``"schnell-ä"``, not ``"schnell-\\u00e4"``."""
    _, problems = parse_initialization_options({"pollInterval": "schnell-ä"})
    assert problems == (
        'initializationOptions.pollInterval must be a number of seconds, not "schnell-ä"; '
        "using 1.0",
    )


def test_a_value_longer_than_40_characters_is_cut_to_40_with_an_ellipsis() -> None:
    """41 characters of JSON are too many: 39 of them and "…" make 40."""
    value = "x" * 39  # 41 with the quotes
    _, problems = parse_initialization_options({"pollInterval": value})
    shown = '"' + "x" * 38 + "…"
    assert len(shown) == 40
    assert problems == (
        f"initializationOptions.pollInterval must be a number of seconds, not {shown}; using 1.0",
    )
