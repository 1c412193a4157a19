"""What the MCP server answers, as pure functions of one generation.

Rules: docs/mcp.md. Each function takes a ``Config`` (one validated load of the settings)
and the request's values, and returns the result exactly as it goes on the wire (plain
JSON shapes, MCP's camelCase field names), or raises ``InvalidParams`` for a request
that names something that does not exist. Nothing here imports the ``mcp`` SDK: the
answers are tested as tables, and ``server.py`` only hands them over.

Where MCP's rules meet Pi's, Pi's win for the text: a value goes out exactly as
configured, and ``text`` is expanded by the one-pass rule of docs/grammar.md (values
never re-scanned, ``%%name`` stays the literal ``%name``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from pi_snippets_lsp.core.catalog import LONGEST_RANKED_NAME, closest_names, snippet_named
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.expansion import expand
from pi_snippets_lsp.core.grammar import TRIGGER, find_token
from pi_snippets_lsp.core.snippet import Snippet, preview
from pi_snippets_lsp.core.surrogates import without_lone_surrogates
from pi_snippets_lsp.mcp import write_tools
from pi_snippets_lsp.wire.errors import INVALID_PARAMS

SERVER_NAME: Final = "pi-snippets"
#: The ``logger`` of every ``notifications/message`` (the extension's own name, as the
#: LSP warnings begin with it).
LOGGER: Final = "pi-simple-snippets"
URI_SCHEME: Final = "snippet://"
URI_TEMPLATE: Final = "snippet://{name}"
TEMPLATE_ARGUMENT: Final = "name"
TEXT_ARGUMENT: Final = "text"
TEXT_ARGUMENT_DESCRIPTION: Final = "text after the snippet; its %markers are expanded"
#: The ``clientInfo.name`` of the clients to which ``text`` is declared required
#: (``text_required``): Gemini CLI's MCP client.
TEXT_REQUIRED_CLIENTS: Final = frozenset({"gemini-cli-mcp-client"})
MIME_TYPE: Final = "text/plain"
#: The most values one ``completion/complete`` answer carries (MCP's own limit).
MAX_COMPLETIONS: Final = 100
#: The longest unknown name quoted whole in an error (the longest the catalog ranks): a
#: name is a few dozen characters; a megabyte of "name" is not echoed back.
LONGEST_QUOTED_NAME: Final = LONGEST_RANKED_NAME
#: The longest ``text`` argument value completed: every value of a completion answer is
#: the whole argument with its last token completed, so a long text would be sent back a
#: hundred times.
LONGEST_COMPLETED_TEXT: Final = 10_000

EXPAND_TOOL: Final = "expand_snippets"
LIST_TOOL: Final = "list_snippets"
GET_TOOL: Final = "get_snippet"


class InvalidParams(Exception):
    """A request names a prompt, resource, tool or argument that does not exist: the
    JSON-RPC error ``INVALID_PARAMS`` (``wire.errors``, JSON-RPC's "Invalid params",
    what MCP answers for an unknown prompt, resource or tool) with this message."""

    code: Final = INVALID_PARAMS

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- text on the wire

#: A text as it may go on the wire: each lone surrogate as U+FFFD (``core.surrogates``).
wire_text: Final = without_lone_surrogates


def wire_safe(value: object) -> object:
    """A JSON value with every string made ``wire_text``: each lone surrogate as U+FFFD
    (``core.surrogates``; the SDK's JSON writer refuses one, and the whole answer would
    be lost). Settings values, file paths (a non-UTF-8 file name decodes to surrogates)
    and warnings all reach the wire."""
    if isinstance(value, str):
        return wire_text(value)
    if isinstance(value, dict):
        return {wire_text(str(k)): wire_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire_safe(v) for v in value]
    return value


def _safe(value: dict[str, object]) -> dict[str, object]:
    safe = wire_safe(value)
    assert isinstance(safe, dict)
    return safe


def log_params(level: str, text: str) -> dict[str, object]:
    """A ``notifications/message``'s params: a load's problem, as the LSP server words it."""
    return {"level": level, "logger": LOGGER, "data": wire_text(text)}


# --------------------------------------------------------------------------- lookups


def _quoted(name: str) -> str:
    shown = name if len(name) <= LONGEST_QUOTED_NAME else name[:LONGEST_QUOTED_NAME] + "…"
    return json.dumps(shown, ensure_ascii=False)


def unknown_snippet_message(config: Config, name: str) -> str:
    """Why ``name`` is no snippet, and which names come closest (``core.catalog``)."""
    quoted = _quoted(name)
    if not config.snippets:
        return f"unknown snippet {quoted}: no snippets are configured"
    closest = closest_names(config, name)
    if closest:
        return f"unknown snippet {quoted}; closest: {', '.join(closest)}"
    return (
        f"unknown snippet {quoted}: no snippet name is like it "
        f"({len(config.snippets)} configured; prompts/list shows them)"
    )


def _require(config: Config, name: str) -> Snippet:
    snippet = snippet_named(config, name)
    if snippet is None:
        raise InvalidParams(unknown_snippet_message(config, name))
    return snippet


def check_cursor(cursor: str | None) -> None:
    """Every list fits one page, so no cursor is ever handed out: any cursor is invalid
    (MCP answers an invalid cursor with ``INVALID_PARAMS``)."""
    if cursor is not None:
        raise InvalidParams(f"invalid cursor {_quoted(cursor)}: every list is one page")


# --------------------------------------------------------------------------- prompts


def text_required(client: str | None) -> bool:
    """Whether ``text`` is declared required to the client named ``client`` (the
    ``clientInfo.name`` of its ``initialize``).

    The words typed after a slash command reach ``text`` only where it is declared as
    the client fills it (docs/agents-mcp.md): Gemini CLI fills positional words into
    *required* arguments only (one required argument gets them all, joined by single
    spaces, and ``""`` when nothing was typed), so to it ``text`` is required. Claude
    Code refuses to run a prompt whose required argument got no word, so to it, and to
    every client not known to need otherwise, ``text`` stays optional and a snippet with
    nothing typed after it still runs."""
    return client in TEXT_REQUIRED_CLIENTS


def _prompt(snippet: Snippet, required: bool = False) -> dict[str, object]:
    return {
        "name": snippet.name,
        "title": TRIGGER + snippet.name,
        "description": preview(snippet.value),
        "arguments": [
            {"name": TEXT_ARGUMENT, "description": TEXT_ARGUMENT_DESCRIPTION, "required": required}
        ],
    }


def list_prompts(config: Config, client: str | None = None) -> dict[str, object]:
    """``prompts/list``: one prompt per snippet, in name order, its ``text`` declared
    as ``text_required(client)`` says for the session's client."""
    required = text_required(client)
    return _safe({"prompts": [_prompt(snippet, required) for snippet in config.snippets]})


