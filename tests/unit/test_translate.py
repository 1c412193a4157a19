"""The LSP shapes of completion items and the client capabilities they depend on.

docs/lsp.md, "Completion": plain text inserted as is, the value shown literally, the
preview on the row and what accepting does in ``detail``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.protocol import default_converter

from pi_snippets_lsp.client.answers import parse_suggestions
from pi_snippets_lsp.core.completion import Suggestion, popup, suggest
from pi_snippets_lsp.core.config import Layer, validate_layers
from pi_snippets_lsp.core.documents import Document
from pi_snippets_lsp.core.snippet import normalize_newlines, preview
from pi_snippets_lsp.lsp.options import ClientFeatures
from pi_snippets_lsp.lsp.translate import completion_list, literal_markdown

from .conftest import examples


def suggestion(value: str, insert: str, name: str = "rev") -> Suggestion:
    return Suggestion(
        name=name, value=value, source="s.json", rank=0, preview="p", insert_text=insert
    )


# --------------------------------------------------------------------------- detail


@pytest.mark.parametrize(
    ("insert", "detail"),
    [
        pytest.param("%rev", "Inserts %rev", id="marker"),
        pytest.param("Review this", "Inserts the text (1 line)", id="one-line"),
        pytest.param("a\nb", "Inserts the text (2 lines)", id="two-lines"),
        pytest.param("a\n", "Inserts the text (2 lines)", id="trailing-newline"),
        pytest.param("a\n\n\nb", "Inserts the text (4 lines)", id="blank-lines"),
    ],
)
def test_detail_says_what_accepting_inserts(insert: str, detail: str) -> None:
    assert suggestion("whatever", insert).accept_summary == detail


# --------------------------------------------------------------------------- documentation


@pytest.mark.parametrize(
    ("value", "block"),
    [
        pytest.param("plain", "```text\nplain\n```", id="no-backticks"),
        pytest.param("`x`", "```text\n`x`\n```", id="one-backtick"),
        pytest.param("a ``` b", "````text\na ``` b\n````", id="three-backticks"),
        pytest.param("`````", "``````text\n`````\n``````", id="five-backticks"),
        pytest.param("a `` b", "```text\na `` b\n```", id="two-backticks"),
        pytest.param("````` a ```", "``````text\n````` a ```\n``````", id="the-longest-run-counts"),
        pytest.param("# h\n* i\n\tj", "```text\n# h\n* i\n\tj\n```", id="markdown-syntax"),
    ],
)
def test_literal_markdown_fences_longer_than_any_backtick_run(value: str, block: str) -> None:
    assert literal_markdown(value) == block


@given(st.text(alphabet="`ab\n \t~*#", max_size=40))
def test_no_line_of_the_value_can_close_the_fence(value: str) -> None:
    block = literal_markdown(value)
    fence = block.split("text\n", 1)[0]
    assert len(fence) >= 3 and set(fence) == {"`"}
    assert block == f"{fence}text\n{value}\n{fence}"
    for line in value.split("\n"):
        # CommonMark: a closing fence is a run of at least as many backticks.
        closing = " {0,3}`{" + str(len(fence)) + ",} *"
        assert not re.fullmatch(closing, line)


# --------------------------------------------------------------------------- items


def items_for(features: ClientFeatures, expand: bool = True) -> dict[str, Any]:
    namespace = {
        "snippets": {"rev": "Review $HOME:\n\t`x` }\nend", "tdd": "Tests"},
        "expandOnCompletion": expand,
    }
    config = validate_layers([Layer(source="s.json", settings={"piSimpleSnippets": namespace})])
    before = "  - %"
    listed = popup(before, config)
    assert listed is not None
    encoded = completion_list(listed, 3, before, "utf-16", features)
    assert encoded.isascii()  # non-ASCII characters go as JSON escapes
    result: dict[str, Any] = json.loads(encoded)
    return result


FEATURES = {
    "bare": ClientFeatures(),
    "markdown-and-defaults": ClientFeatures(
        completion_markdown=True, item_defaults=frozenset({"insertTextMode", "editRange"})
    ),
}


@pytest.mark.parametrize("features", FEATURES.values(), ids=FEATURES.keys())
def test_items_are_plain_text_inserted_as_is(features: ClientFeatures) -> None:
    result = items_for(features)
    for item in result["items"]:
        assert item["insertTextFormat"] == types.InsertTextFormat.PlainText
        assert item["insertTextMode"] == types.InsertTextMode.AsIs
    (rev, _) = result["items"]
    assert rev["textEdit"] == {
        "range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 5}},
        "newText": "Review $HOME:\n\t`x` }\nend",
    }


def test_item_defaults_only_for_clients_that_take_them() -> None:
    assert "itemDefaults" not in items_for(FEATURES["bare"])
    assert items_for(FEATURES["markdown-and-defaults"])["itemDefaults"] == {
        "insertTextMode": types.InsertTextMode.AsIs
    }


def test_item_shape_for_a_markdown_client() -> None:
    result = items_for(FEATURES["markdown-and-defaults"])
    (rev, _) = result["items"]
    assert rev == {
        "label": "%rev",
        "labelDetails": {"description": "Review $HOME: `x` } end"},
        "kind": types.CompletionItemKind.Snippet,
        "detail": "Inserts the text (3 lines)",
        "documentation": {
            "kind": "markdown",
            "value": "```text\nReview $HOME:\n\t`x` }\nend\n```",
        },
        "sortText": "0000",
        "filterText": "%rev",
        "insertTextFormat": types.InsertTextFormat.PlainText,
        "insertTextMode": types.InsertTextMode.AsIs,
        "textEdit": {
            "range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 5}},
            "newText": "Review $HOME:\n\t`x` }\nend",
        },
        "data": {"source": "s.json"},
    }
    assert result["isIncomplete"] is False


def test_the_list_is_a_valid_lsp_completion_list() -> None:
    """Plain JSON for speed, but exactly what lsprotocol's types describe."""
    result = items_for(FEATURES["markdown-and-defaults"])
    structured = default_converter().structure(result, types.CompletionList)
    assert default_converter().unstructure(structured) == result


