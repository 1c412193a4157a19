"""The JSON schema of the ``piSimpleSnippets`` key (``pi-snippets-lsp schema``).

docs/configuration.md, "From the command line"; docs/lsp.md, "schema". Editors check a
settings file with it and show its descriptions on hover: the schema must accept what the
server accepts, flag the shapes the server refuses, and say what each key means.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest
from pi_snippets_lsp.core.config import SETTINGS_KEY, check_namespace
from pi_snippets_lsp.core.grammar import NAME_PATTERN
from pi_snippets_lsp.settings.schema import settings_json_schema

#: The keywords the schema may use, each understood by every editor's JSON support
#: (and by ``schema_errors`` below; any other keyword is a mistake).
KEYWORDS = {
    "$schema",
    "title",
    "description",
    "default",
    "type",
    "properties",
    "propertyNames",
    "additionalProperties",
    "pattern",
    "minLength",
}

TYPES = {"object": dict, "string": str, "boolean": bool}


def schema_errors(schema: Mapping[str, object], value: object, at: str = "") -> list[str]:
    """Where ``value`` breaks ``schema``: the subset of JSON Schema 2020-12 it uses."""
    unknown = set(schema) - KEYWORDS
    assert not unknown, f"{at}: unknown keywords {unknown}"
    errors: list[str] = []
    kind = schema.get("type")
    if kind is not None:
        assert kind in TYPES, f"{at}: unknown type {kind!r}"
        if not isinstance(value, TYPES[kind]):  # type: ignore[index]
            return [f"{at}: not {kind}"]
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:  # type: ignore[operator]
            errors.append(f"{at}: too short")
        if "pattern" in schema and not re.search(schema["pattern"], value):  # type: ignore[arg-type]
            errors.append(f"{at}: does not match")
    if isinstance(value, dict):
        properties: Mapping[str, Mapping[str, object]] = schema.get("properties", {})  # type: ignore[assignment]
        for key, item in value.items():
            if "propertyNames" in schema:
                errors += schema_errors(schema["propertyNames"], key, f"{at}/{key} (name)")  # type: ignore[arg-type]
            if key in properties:
                errors += schema_errors(properties[key], item, f"{at}/{key}")
            elif "additionalProperties" in schema:
                errors += schema_errors(schema["additionalProperties"], item, f"{at}/{key}")  # type: ignore[arg-type]
    return errors


@pytest.mark.parametrize(
    "namespace",
    [
        pytest.param({}, id="empty"),
        pytest.param({"snippets": {}}, id="no-snippets"),
        pytest.param({"snippets": {"a": "A", "use-mcp": "x", "v1.2_b": "y"}}, id="names"),
        pytest.param({"shortcut": "ctrl+shift+s"}, id="shortcut"),
        pytest.param({"expandOnCompletion": True}, id="expand-on-completion"),
        pytest.param({"expandOnCompletion": False, "otherKey": 1}, id="other-keys-are-pis"),
    ],
)
def test_settings_the_server_takes_pass_the_schema(namespace: dict[str, object]) -> None:
    assert not check_namespace(namespace).problems
    assert schema_errors(settings_json_schema(), {SETTINGS_KEY: namespace, "theme": "x"}) == []


@pytest.mark.parametrize(
    ("namespace", "where"),
    [
        pytest.param({"snippets": {"Bad": "x"}}, "/snippets/Bad (name)", id="upper-case-name"),
        pytest.param({"snippets": {"a-": "x"}}, "/snippets/a- (name)", id="name-ends-badly"),
        pytest.param({"snippets": {"a": ""}}, "/snippets/a", id="empty-text"),
        pytest.param({"snippets": {"a": 3}}, "/snippets/a", id="text-not-a-string"),
        pytest.param({"snippets": ["a"]}, "/snippets", id="snippets-not-an-object"),
        pytest.param({"shortcut": 5}, "/shortcut", id="shortcut-not-a-string"),
        pytest.param({"expandOnCompletion": "yes"}, "/expandOnCompletion", id="flag-not-bool"),
    ],
)
def test_shapes_the_server_refuses_fail_the_schema(
    namespace: dict[str, object], where: str
) -> None:
    assert check_namespace(namespace).problems
    errors = schema_errors(settings_json_schema(), {SETTINGS_KEY: namespace})
    assert [e.split(": ")[0] for e in errors] == [f"/{SETTINGS_KEY}{where}"]


def test_the_namespace_must_be_an_object() -> None:
    assert schema_errors(settings_json_schema(), {SETTINGS_KEY: []}) == [
        f"/{SETTINGS_KEY}: not object"
    ]
    assert schema_errors(settings_json_schema(), []) == [": not object"]


def test_the_schema_names_its_draft_and_the_name_rule() -> None:
    schema = settings_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    snippets = schema["properties"][SETTINGS_KEY]["properties"]["snippets"]  # type: ignore[index]
    assert snippets["propertyNames"] == {"type": "string", "pattern": f"^{NAME_PATTERN}$"}


def test_expand_on_completion_defaults_to_false() -> None:
    namespace = settings_json_schema()["properties"][SETTINGS_KEY]  # type: ignore[index]
    assert namespace["properties"]["expandOnCompletion"]["default"] is False


def test_what_an_editor_shows_on_hover() -> None:
    """The title and each description, in full: an editor shows them as they are."""
    schema = settings_json_schema()
    namespace = schema["properties"][SETTINGS_KEY]  # type: ignore[index]
    properties = namespace["properties"]
    assert schema["title"] == "Pi settings (piSimpleSnippets)"
    assert namespace["description"] == "pi-simple-snippets: %name prompt snippets."
    assert properties["snippets"]["description"] == (
        "Snippet name to text. Type %name in a prompt to use one."
    )
    assert properties["shortcut"]["description"] == (
        'Key that types "%" and opens the list, e.g. "ctrl+shift+s": '
        "one or more of ctrl, shift, alt, super, then a key."
    )
    assert properties["expandOnCompletion"]["description"] == (
        "Accepting a completion inserts the snippet's text, not %name."
    )