def prompt_text(value: str, text: str | None, snippets: Mapping[str, str]) -> str:
    """A prompt's message: the value exactly as configured, then, when ``text`` is
    given (and not empty), a blank line and ``text`` expanded by Pi's rules. The value is
    never scanned for markers: it is the snippet the user chose, as Pi inserts it. An
    empty ``text`` is nothing typed (what Gemini CLI sends for a required argument with
    no word after the command), so it adds nothing."""
    if not text:
        return value
    return value + "\n\n" + expand(text, snippets).text


def get_prompt(config: Config, name: str, arguments: Mapping[str, str] | None) -> dict[str, object]:
    """``prompts/get``: one ``user`` message of text. Arguments other than ``text`` are
    ignored (a client may fill in what it thinks fit); an unknown name is
    ``InvalidParams`` naming the closest names."""
    snippet = _require(config, name)
    text = (arguments or {}).get(TEXT_ARGUMENT)
    return _safe(
        {
            "description": preview(snippet.value),
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": prompt_text(snippet.value, text, config.values),
                    },
                }
            ],
        }
    )


# --------------------------------------------------------------------------- resources


def snippet_uri(name: str) -> str:
    return URI_SCHEME + name


def list_resources(config: Config) -> dict[str, object]:
    """``resources/list``: each snippet as ``snippet://NAME``, plain text."""
    return _safe(
        {
            "resources": [
                {
                    "uri": snippet_uri(snippet.name),
                    "name": snippet.name,
                    "title": TRIGGER + snippet.name,
                    "description": preview(snippet.value),
                    "mimeType": MIME_TYPE,
                }
                for snippet in config.snippets
            ]
        }
    )