def test_item_shape_for_a_plain_client() -> None:
    (rev, tdd) = items_for(FEATURES["bare"], expand=False)["items"]
    assert rev["documentation"] == "Review $HOME:\n\t`x` }\nend"
    assert rev["detail"] == "Inserts %rev"
    assert tdd["textEdit"]["newText"] == "%tdd"


# --------------------------------------------------------------------------- capabilities


@pytest.mark.parametrize(
    ("capabilities", "markdown", "defaults"),
    [
        pytest.param({}, False, frozenset(), id="nothing"),
        pytest.param(
            {
                "textDocument": {
                    "completion": {"completionItem": {"documentationFormat": ["markdown"]}}
                }
            },
            True,
            frozenset(),
            id="markdown-docs",
        ),
        pytest.param(
            {
                "textDocument": {
                    "completion": {"completionItem": {"documentationFormat": "markdown"}}
                }
            },
            False,
            frozenset(),
            id="format-not-a-list",
        ),
        pytest.param(
            {
                "textDocument": {
                    "completion": {"completionList": {"itemDefaults": ["insertTextMode", 3]}}
                }
            },
            False,
            frozenset({"insertTextMode"}),
            id="item-defaults",
        ),
        pytest.param({"textDocument": []}, False, frozenset(), id="malformed"),
    ],
)
def test_completion_capabilities_are_read_once(
    capabilities: object, markdown: bool, defaults: frozenset[str]
) -> None:
    features = ClientFeatures.from_json(capabilities)
    assert features.completion_markdown is markdown
    assert features.item_defaults == defaults


@settings(max_examples=examples(200))
@given(
    value=st.text()
    | st.lists(
        st.sampled_from(
            ['"', "\\", "\ud800", "\udfff", "😀", "\x00", "\u2028", "é", "a", "\r\n", "\r"]
        )
    ).map("".join),
    source=st.text(),
)
@example(value="\ud800\udfff", source="\ud800")
def test_the_encoded_list_carries_any_text_exactly(value: str, source: str) -> None:
    """Quotes, backslashes, control characters, emoji and lone surrogates (JSON allows
    ``"\\ud800"`` in a settings file) arrive as configured, in every field: exactly what
    JSON carries of them (a high surrogate followed by a low one, configured apart, is one
    character to any JSON reader, the settings file's included)."""

    def carried(text: str) -> object:
        return json.loads(json.dumps(text))

    config = validate_layers(
        [
            Layer(
                source=source,
                settings={
                    "piSimpleSnippets": {"snippets": {"x": value}, "expandOnCompletion": True}
                },
            )
        ]
    )
    if not config.snippets:
        return  # a value the contract rejects (blank)
    listed = popup("%x", config)
    assert listed is not None
    encoded = completion_list(listed, 0, "%x", "utf-16", ClientFeatures())
    (item,) = json.loads(encoded)["items"]
    assert item["textEdit"]["newText"] == carried(normalize_newlines(value))
    assert item["documentation"] == carried(value)
    assert item["data"] == {"source": carried(source)}
    assert item["labelDetails"]["description"] == carried(preview(value))


