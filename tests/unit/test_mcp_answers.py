"""The MCP server's answers as pure functions of a generation (no SDK, no server).

docs/mcp.md: prompts, resources, completion, tools, and the errors for what does not
exist. tests/mcp drives the same answers through the real server and real clients.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_snippets_lsp.core.catalog import closest_names
from pi_snippets_lsp.core.config import Config, Layer, validate_layers
from pi_snippets_lsp.core.expansion import expand
from pi_snippets_lsp.core.ranking import fuzzy_filter
from pi_snippets_lsp.core.snippet import preview
from pi_snippets_lsp.mcp import answers
from pi_snippets_lsp.mcp.answers import InvalidParams

REVIEW = "Review this code.\r\nList the bugs first,\tthen the style."
SNIPPETS = {
    "review": REVIEW,
    "brief": "Answer in three sentences at most.",
    "refactor": "Refactor it; keep %brief literal",
    "tdd": "Write the failing test first",
}


def config_of(snippets: dict[str, Any], source: str = "/home/u/.pi/agent/settings.json") -> Config:
    """A generation built the way a load builds it (validated, sorted by name)."""
    return validate_layers(
        [Layer(source=source, settings={"piSimpleSnippets": {"snippets": snippets}})]
    )


CONFIG = config_of(SNIPPETS)
EMPTY = config_of({})
NAMES = sorted(SNIPPETS)


def message_text(result: dict[str, object]) -> str:
    messages = result["messages"]
    assert isinstance(messages, list) and len(messages) == 1
    assert messages[0]["role"] == "user"
    assert messages[0]["content"]["type"] == "text"
    text = messages[0]["content"]["text"]
    assert isinstance(text, str)
    return text


# --------------------------------------------------------------------------- prompts


def test_one_prompt_per_snippet_in_name_order_titled_by_its_marker() -> None:
    prompts = answers.list_prompts(CONFIG)["prompts"]
    assert isinstance(prompts, list)
    assert [p["name"] for p in prompts] == NAMES
    review = prompts[NAMES.index("review")]
    assert review == {
        "name": "review",
        "title": "%review",
        "description": "Review this code. List the bugs first, then the style.",
        "arguments": [
            {
                "name": "text",
                "description": "text after the snippet; its %markers are expanded",
                "required": False,
            }
        ],
    }


@pytest.mark.parametrize(
    ("client", "required"),
    [
        pytest.param("gemini-cli-mcp-client", True, id="gemini-fills-only-required"),
        pytest.param("claude-code", False, id="claude-code-refuses-a-missing-required"),
        pytest.param("codex-mcp-client", False, id="codex"),
        pytest.param("Visual Studio Code", False, id="vscode"),
        pytest.param(None, False, id="no-initialize-yet"),
        pytest.param("", False, id="empty-name"),
        pytest.param("Gemini-CLI-MCP-Client", False, id="names-are-exact"),
        pytest.param("gemini-cli-mcp-client-x", False, id="no-prefix-match"),
    ],
)
def test_text_is_required_only_to_the_clients_that_fill_only_required(
    client: str | None, required: bool
) -> None:
    """Gemini CLI puts the words after /review into a required argument only; Claude
    Code refuses a prompt whose required argument got no word (docs/agents-mcp.md)."""
    assert answers.text_required(client) is required
    prompts = answers.list_prompts(CONFIG, client)["prompts"]
    assert isinstance(prompts, list)
    assert [p["arguments"] for p in prompts] == [
        [
            {
                "name": "text",
                "description": "text after the snippet; its %markers are expanded",
                "required": required,
            }
        ]
    ] * len(NAMES)
    default = answers.list_prompts(CONFIG)["prompts"]
    assert isinstance(default, list)
    assert [{**p, "arguments": None} for p in prompts] == [
        {**p, "arguments": None} for p in default
    ]


def test_a_description_is_the_one_line_preview() -> None:
    long = "word " * 40
    prompts = answers.list_prompts(config_of({"long": long}))["prompts"]
    assert isinstance(prompts, list)
    assert prompts[0]["description"] == preview(long)
    assert prompts[0]["description"].endswith("…")


def test_no_snippets_no_prompts() -> None:
    assert answers.list_prompts(EMPTY) == {"prompts": []}


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        pytest.param("review", None, REVIEW, id="value-exactly-crlf-and-tab-kept"),
        pytest.param("review", {}, REVIEW, id="no-text"),
        pytest.param("review", {"text": ""}, REVIEW, id="empty-text-is-no-text"),
        pytest.param(
            "review",
            {"text": "then check %brief twice"},
            REVIEW + "\n\nthen check Answer in three sentences at most. twice",
            id="geminis-joined-words-whole",
        ),
        pytest.param(
            "review",
            {"text": "then %brief"},
            REVIEW + "\n\nthen Answer in three sentences at most.",
            id="text-expanded-after-a-blank-line",
        ),
        pytest.param(
            "refactor",
            None,
            "Refactor it; keep %brief literal",
            id="the-value-is-never-scanned",
        ),
        pytest.param(
            "refactor",
            {"text": "x"},
            "Refactor it; keep %brief literal\n\nx",
            id="the-value-is-never-scanned-with-text",
        ),
        pytest.param(
            "tdd", {"text": "%%brief stays"}, SNIPPETS["tdd"] + "\n\n%brief stays", id="escape"
        ),
        pytest.param(
            "tdd", {"text": "%nope stays"}, SNIPPETS["tdd"] + "\n\n%nope stays", id="unknown"
        ),
        pytest.param(
            "tdd", {"text": "50%brief"}, SNIPPETS["tdd"] + "\n\n50%brief", id="no-boundary"
        ),
        pytest.param(
            "tdd", {"text": "a", "other": "ignored"}, SNIPPETS["tdd"] + "\n\na", id="other-args"
        ),
        pytest.param(
            "brief",
            {"text": "(%review)"},
            SNIPPETS["brief"] + "\n\n(" + REVIEW + ")",
            id="wrapped-marker",
        ),
    ],
)
def test_get_prompt(name: str, arguments: dict[str, str] | None, expected: str) -> None:
    result = answers.get_prompt(CONFIG, name, arguments)
    assert message_text(result) == expected
    assert result["description"] == preview(SNIPPETS[name])


@pytest.mark.parametrize(
    ("config", "name", "message"),
    [
        pytest.param(CONFIG, "revew", 'unknown snippet "revew"; closest: review', id="typo"),
        pytest.param(CONFIG, "%review", 'unknown snippet "%review"; closest: review', id="marker"),
        pytest.param(CONFIG, "rf", 'unknown snippet "rf"; closest: refactor, brief', id="fuzzy"),
        pytest.param(
            CONFIG,
            "zzz",
            'unknown snippet "zzz": no snippet name is like it (4 configured; prompts/list '
            "shows them)",
            id="nothing-close",
        ),
        pytest.param(
            EMPTY, "review", 'unknown snippet "review": no snippets are configured', id="none"
        ),
        pytest.param(
            CONFIG,
            "",
            'unknown snippet "": no snippet name is like it (4 configured; '
            "prompts/list shows them)",
            id="empty",
        ),
        pytest.param(
            CONFIG,
            'a"\n',
            'unknown snippet "a\\"\\n": no snippet name is like it (4 configured; '
            "prompts/list shows them)",
            id="quoted-as-json",
        ),
    ],
)
def test_an_unknown_prompt_is_invalid_params_naming_the_closest(
    config: Config, name: str, message: str
) -> None:
    with pytest.raises(InvalidParams) as caught:
        answers.get_prompt(config, name, {"text": "x"})
    assert caught.value.code == -32602
    assert caught.value.message == message


def test_closest_names_are_pi_ranked_and_at_most_three() -> None:
    names = ["re", "rev", "review", "preview", "reverse", "brief"]
    config = config_of(dict.fromkeys(names, "x"))
    ranked = [n for n in fuzzy_filter(sorted(names), "rev", lambda n: n)]
    assert closest_names(config, "rev") == ranked[:3]
    assert len(closest_names(config, "e")) == 3


def test_a_huge_unknown_name_is_neither_ranked_nor_echoed() -> None:
    with pytest.raises(InvalidParams) as caught:
        answers.get_prompt(CONFIG, "review" * 2_000_000, None)
    assert len(caught.value.message) < 400
    assert "…" in caught.value.message


# --------------------------------------------------------------------------- resources


def test_each_snippet_is_a_plain_text_resource() -> None:
    resources = answers.list_resources(CONFIG)["resources"]
    assert isinstance(resources, list)
    assert [r["uri"] for r in resources] == [f"snippet://{n}" for n in NAMES]
    assert resources[NAMES.index("review")] == {
        "uri": "snippet://review",
        "name": "review",
        "title": "%review",
        "description": preview(REVIEW),
        "mimeType": "text/plain",
    }


def test_the_template_names_a_snippet() -> None:
    (template,) = answers.list_resource_templates()["resourceTemplates"]  # type: ignore[misc]
    assert template["uriTemplate"] == "snippet://{name}"
    assert template["mimeType"] == "text/plain"


def test_reading_a_resource_gives_the_value_byte_for_byte() -> None:
    assert answers.read_resource(CONFIG, "snippet://review") == {
        "contents": [{"uri": "snippet://review", "mimeType": "text/plain", "text": REVIEW}]
    }


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        pytest.param("snippet://revew", 'unknown snippet "revew"; closest: review', id="typo"),
        pytest.param(
            "snippet://",
            'unknown snippet "": no snippet name is like it (4 configured;'
            " prompts/list shows them)",
            id="no-name",
        ),
        pytest.param(
            "file:///etc/passwd",
            'unknown resource "file:///etc/passwd": snippet resources are snippet://{name}',
            id="other-scheme",
        ),
        pytest.param(
            "SNIPPET://review",
            'unknown resource "SNIPPET://review": snippet resources are snippet://{name}',
            id="scheme-case",
        ),
        pytest.param("snippet://review/", 'unknown snippet "review/"; closest: review', id="slash"),
    ],
)
def test_reading_an_unknown_resource_is_invalid_params(uri: str, message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        answers.read_resource(CONFIG, uri)
    assert caught.value.message == message


# --------------------------------------------------------------------------- completion

PROMPT_REF = {"type": "ref/prompt", "name": "review"}
TEMPLATE_REF = {"type": "ref/resource", "uri": "snippet://{name}"}


def values(result: dict[str, object]) -> list[str]:
    completion = result["completion"]
    assert isinstance(completion, dict)
    return list(completion["values"])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("%", [f"%{n}" for n in NAMES], id="bare-percent-all-in-name-order"),
        pytest.param("please %rev", ["please %review"], id="trailing-token"),
        pytest.param(
            "please %re",
            ["please %" + n for n in fuzzy_filter(NAMES, "re", lambda n: n)],
            id="pi-ranked",
        ),
        pytest.param("(%td", ["(%tdd"], id="wrapped"),
        pytest.param("%brief and %td", ["%brief and %tdd"], id="only-the-last-token"),
        pytest.param("%zzz", [], id="no-match"),
        pytest.param("", [], id="empty"),
        pytest.param("no token", [], id="no-token"),
        pytest.param("50%re", [], id="no-boundary"),
        pytest.param("%re ", [], id="token-not-at-the-end"),
        pytest.param("%-x", [], id="not-a-query"),
        pytest.param("line\n%tdd", ["line\n%tdd"], id="last-line"),
    ],
)
def test_the_text_argument_completes_its_trailing_token(value: str, expected: list[str]) -> None:
    result = answers.complete(CONFIG, PROMPT_REF, "text", value)
    assert values(result) == expected
    assert result["completion"] == {"values": expected, "hasMore": False}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("", NAMES, id="empty-all-in-name-order"),
        pytest.param("rev", ["review"], id="prefix"),
        pytest.param("rf", ["refactor", "brief"], id="fuzzy"),
        pytest.param("%rev", ["review"], id="marker"),
        pytest.param("zzz", [], id="none"),
    ],
)
def test_the_template_name_completes_by_pi_ranking(value: str, expected: list[str]) -> None:
    assert values(answers.complete(CONFIG, TEMPLATE_REF, "name", value)) == expected


def test_completion_sends_at_most_100_values_and_says_there_are_more() -> None:
    config = config_of({f"s{i:03d}": "x" for i in range(150)})
    for ref, argument, value in [
        (PROMPT_REF | {"name": "s000"}, "text", "%"),
        (TEMPLATE_REF, "name", "s"),
    ]:
        result = answers.complete(config, ref, argument, value)
        assert len(values(result)) == 100
        assert result["completion"]["hasMore"] is True  # type: ignore[index]


def test_a_very_long_text_argument_is_not_completed() -> None:
    text = "x " * answers.LONGEST_COMPLETED_TEXT + "%rev"
    assert values(answers.complete(CONFIG, PROMPT_REF, "text", text)) == []


@pytest.mark.parametrize(
    ("ref", "argument", "message"),
    [
        pytest.param(
            {"type": "ref/prompt", "name": "revew"},
            "text",
            'unknown snippet "revew"; closest: review',
            id="unknown-prompt",
        ),
        pytest.param(
            PROMPT_REF,
            "topic",
            'unknown argument "topic": a snippet prompt has one argument, text',
            id="unknown-prompt-argument",
        ),
        pytest.param(
            {"type": "ref/resource", "uri": "file:///{path}"},
            "path",
            'unknown resource template "file:///{path}": the one template is snippet://{name}',
            id="unknown-template",
        ),
        pytest.param(
            TEMPLATE_REF,
            "uri",
            'unknown argument "uri": snippet://{name} has one argument, name',
            id="unknown-template-argument",
        ),
        pytest.param(
            {"type": "ref/other"}, "x", 'unknown completion reference type "ref/other"', id="ref"
        ),
    ],
)
def test_completing_something_unknown_is_invalid_params(
    ref: dict[str, str], argument: str, message: str
) -> None:
    with pytest.raises(InvalidParams) as caught:
        answers.complete(CONFIG, ref, argument, "")
    assert caught.value.message == message


# --------------------------------------------------------------------------- tools


def tools() -> dict[str, dict[str, Any]]:
    listed = answers.list_tools()["tools"]
    assert isinstance(listed, list)
    return {tool["name"]: tool for tool in listed}


def test_three_read_only_tools_with_input_and_output_schemas() -> None:
    listed = tools()
    assert list(listed) == ["expand_snippets", "list_snippets", "get_snippet"]
    for tool in listed.values():
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["destructiveHint"] is False
        assert tool["inputSchema"]["type"] == "object"
        assert tool["outputSchema"]["type"] == "object"
    assert listed["expand_snippets"]["inputSchema"]["required"] == ["text"]
    assert listed["get_snippet"]["inputSchema"]["required"] == ["name"]
    assert listed["list_snippets"]["inputSchema"]["properties"] == {}


@pytest.mark.parametrize(
    ("text", "expanded", "changed"),
    [
        pytest.param("%brief please", SNIPPETS["brief"] + " please", True, id="marker"),
        pytest.param("%%brief", "%brief", True, id="escape"),
        pytest.param("nothing here", "nothing here", False, id="unchanged"),
        pytest.param("", "", False, id="empty"),
        pytest.param("%refactor", SNIPPETS["refactor"], True, id="not-re-scanned"),
    ],
)
def test_expand_snippets(text: str, expanded: str, changed: bool) -> None:
    result = answers.call_tool(CONFIG, "expand_snippets", {"text": text})
    assert result == {
        "content": [{"type": "text", "text": expanded}],
        "structuredContent": {"text": expanded, "changed": changed},
    }


def test_expand_snippets_with_nothing_configured_changes_nothing() -> None:
    result = answers.call_tool(EMPTY, "expand_snippets", {"text": "%%brief %brief"})
    assert result["structuredContent"] == {"text": "%%brief %brief", "changed": False}


def test_list_snippets_gives_names_previews_sources_and_warnings() -> None:
    config = config_of({"review": REVIEW, "Bad Name": "x"}, source="/s.json")
    result = answers.call_tool(config, "list_snippets", {})
    structured = result["structuredContent"]
    assert structured == {
        "snippets": [{"name": "review", "preview": preview(REVIEW), "source": "/s.json"}],
        "warnings": ['ignored 1 snippet entry: "Bad Name" (invalid name)'],
    }
    content = result["content"]
    assert isinstance(content, list)
    assert json.loads(content[0]["text"]) == structured


@pytest.mark.parametrize("name", ["review", "%review"])
def test_get_snippet_gives_the_value_exactly(name: str) -> None:
    result = answers.call_tool(CONFIG, "get_snippet", {"name": name})
    assert result == {
        "content": [{"type": "text", "text": REVIEW}],
        "structuredContent": {
            "name": "review",
            "value": REVIEW,
            "source": "/home/u/.pi/agent/settings.json",
        },
    }


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        pytest.param(
            "expand_snippets", {}, "expand_snippets needs a string argument `text`", id="no-text"
        ),
        pytest.param(
            "expand_snippets", None, "expand_snippets needs a string argument `text`", id="no-args"
        ),
        pytest.param(
            "expand_snippets",
            {"text": 3},
            "expand_snippets needs a string argument `text`",
            id="int",
        ),
        pytest.param("get_snippet", {}, "get_snippet needs a string argument `name`", id="no-name"),
        pytest.param(
            "get_snippet",
            {"name": "revew"},
            'unknown snippet "revew"; closest: review',
            id="unknown",
        ),
    ],
)
def test_a_bad_tool_argument_is_the_tools_error_result(
    tool: str, arguments: dict[str, object] | None, message: str
) -> None:
    assert answers.call_tool(CONFIG, tool, arguments) == {
        "content": [{"type": "text", "text": message}],
        "isError": True,
    }


def test_an_unknown_tool_is_invalid_params() -> None:
    with pytest.raises(InvalidParams) as caught:
        answers.call_tool(CONFIG, "delete_everything", {})
    assert caught.value.message == (
        'unknown tool "delete_everything"; the tools are expand_snippets, list_snippets, '
        "get_snippet"
    )


def test_structured_content_matches_each_output_schema() -> None:
    listed = tools()
    config = config_of({"review": REVIEW, "Bad Name": "x"})
    for name, arguments in [
        ("expand_snippets", {"text": "%review"}),
        ("list_snippets", {}),
        ("get_snippet", {"name": "review"}),
    ]:
        result = answers.call_tool(config, name, arguments)
        jsonschema.validate(result["structuredContent"], listed[name]["outputSchema"])
        jsonschema.validate(arguments, listed[name]["inputSchema"])


def test_a_cursor_is_invalid_every_list_is_one_page() -> None:
    answers.check_cursor(None)
    with pytest.raises(InvalidParams, match="invalid cursor"):
        answers.check_cursor("abc")


# --------------------------------------------------------------------------- the wire

LONE = "\ud800"


def every_answer(config: Config, name: str, text: str) -> list[dict[str, object]]:
    return [
        answers.list_prompts(config),
        answers.get_prompt(config, name, {"text": text}),
        answers.list_resources(config),
        answers.read_resource(config, f"snippet://{name}"),
        answers.call_tool(config, "expand_snippets", {"text": text}),
        answers.call_tool(config, "list_snippets", {}),
        answers.call_tool(config, "get_snippet", {"name": name}),
        answers.complete(config, {"type": "ref/resource", "uri": "snippet://{name}"}, "name", ""),
    ]


def test_a_lone_surrogate_in_a_value_or_path_goes_out_as_a_replacement_character() -> None:
    config = config_of({"s": f"a{LONE}b"}, source="/home/\udcff/settings.json")
    answers_ = every_answer(config, "s", "%s")
    for answer in answers_:
        json.dumps(answer, ensure_ascii=False).encode("utf-8")  # no lone surrogate left
    assert answers.read_resource(config, "snippet://s")["contents"] == [
        {"uri": "snippet://s", "mimeType": "text/plain", "text": "a\ufffdb"}
    ]


values_with_surrogates = st.text(st.characters(codec=None), min_size=1, max_size=40) | st.builds(
    lambda a, b: a + LONE + b, st.text(max_size=10), st.text(max_size=10)
)


@given(
    snippets=st.dictionaries(
        st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
        values_with_surrogates,
        min_size=1,
        max_size=5,
    ),
    text=st.text(max_size=60),
)
def test_every_answer_is_utf8_json_and_expands_by_pi_rules(
    snippets: dict[str, str], text: str
) -> None:
    config = config_of(snippets)
    name = sorted(snippets)[0]
    for answer in every_answer(config, name, text):
        json.dumps(answer, ensure_ascii=False).encode("utf-8")
    expected = answers.wire_text(expand(text, config.values).text)
    result = answers.call_tool(config, "expand_snippets", {"text": text})
    assert result["structuredContent"]["text"] == expected  # type: ignore[index]