def list_resource_templates() -> dict[str, object]:
    """``resources/templates/list``: ``snippet://{name}``, whose ``name`` completes."""
    return {
        "resourceTemplates": [
            {
                "uriTemplate": URI_TEMPLATE,
                "name": "snippet",
                "title": "%name snippet",
                "description": "A pi-simple-snippets snippet by name, its text exactly as "
                "configured",
                "mimeType": MIME_TYPE,
            }
        ]
    }


def read_resource(config: Config, uri: str) -> dict[str, object]:
    """``resources/read``: the value, byte for byte; anything else ``InvalidParams``."""
    if not uri.startswith(URI_SCHEME):
        raise InvalidParams(
            f"unknown resource {_quoted(uri)}: snippet resources are {URI_TEMPLATE}"
        )
    snippet = _require(config, uri.removeprefix(URI_SCHEME))
    return _safe(
        {
            "contents": [
                {"uri": snippet_uri(snippet.name), "mimeType": MIME_TYPE, "text": snippet.value}
            ]
        }
    )


# --------------------------------------------------------------------------- completion


def _completion(values: Sequence[str], has_more: bool) -> dict[str, object]:
    return _safe({"completion": {"values": list(values), "hasMore": has_more}})


def complete_text(config: Config, value: str) -> dict[str, object]:
    """The ``text`` argument: when it ends in a snippet token (the editor popup's rule,
    docs/grammar.md), the whole argument with that token completed to each matching
    ``%name``, in Pi's order; otherwise nothing."""
    if len(value) > LONGEST_COMPLETED_TEXT:
        return _completion([], False)
    token = find_token(value)
    if token is None:
        return _completion([], False)
    ranked = config.name_index.rank(token.query, MAX_COMPLETIONS)
    head = value[: token.start] + TRIGGER
    return _completion([head + config.snippets[i].name for i in ranked.indices], ranked.truncated)


def complete_name(config: Config, value: str) -> dict[str, object]:
    """The template's ``name``: the snippet names matching ``value``, in Pi's order (all
    names, in name order, for an empty value)."""
    if len(value) > LONGEST_QUOTED_NAME:
        return _completion([], False)
    ranked = config.name_index.rank(value.removeprefix(TRIGGER), MAX_COMPLETIONS)
    return _completion([config.snippets[i].name for i in ranked.indices], ranked.truncated)


def complete(
    config: Config, ref: Mapping[str, object], argument: str, value: str
) -> dict[str, object]:
    """``completion/complete`` for a prompt's ``text`` or the template's ``name``.

    ``ref`` is the request's reference (``{"type": "ref/prompt", "name": ...}`` or
    ``{"type": "ref/resource", "uri": ...}``). An unknown prompt, template or argument
    is ``InvalidParams``.
    """
    kind = ref.get("type")
    if kind == "ref/prompt":
        _require(config, str(ref.get("name")))
        if argument != TEXT_ARGUMENT:
            raise InvalidParams(
                f"unknown argument {_quoted(argument)}: a snippet prompt has one argument, "
                f"{TEXT_ARGUMENT}"
            )
        return complete_text(config, value)
    if kind == "ref/resource":
        uri = str(ref.get("uri"))
        if uri != URI_TEMPLATE:
            raise InvalidParams(
                f"unknown resource template {_quoted(uri)}: the one template is {URI_TEMPLATE}"
            )
        if argument != TEMPLATE_ARGUMENT:
            raise InvalidParams(
                f"unknown argument {_quoted(argument)}: {URI_TEMPLATE} has one argument, "
                f"{TEMPLATE_ARGUMENT}"
            )
        return complete_name(config, value)
    raise InvalidParams(f"unknown completion reference type {_quoted(str(kind))}")


# --------------------------------------------------------------------------- tools

#: What every tool is: it reads the snippets and changes nothing, the same answer for
#: the same settings, and reaches nothing outside them.
_READ_ONLY: Final = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}

_SNIPPET_NAME: Final = {
    "type": "string",
    "description": "A snippet name (lowercase letters, digits, '.', '_', '-'), without the %",
}