def test_a_snippet_listed_again_at_another_rank_says_that_rank() -> None:
    """Items are encoded once per snippet and reused: the rank is the request's."""
    namespace = {"snippets": {"ab": "A", "b": "B"}}
    config = validate_layers([Layer(source="s.json", settings={"piSimpleSnippets": namespace})])
    first = popup("%", config)
    second = popup("%b", config)
    assert first is not None and second is not None
    listed = json.loads(completion_list(first, 0, "%", "utf-16", ClientFeatures()))
    again = json.loads(completion_list(second, 0, "%b", "utf-16", ClientFeatures()))
    assert [(i["label"], i["sortText"]) for i in listed["items"]] == [
        ("%ab", "0000"),
        ("%b", "0001"),
    ]
    assert [(i["label"], i["sortText"]) for i in again["items"]] == [
        ("%b", "0000"),
        ("%ab", "0001"),
    ]


@pytest.mark.parametrize("markdown", [False, True])
def test_the_same_snippet_under_other_settings_is_encoded_for_them(markdown: bool) -> None:
    """Items are kept per snippet, with what accepting inserts and the documentation's
    kind: the same snippet with ``expandOnCompletion`` off, or for a client of the other
    kind, is another item."""
    items = []
    for expand in (True, False, True):
        namespace = {"snippets": {"ab": "A\r\nB"}, "expandOnCompletion": expand}
        config = validate_layers([Layer(source="s.json", settings={"piSimpleSnippets": namespace})])
        for client_markdown in (markdown, not markdown):
            listed = popup("%a", config)
            assert listed is not None
            features = ClientFeatures(completion_markdown=client_markdown)
            (item,) = json.loads(completion_list(listed, 0, "%a", "utf-16", features))["items"]
            items.append((item["textEdit"]["newText"], item["documentation"], item["detail"]))
    fenced = {"kind": "markdown", "value": "```text\nA\r\nB\n```"}
    plain, marked = ("A\r\nB", fenced) if not markdown else (fenced, "A\r\nB")
    text, marker = ("A\nB", "Inserts the text (2 lines)"), ("%ab", "Inserts %ab")
    assert items == [
        (text[0], plain, text[1]),
        (text[0], marked, text[1]),
        (marker[0], plain, marker[1]),
        (marker[0], marked, marker[1]),
        (text[0], plain, text[1]),
        (text[0], marked, text[1]),
    ]


@settings(max_examples=examples(100))
@given(
    snippets=st.dictionaries(
        st.text(alphabet="abc-", min_size=1, max_size=4),
        st.text(alphabet='a `%\n\r\t"\\é😀', max_size=20),
        min_size=1,
        max_size=8,
    ),
    expand=st.booleans(),
    query=st.text(alphabet="abc", max_size=2),
)
def test_the_server_lists_what_the_api_suggests(
    snippets: dict[str, str], expand: bool, query: str
) -> None:
    """One entry, two carriers: the server's items, parsed back by the client, are the
    in-process API's ``Suggestions`` (name, text, source, rank, preview, insert)."""
    namespace = {"snippets": snippets, "expandOnCompletion": expand}
    config = validate_layers([Layer(source="s.json", settings={"piSimpleSnippets": namespace})])
    before = "say %" + query
    listed = popup(before, config)
    if listed is None:
        return  # every value blank: nothing configured
    encoded = completion_list(listed, 0, before, "utf-16", ClientFeatures())
    document = Document("file:///p.md", before)
    assert parse_suggestions(json.loads(encoded), document, len(before)) == suggest(before, config)