def _object(properties: dict[str, object], required: Sequence[str] = ()) -> dict[str, object]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def list_tools(writes: bool = False) -> dict[str, object]:
    """``tools/list``: the three read-only tools, for clients that take tools only, and
    with ``writes`` (``--allow-writes``) the three that change the snippets."""
    return {
        "tools": [
            {
                "name": EXPAND_TOOL,
                "title": "Expand %snippets",
                "description": "Expand the %name snippet markers of a prompt by Pi's rules "
                "(pi-simple-snippets): each %name at a word boundary becomes that snippet's "
                "text, %%name stays a literal %name, unknown markers stay as typed, and "
                "inserted texts are never expanded again. Returns the expanded text and "
                "whether anything changed.",
                "inputSchema": _object(
                    {"text": {"type": "string", "description": "The prompt to expand"}},
                    ["text"],
                ),
                "outputSchema": _object(
                    {
                        "text": {"type": "string", "description": "The expanded prompt"},
                        "changed": {
                            "type": "boolean",
                            "description": "Whether any marker was expanded",
                        },
                    },
                    ["text", "changed"],
                ),
                "annotations": {"title": "Expand %snippets", **_READ_ONLY},
            },
            {
                "name": LIST_TOOL,
                "title": "List %snippets",
                "description": "List the configured prompt snippets: each name (used as "
                "%name), a one-line preview of its text and the settings file that defines "
                "it, and any problem found in the settings.",
                "inputSchema": _object({}),
                "outputSchema": _object(
                    {
                        "snippets": {
                            "type": "array",
                            "items": _object(
                                {
                                    "name": {"type": "string"},
                                    "preview": {"type": "string"},
                                    "source": {"type": "string"},
                                },
                                ["name", "preview", "source"],
                            ),
                        },
                        "warnings": {"type": "array", "items": {"type": "string"}},
                    },
                    ["snippets", "warnings"],
                ),
                "annotations": {"title": "List %snippets", **_READ_ONLY},
            },
            {
                "name": GET_TOOL,
                "title": "Get a %snippet",
                "description": "The whole text of one prompt snippet, exactly as configured.",
                "inputSchema": _object({"name": _SNIPPET_NAME}, ["name"]),
                "outputSchema": _object(
                    {
                        "name": {"type": "string"},
                        "value": {"type": "string", "description": "The snippet's text"},
                        "source": {
                            "type": "string",
                            "description": "The settings file that defines it",
                        },
                    },
                    ["name", "value", "source"],
                ),
                "annotations": {"title": "Get a %snippet", **_READ_ONLY},
            },
            *(write_tools.TOOLS if writes else ()),
        ]
    }


def tool_result(text: str, structured: dict[str, object]) -> dict[str, object]:
    return _safe({"content": [{"type": "text", "text": text}], "structuredContent": structured})


def tool_error(message: str) -> dict[str, object]:
    """A tool's own failure (a bad argument, an unknown snippet): a result with
    ``isError``, so the model reads the message and can correct itself (MCP keeps
    protocol errors for what is not the tool's to judge, like an unknown tool)."""
    return _safe({"content": [{"type": "text", "text": message}], "isError": True})


def call_tool(
    config: Config, name: str, arguments: Mapping[str, object] | None
) -> dict[str, object]:
    """``tools/call``. An unknown tool is ``InvalidParams``; a bad argument or an unknown
    snippet is the tool's error result."""
    arguments = arguments or {}
    if name == EXPAND_TOOL:
        text = arguments.get("text")
        if not isinstance(text, str):
            return tool_error(f"{EXPAND_TOOL} needs a string argument `text`")
        result = expand(text, config.values)
        return tool_result(result.text, {"text": result.text, "changed": result.changed})
    if name == LIST_TOOL:
        listing = {
            "snippets": [
                {"name": s.name, "preview": preview(s.value), "source": s.source}
                for s in config.snippets
            ],
            "warnings": list(config.warnings),
        }
        return tool_result(json.dumps(wire_safe(listing), ensure_ascii=False), listing)
    if name == GET_TOOL:
        wanted = arguments.get("name")
        if not isinstance(wanted, str):
            return tool_error(f"{GET_TOOL} needs a string argument `name`")
        snippet = snippet_named(config, wanted.removeprefix(TRIGGER))
        if snippet is None:
            return tool_error(unknown_snippet_message(config, wanted))
        return tool_result(
            snippet.value, {"name": snippet.name, "value": snippet.value, "source": snippet.source}
        )
    if name in write_tools.WRITE_TOOLS:
        raise InvalidParams(write_tools.not_offered(name))
    raise InvalidParams(
        f"unknown tool {_quoted(name)}; the tools are {EXPAND_TOOL}, {LIST_TOOL}, {GET_TOOL}"
    )
