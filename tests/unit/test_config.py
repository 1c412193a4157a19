"""Configuration: validation and warnings, Pi's merge of layers, trust, files.

docs/configuration.md, "Settings", "Layers" and "Validation and warnings".
"""

from __future__ import annotations

import collections
import dataclasses
import json
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from pi_snippets_lsp.core.config import (
    MESSAGE_PREFIX,
    SETTINGS_KEY,
    Config,
    Layer,
    Problem,
    check_namespace,
    client_layer,
    deep_merge,
    normalize_shortcut,
    plain_json,
    problem_warnings,
    validate_layers,
)
from pi_snippets_lsp.core.grammar import NAME_PATTERN
from pi_snippets_lsp.settings.files import SettingsFileError
from pi_snippets_lsp.settings.layers import (
    LoadRequest,
    SettingsFiles,
    load_config,
    parse_settings_text,
    settings_text_is_empty,
    user_settings_path,
)
from pi_snippets_lsp.settings.schema import settings_json_schema

from .conftest import examples


def validate(namespace: object, source: str = "settings.json") -> Config:
    """Validate one layer holding ``namespace`` under the settings key."""
    return validate_layers([Layer(source=source, settings={SETTINGS_KEY: namespace})])


def snippet_map(config: Config) -> dict[str, str]:
    return {s.name: s.value for s in config.snippets}


def write_json(path: Path, settings: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- snippets


def test_a_valid_namespace_loads_without_warnings() -> None:
    config = validate(
        {
            "shortcut": "ctrl+shift+s",
            "expandOnCompletion": True,
            "snippets": {"use-mcp": "Use your MCP tools", "tdd": "Test first"},
        }
    )
    assert snippet_map(config) == {"tdd": "Test first", "use-mcp": "Use your MCP tools"}
    assert config.shortcut == "ctrl+shift+s"
    assert config.expand_on_completion is True
    assert config.warnings == ()
    assert config.warning_message() is None
    assert config.namespace_present is True


def test_snippets_are_sorted_by_name() -> None:
    config = validate({"snippets": {"zeta": "z", "alpha": "a", "0": "n", "m.x": "m"}})
    assert [s.name for s in config.snippets] == ["0", "alpha", "m.x", "zeta"]


def test_values_maps_names_to_text_for_expansion() -> None:
    config = validate({"snippets": {"a": "AAA", "b": "BBB"}})
    assert dict(config.values) == {"a": "AAA", "b": "BBB"}


def test_malformed_entries_are_skipped_one_by_one_and_valid_ones_kept() -> None:
    config = validate(
        {
            "snippets": {
                "good": "G",
                "Upper": "x",
                "-lead": "x",
                "trail-": "x",
                "": "x",
                "number": 5,
                "empty": "",
                "nothing": None,
                "list": ["a"],
                "object": {"a": "b"},
                "boolean": True,
                "also-good": "A",
            }
        }
    )
    assert snippet_map(config) == {"also-good": "A", "good": "G"}
    (warning,) = config.warnings
    assert warning.startswith("ignored 10 snippet entries: ")
    for name in ("Upper", "-lead", "trail-", ""):
        assert f'"{name}" (invalid name)' in warning
    for name in ("number", "empty", "nothing", "list", "object", "boolean"):
        assert f'"{name}" (value must be a non-empty string)' in warning


def test_one_skipped_entry_is_one_entry() -> None:
    config = validate({"snippets": {"Bad": "x", "ok": "y"}})
    assert config.warnings == ('ignored 1 snippet entry: "Bad" (invalid name)',)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Use-mcp", id="uppercase"),
        pytest.param("-a", id="leading-hyphen"),
        pytest.param("a-", id="trailing-hyphen"),
        pytest.param(".a", id="leading-dot"),
        pytest.param("a_", id="trailing-underscore"),
        pytest.param("", id="empty"),
        pytest.param("a b", id="space"),
        pytest.param("é", id="non-ascii"),
    ],
)
def test_invalid_names_are_skipped(name: str) -> None:
    config = validate({"snippets": {name: "value", "ok": "v"}})
    assert snippet_map(config) == {"ok": "v"}
    assert config.warnings == (
        f"ignored 1 snippet entry: {json.dumps(name, ensure_ascii=False)} (invalid name)",
    )


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty-string"),
        pytest.param(0, id="number"),
        pytest.param(False, id="boolean"),
        pytest.param(None, id="null"),
        pytest.param(["a"], id="array"),
        pytest.param({"a": "b"}, id="object"),
    ],
)
def test_values_must_be_non_empty_strings(value: object) -> None:
    config = validate({"snippets": {"bad": value, "ok": "v"}})
    assert snippet_map(config) == {"ok": "v"}
    assert config.warnings == ('ignored 1 snippet entry: "bad" (value must be a non-empty string)',)


def test_a_whitespace_value_is_a_value() -> None:
    assert snippet_map(validate({"snippets": {"space": " "}})) == {"space": " "}


@pytest.mark.parametrize(
    ("table", "kind"),
    [
        pytest.param([], "an array", id="array"),
        pytest.param("a", "a string", id="string"),
        pytest.param(3, "a number", id="number"),
        pytest.param(None, "null", id="null"),
        pytest.param(True, "a boolean", id="boolean"),
    ],
)
def test_snippets_that_are_not_an_object_are_discarded_with_a_warning(
    table: object, kind: str
) -> None:
    config = validate({"snippets": table, "shortcut": "ctrl+s", "expandOnCompletion": True})
    assert config.snippets == ()
    (warning,) = config.warnings
    assert warning.startswith("`snippets` must be an object")
    assert kind in warning
    # The other parts still work.
    assert config.shortcut == "ctrl+s"
    assert config.expand_on_completion is True


@pytest.mark.parametrize(
    ("namespace", "kind"),
    [
        pytest.param([], "an array", id="array"),
        pytest.param([{"snippets": {"a": "A"}}], "an array", id="array-of-objects"),
        pytest.param("snippets", "a string", id="string"),
        pytest.param(None, "null", id="null"),
        pytest.param(1, "a number", id="number"),
        pytest.param(False, "a boolean", id="boolean"),
    ],
)
def test_a_namespace_that_is_not_an_object_is_discarded_with_a_warning(
    namespace: object, kind: str
) -> None:
    config = validate(namespace)
    assert config.snippets == ()
    assert config.shortcut is None
    assert config.expand_on_completion is False
    (warning,) = config.warnings
    assert warning.startswith(f'"{SETTINGS_KEY}" must be an object')
    assert kind in warning


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({}, id="empty-settings"),
        pytest.param({"theme": "dark", "defaultModel": "x"}, id="other-pi-settings"),
        pytest.param({"pi-simple-snippets": {"snippets": {"a": "A"}}}, id="hyphenated-key"),
        pytest.param({"pisimplesnippets": {"snippets": {"a": "A"}}}, id="lowercase-key"),
        pytest.param({"PiSimpleSnippets": {"snippets": {"a": "A"}}}, id="pascal-case-key"),
    ],
)
def test_an_absent_namespace_gives_no_warning_at_all(settings: dict[str, Any]) -> None:
    config = validate_layers([Layer(source="settings.json", settings=settings)])
    assert config.snippets == ()
    assert config.warnings == ()
    assert config.warning_message() is None
    assert config.namespace_present is False


def test_unknown_keys_inside_the_namespace_are_ignored_silently() -> None:
    config = validate({"snippets": {"a": "A"}, "aliases": {"b": "a"}, "version": 2})
    assert snippet_map(config) == {"a": "A"}
    assert config.warnings == ()


def test_an_empty_namespace_is_valid_and_silent() -> None:
    config = validate({})
    assert (config.snippets, config.shortcut, config.warnings) == ((), None, ())
    assert config.namespace_present is True


# --------------------------------------------------------------------------- shortcut


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        pytest.param("ctrl+shift+s", "ctrl+shift+s", id="documented-example"),
        pytest.param("CTRL+SHIFT+S", "ctrl+shift+s", id="lowercased"),
        pytest.param("Ctrl+S", "ctrl+s", id="mixed-case"),
        pytest.param("  ctrl+s \t", "ctrl+s", id="whole-string-trimmed"),
        pytest.param("shift+ctrl+s", "shift+ctrl+s", id="modifier-order-kept"),
        pytest.param("ctrl+alt+shift+super+x", "ctrl+alt+shift+super+x", id="four-modifiers"),
        pytest.param("alt+!", "alt+!", id="first-printable"),
        pytest.param("alt+~", "alt+~", id="last-printable"),
        pytest.param("ctrl+5", "ctrl+5", id="digit"),
        pytest.param("ctrl+%", "ctrl+%", id="percent"),
        pytest.param("ctrl+escape", "ctrl+escape", id="escape"),
        pytest.param("ctrl+esc", "ctrl+esc", id="esc"),
        pytest.param("alt+enter", "alt+enter", id="enter"),
        pytest.param("alt+return", "alt+return", id="return"),
        pytest.param("shift+tab", "shift+tab", id="tab"),
        pytest.param("ctrl+space", "ctrl+space", id="space"),
        pytest.param("ctrl+backspace", "ctrl+backspace", id="backspace"),
        pytest.param("ctrl+delete", "ctrl+delete", id="delete"),
        pytest.param("ctrl+insert", "ctrl+insert", id="insert"),
        pytest.param("ctrl+clear", "ctrl+clear", id="clear"),
        pytest.param("ctrl+home", "ctrl+home", id="home"),
        pytest.param("ctrl+end", "ctrl+end", id="end"),
        pytest.param("super+pageup", "super+pageup", id="pageup"),
        pytest.param("super+pagedown", "super+pagedown", id="pagedown"),
        pytest.param("alt+up", "alt+up", id="up"),
        pytest.param("alt+down", "alt+down", id="down"),
        pytest.param("alt+left", "alt+left", id="left"),
        pytest.param("alt+right", "alt+right", id="right"),
        pytest.param("ctrl+f1", "ctrl+f1", id="f1"),
        pytest.param("ctrl+F12", "ctrl+f12", id="f12"),
    ],
)
def test_accepted_shortcuts_are_normalized(raw: str, normalized: str) -> None:
    assert normalize_shortcut(raw) == normalized


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("ctrl + shift + s", id="spaces-around-plus"),
        pytest.param("ctrl+ s", id="space-before-key"),
        pytest.param("s", id="bare-key"),
        pytest.param("f5", id="bare-named-key"),
        pytest.param("ctrl", id="bare-modifier"),
        pytest.param("ctrl+shift", id="modifiers-only"),
        pytest.param("ctrl+ctrl+s", id="duplicate-modifier"),
        pytest.param("meta+s", id="unknown-modifier-meta"),
        pytest.param("cmd+s", id="unknown-modifier-cmd"),
        pytest.param("control+s", id="unknown-modifier-control"),
        pytest.param("ctrl+f13", id="f13"),
        pytest.param("ctrl+f0", id="f0"),
        pytest.param("ctrl+ab", id="two-letter-key"),
        pytest.param("ctrl+é", id="non-ascii-key"),
        pytest.param("ctrl+pgup", id="unknown-named-key"),
        pytest.param("ctrl+", id="missing-key"),
        pytest.param("+s", id="missing-modifier"),
        pytest.param("ctrl++", id="plus-as-key"),
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
    ],
)
def test_rejected_shortcuts(raw: str) -> None:
    assert normalize_shortcut(raw) is None


def test_a_rejected_shortcut_is_ignored_with_a_warning_and_snippets_still_work() -> None:
    config = validate({"shortcut": "ctrl + shift + s", "snippets": {"a": "A"}})
    assert config.shortcut is None
    assert snippet_map(config) == {"a": "A"}
    (warning,) = config.warnings
    assert warning.startswith('`shortcut` "ctrl + shift + s" needs')


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        pytest.param(5, "a number", id="number"),
        pytest.param(True, "a boolean", id="boolean"),
        pytest.param(None, "null", id="null"),
        pytest.param(["ctrl", "s"], "an array", id="array"),
        pytest.param({"key": "s"}, "an object", id="object"),
    ],
)
def test_a_non_string_shortcut_is_ignored_with_a_warning(raw: object, kind: str) -> None:
    config = validate({"shortcut": raw, "snippets": {"a": "A"}})
    assert config.shortcut is None
    assert snippet_map(config) == {"a": "A"}
    assert config.warnings == (f"`shortcut` must be a string, not {kind}; ignoring it",)


def test_a_shortcut_alone_is_valid_configuration() -> None:
    config = validate({"shortcut": "CTRL+SHIFT+S"})
    assert config.shortcut == "ctrl+shift+s"
    assert config.snippets == ()
    assert config.warnings == ()


# --------------------------------------------------------------------------- expandOnCompletion


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(True, True, id="true"),
        pytest.param(False, False, id="false"),
    ],
)
def test_expand_on_completion_is_a_boolean(raw: bool, expected: bool) -> None:
    config = validate({"expandOnCompletion": raw})
    assert config.expand_on_completion is expected
    assert config.warnings == ()


def test_expand_on_completion_defaults_to_false() -> None:
    assert validate({"snippets": {"a": "A"}}).expand_on_completion is False


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        pytest.param("true", "a string", id="string-true"),
        pytest.param(1, "a number", id="one"),
        pytest.param(None, "null", id="null"),
        pytest.param([True], "an array", id="array"),
        pytest.param({}, "an object", id="object"),
    ],
)
def test_a_non_boolean_expand_on_completion_is_ignored_with_a_warning(
    raw: object, kind: str
) -> None:
    config = validate({"expandOnCompletion": raw, "snippets": {"a": "A"}, "shortcut": "alt+x"})
    assert config.expand_on_completion is False
    assert snippet_map(config) == {"a": "A"}
    assert config.shortcut == "alt+x"
    (warning,) = config.warnings
    assert warning.startswith("`expandOnCompletion` must be true or false")
    assert kind in warning


# --------------------------------------------------------------------------- one warning


def test_every_problem_of_one_load_is_in_one_message(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text("{ not json", encoding="utf-8")
    project = tmp_path / "project"
    write_json(
        project / ".pi" / "settings.json",
        {
            SETTINGS_KEY: {
                "shortcut": "s",
                "expandOnCompletion": "yes",
                "snippets": {"Bad": "x", "ok": "fine"},
            }
        },
    )
    config = load_config(LoadRequest(user_file=user, project_folder=project, trust_project=True))
    assert snippet_map(config) == {"ok": "fine"}
    assert len(config.warnings) == 4
    assert str(user) in config.warnings[0]
    message = config.warning_message()
    assert message is not None
    assert message.startswith("pi-simple-snippets: ")
    assert MESSAGE_PREFIX == "pi-simple-snippets:"
    for warning in config.warnings:
        assert warning in message
    assert "\n" not in message


# --------------------------------------------------------------------------- problems

NS = SETTINGS_KEY
SNIPPETS = (NS, "snippets")


@pytest.mark.parametrize(
    ("namespace", "problems"),
    [
        pytest.param({"snippets": {"ok": "v"}, "shortcut": "alt+x"}, [], id="fine"),
        pytest.param([], [((NS,), "value", '"piSimpleSnippets" must be an object, not an array; '
                           "ignoring the whole namespace")], id="namespace-not-an-object"),
        pytest.param({"shortcut": 5}, [((NS, "shortcut"), "value",
                     "`shortcut` must be a string, not a number; ignoring it")],
                     id="shortcut-not-a-string"),
        pytest.param({"shortcut": "s"}, [((NS, "shortcut"), "value",
                     '`shortcut` "s" needs "modifier[+modifier]+key" with at least one of ctrl, '
                     "shift, alt, super and a known key; ignoring it")], id="shortcut-rejected"),
        pytest.param({"expandOnCompletion": "true"}, [((NS, "expandOnCompletion"), "value",
                     "`expandOnCompletion` must be true or false, not a string; ignoring it "
                     "(snippets are inserted as markers)")], id="expand-not-a-boolean"),
        pytest.param({"snippets": None}, [(SNIPPETS, "value", "`snippets` must be an object of "
                     "name to text, not null; ignoring it")], id="snippets-not-an-object"),
        pytest.param({"snippets": {"Bad Name": "x"}}, [((*SNIPPETS, "Bad Name"), "key",
                     'ignored 1 snippet entry: "Bad Name" (invalid name)')],
                     id="invalid-name-at-the-key"),
        pytest.param({"snippets": {"e": ""}}, [((*SNIPPETS, "e"), "value",
                     'ignored 1 snippet entry: "e" (value must be a non-empty string)')],
                     id="empty-value-at-the-value"),
        pytest.param({"snippets": {"n": 1}}, [((*SNIPPETS, "n"), "value",
                     'ignored 1 snippet entry: "n" (value must be a non-empty string)')],
                     id="non-string-value-at-the-value"),
        pytest.param({"snippets": {"Bad": 1}}, [((*SNIPPETS, "Bad"), "key",
                     'ignored 1 snippet entry: "Bad" (invalid name)')],
                     id="a-bad-name-hides-a-bad-value"),
    ],
)  # fmt: skip
def test_each_problem_has_its_json_path_target_and_load_warning_words(
    namespace: object, problems: list[tuple[tuple[str, ...], str, str]]
) -> None:
    found = check_namespace(namespace).problems
    assert [(p.path, p.target, p.message) for p in found] == problems
    # Alone, a problem's message is exactly the load warning.
    assert validate(namespace).warnings == tuple(message for _, _, message in problems)


def test_skipped_entries_share_one_load_warning_where_the_first_was() -> None:
    namespace = {
        "snippets": {"A": "x", "ok": "v", "e": ""},
        "shortcut": "s",
        "expandOnCompletion": 1,
    }
    problems = check_namespace(namespace).problems
    assert [p.entry for p in problems] == [
        None,
        None,
        '"A" (invalid name)',
        '"e" (value must be a non-empty string)',
    ]
    assert problem_warnings(problems) == list(validate(namespace).warnings)
    assert problem_warnings(problems)[2] == (
        'ignored 2 snippet entries: "A" (invalid name), "e" (value must be a non-empty string)'
    )


def test_problem_warnings_of_nothing_is_nothing() -> None:
    assert problem_warnings([]) == []


def test_check_namespace_keeps_the_usable_entries_in_table_order() -> None:
    check = check_namespace({"snippets": {"z": "Z", "Bad": "x", "a": "A"}, "shortcut": "Alt+X"})
    assert check.snippets == (("z", "Z"), ("a", "A"))
    assert (check.shortcut, check.expand_on_completion) == ("alt+x", False)


def test_a_problem_is_a_plain_value() -> None:
    problem = Problem((NS,), "value", "m")
    assert problem == Problem((NS,), "value", "m", None)
    with pytest.raises(AttributeError):
        problem.message = "x"  # type: ignore[misc]


@hypothesis_settings(max_examples=examples(200))
@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "A", "a b", "-x", "ok.1", "", "é"]),
        st.one_of(st.sampled_from(["", "v", " "]), st.none(), st.integers(), st.booleans()),
    )
)
def test_every_entry_is_either_usable_or_exactly_one_problem(table: dict[str, object]) -> None:
    check = check_namespace({"snippets": table})
    usable = [name for name, _ in check.snippets]
    problems = [p.path[-1] for p in check.problems]
    assert sorted(usable + problems) == sorted(table)
    assert all(p.path == (*SNIPPETS, p.path[-1]) for p in check.problems)


# --------------------------------------------------------------------------- merge


@pytest.mark.parametrize(
    ("base", "override", "merged"),
    [
        pytest.param({"a": 1}, {"b": 2}, {"a": 1, "b": 2}, id="absent-keys-kept"),
        pytest.param({"a": 1}, {"a": 2}, {"a": 2}, id="primitive-replaces"),
        pytest.param(
            {"o": {"x": 1, "y": 1}}, {"o": {"y": 2, "z": 2}}, {"o": {"x": 1, "y": 2, "z": 2}},
            id="objects-merge-key-by-key",
        ),
        pytest.param(
            {"o": {"p": {"x": 1}}}, {"o": {"p": {"y": 2}}}, {"o": {"p": {"x": 1, "y": 2}}},
            id="objects-merge-recursively",
        ),
        pytest.param({"a": [1, 2]}, {"a": [3]}, {"a": [3]}, id="arrays-replace"),
        pytest.param({"a": {"x": 1}}, {"a": None}, {"a": None}, id="null-replaces-an-object"),
        pytest.param({"a": {"x": 1}}, {"a": [1]}, {"a": [1]}, id="array-replaces-an-object"),
        pytest.param({"a": "s"}, {"a": {"x": 1}}, {"a": {"x": 1}}, id="object-replaces-a-string"),
        pytest.param({"a": 1}, {}, {"a": 1}, id="empty-override"),
    ],
)  # fmt: skip
def test_pis_deep_merge(base: object, override: object, merged: object) -> None:
    assert deep_merge(base, override) == merged


def test_deep_merge_does_not_modify_its_inputs() -> None:
    base = {"o": {"x": 1}}
    override = {"o": {"y": 2}}
    deep_merge(base, override)
    assert base == {"o": {"x": 1}}
    assert override == {"o": {"y": 2}}


def test_deep_merge_of_objects_nested_deeper_than_python_recursion() -> None:
    depth = 100_000

    def nested(leaf: dict[str, object]) -> dict[str, object]:
        value = leaf
        for _ in range(depth):
            value = {"a": value}
        return value

    merged = deep_merge(nested({"x": 1}), nested({"y": 2}))
    for _ in range(depth):
        assert isinstance(merged, dict)
        merged = merged["a"]
    assert merged == {"x": 1, "y": 2}


def layer(source: str, namespace: object) -> Layer:
    return Layer(source=source, settings={SETTINGS_KEY: namespace})


def test_the_project_wins_per_snippet_name_and_sources_say_who_defined_each() -> None:
    config = validate_layers(
        [
            layer("user", {"snippets": {"a": "user a", "b": "user b"}, "shortcut": "ctrl+u"}),
            layer("project", {"snippets": {"a": "project a", "c": "project c"}}),
        ]
    )
    assert {(s.name, s.value, s.source) for s in config.snippets} == {
        ("a", "project a", "project"),
        ("b", "user b", "user"),
        ("c", "project c", "project"),
    }
    assert config.shortcut == "ctrl+u"


def test_the_project_overrides_shortcut_and_expand_on_completion() -> None:
    config = validate_layers(
        [
            layer("user", {"shortcut": "ctrl+u", "expandOnCompletion": True}),
            layer("project", {"shortcut": "alt+p", "expandOnCompletion": False}),
        ]
    )
    assert (config.shortcut, config.expand_on_completion) == ("alt+p", False)


def test_a_layer_without_snippets_keeps_the_sources_of_earlier_ones() -> None:
    config = validate_layers(
        [
            layer("user", {"snippets": {"a": "A"}}),
            layer("project", {"shortcut": "ctrl+p"}),
            layer("client", {"snippets": {}}),
        ]
    )
    assert [(s.name, s.source) for s in config.snippets] == [("a", "user")]


def test_null_for_one_snippet_replaces_it_and_is_then_an_invalid_entry() -> None:
    config = validate_layers(
        [
            layer("user", {"snippets": {"a": "A", "b": "B"}}),
            layer("project", {"snippets": {"b": None}}),
        ]
    )
    assert snippet_map(config) == {"a": "A"}
    assert config.warnings == ('ignored 1 snippet entry: "b" (value must be a non-empty string)',)


def test_null_snippets_replace_the_whole_table() -> None:
    config = validate_layers(
        [layer("user", {"snippets": {"a": "A"}}), layer("project", {"snippets": None})]
    )
    assert config.snippets == ()
    (warning,) = config.warnings
    assert warning.startswith("`snippets` must be an object")


def test_a_null_namespace_replaces_the_user_namespace() -> None:
    config = validate_layers([layer("user", {"snippets": {"a": "A"}}), layer("project", None)])
    assert config.snippets == ()
    (warning,) = config.warnings
    assert warning.startswith(f'"{SETTINGS_KEY}" must be an object, not null')


def test_an_array_replaces_instead_of_merging() -> None:
    config = validate_layers(
        [layer("user", {"snippets": {"a": "A"}}), layer("project", {"snippets": ["b"]})]
    )
    assert config.snippets == ()
    assert len(config.warnings) == 1


def test_a_later_object_replaces_an_earlier_non_object() -> None:
    config = validate_layers(
        [
            layer("user", {"snippets": {"a": "A"}}),
            layer("project", {"snippets": "oops"}),
            layer("client", {"snippets": {"c": "C"}}),
        ]
    )
    assert [(s.name, s.value, s.source) for s in config.snippets] == [("c", "C", "client")]
    assert config.warnings == ()


def test_client_layers_go_over_the_files(tmp_path: Path) -> None:
    user = write_json(tmp_path / "settings.json", {SETTINGS_KEY: {"snippets": {"a": "file"}}})
    init = client_layer("initializationOptions", {"snippets": {"a": "init", "b": "init"}})
    workspace = client_layer("workspace/configuration", {"snippets": {"b": "workspace"}})
    assert init is not None and workspace is not None
    config = load_config(LoadRequest(user_file=user, client_layers=[init, workspace]))
    assert [(s.name, s.value, s.source) for s in config.snippets] == [
        ("a", "init", "initializationOptions"),
        ("b", "workspace", "workspace/configuration"),
    ]
    assert config.sources == (str(user),)


def test_a_client_that_sends_nothing_adds_no_layer(tmp_path: Path) -> None:
    assert client_layer("client", None) is None
    user = write_json(tmp_path / "settings.json", {SETTINGS_KEY: {"snippets": {"a": "file"}}})
    config = load_config(LoadRequest(user_file=user))
    assert snippet_map(config) == {"a": "file"}


def test_a_client_layer_holds_the_namespace_value() -> None:
    assert client_layer("c", {"snippets": {}}) == Layer(
        source="c", settings={SETTINGS_KEY: {"snippets": {}}}
    )


def test_a_client_layer_that_is_not_an_object_is_reported() -> None:
    client = client_layer("client", "oops")
    assert client is not None
    config = validate_layers([layer("user", {"snippets": {"a": "A"}}), client])
    assert config.snippets == ()
    assert config.warnings[0].startswith(f'"{SETTINGS_KEY}" must be an object, not a string')


# --------------------------------------------------------------------------- trust


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A user file with ``u`` and a project folder whose settings file has ``p``."""
    user = write_json(
        tmp_path / "agent" / "settings.json", {SETTINGS_KEY: {"snippets": {"u": "U"}}}
    )
    project = tmp_path / "project"
    project_file = write_json(
        project / ".pi" / "settings.json", {SETTINGS_KEY: {"snippets": {"p": "P"}}}
    )
    return user, project, project_file


def test_an_untrusted_project_file_is_not_read_and_is_reported(
    workspace: tuple[Path, Path, Path],
) -> None:
    user, project, project_file = workspace
    config = load_config(LoadRequest(user_file=user, project_folder=project, trust_project=False))
    assert snippet_map(config) == {"u": "U"}
    assert config.sources == (str(user),)
    assert config.untrusted_project_files == (str(project_file),)
    assert config.warnings == ()


def test_a_trusted_project_file_is_layered_over_the_user_file(
    workspace: tuple[Path, Path, Path],
) -> None:
    user, project, project_file = workspace
    config = load_config(LoadRequest(user_file=user, project_folder=project, trust_project=True))
    assert [(s.name, s.source) for s in config.snippets] == [
        ("p", str(project_file)),
        ("u", str(user)),
    ]
    assert config.sources == (str(user), str(project_file))
    assert config.untrusted_project_files == ()


def test_an_untrusted_project_without_settings_reports_nothing(tmp_path: Path) -> None:
    user = write_json(tmp_path / "settings.json", {})
    (tmp_path / "project").mkdir()
    config = load_config(LoadRequest(user_file=user, project_folder=tmp_path / "project"))
    assert config.untrusted_project_files == ()


def test_a_project_file_that_is_the_user_file_is_read_once(tmp_path: Path) -> None:
    shared = write_json(
        tmp_path / ".pi" / "settings.json", {SETTINGS_KEY: {"snippets": {"a": "A"}}}
    )
    config = load_config(LoadRequest(user_file=shared, project_folder=tmp_path, trust_project=True))
    assert config.sources == (str(shared),)
    assert snippet_map(config) == {"a": "A"}


def test_a_missing_user_file_is_no_source_and_no_warning(tmp_path: Path) -> None:
    config = load_config(LoadRequest(user_file=tmp_path / "absent.json"))
    assert config == Config()


# --------------------------------------------------------------------------- user file path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(
    ("env", "override", "expected"),
    [
        pytest.param({}, None, "~/.pi/agent/settings.json", id="pi-default"),
        pytest.param({"PI_CODING_AGENT_DIR": ""}, None, "~/.pi/agent/settings.json",
                     id="empty-var"),
        pytest.param({"PI_CODING_AGENT_DIR": "/x/agent"}, None, "/x/agent/settings.json", id="var"),
        pytest.param({"PI_CODING_AGENT_DIR": "~/ag"}, None, "~/ag/settings.json", id="var-tilde"),
        pytest.param({"PI_CODING_AGENT_DIR": "/x"}, "/y/s.json", "/y/s.json", id="settings-wins"),
        pytest.param({}, "~/s.json", "~/s.json", id="settings-tilde"),
        pytest.param({}, "rel/s.json", "rel/s.json", id="settings-relative"),
    ],
)  # fmt: skip
def test_user_settings_path(
    home: Path, env: dict[str, str], override: str | None, expected: str
) -> None:
    expected_path = Path(expected.replace("~", str(home), 1))
    assert user_settings_path(env, override) == expected_path


def test_user_settings_path_reads_the_process_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / "agent-dir"))
    assert user_settings_path() == home / "agent-dir" / "settings.json"
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    assert user_settings_path() == home / ".pi" / "agent" / "settings.json"


# --------------------------------------------------------------------------- files


def load_file(path: Path, files: SettingsFiles | None = None) -> Config:
    return load_config(LoadRequest(user_file=path), files)


@pytest.mark.parametrize(
    ("content", "snippets"),
    [
        pytest.param(
            b'\xef\xbb\xbf{"piSimpleSnippets": {"snippets": {"a": "A"}}}', {"a": "A"}, id="bom"
        ),
        pytest.param(
            '{"piSimpleSnippets": {"snippets": {"a": "caf\u00e9 \u4e2d \U0001f600"}}}'.encode(),
            {"a": "caf\u00e9 \u4e2d \U0001f600"},
            id="utf-8",
        ),
        pytest.param(
            b'{"piSimpleSnippets": {"snippets": {"a": "first", "a": "last"}}}',
            {"a": "last"},
            id="duplicate-keys-last-wins",
        ),
    ],
)
def test_settings_files_that_parse(
    tmp_path: Path, content: bytes, snippets: dict[str, str]
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    config = load_file(path)
    assert snippet_map(config) == snippets
    assert config.warnings == ()
    assert config.sources == (str(path),)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param(b"", "is empty", id="empty-file"),
        pytest.param(b"  \n\t \r\n", "is empty", id="whitespace-only"),
        pytest.param(b"\xef\xbb\xbf", "is empty", id="bom-only"),
        pytest.param(b"{ not json", "is not valid JSON", id="invalid-json"),
        pytest.param(b'{"a": 1,}', "is not valid JSON", id="trailing-comma"),
        pytest.param(b'// comment\n{"a": 1}', "is not valid JSON", id="comments"),
        pytest.param(b'{"a": NaN}', "is not valid JSON", id="nan"),
        pytest.param(b'{"a": Infinity}', "is not valid JSON", id="infinity"),
        pytest.param(b'{"a": -Infinity}', "is not valid JSON", id="minus-infinity"),
        pytest.param(b"\xc2\xa0{}", "is not valid JSON", id="nbsp-is-no-json-whitespace"),
        pytest.param(b"[]", "must hold a JSON object, not an array", id="top-level-array"),
        pytest.param(b"null", "must hold a JSON object, not null", id="top-level-null"),
        pytest.param(b"3", "must hold a JSON object, not a number", id="top-level-number"),
        pytest.param(b'"s"', "must hold a JSON object, not a string", id="top-level-string"),
        pytest.param(b"{}\n{}", "is not valid JSON", id="two-documents"),
        pytest.param(b'{"a": "\xff"}', "is not UTF-8 text (byte 7)", id="non-utf-8"),
        pytest.param(b"\xff\xfe{\x00}\x00", "is not UTF-8 text (byte 0)", id="utf-16"),
    ],
)
def test_a_broken_file_is_a_warning_naming_it_and_counts_as_empty(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    config = load_file(path)
    assert config.snippets == ()
    (warning,) = config.warnings
    assert warning.startswith(str(path))
    assert problem in warning
    assert "keeping its last valid content" not in warning


def test_a_broken_user_file_does_not_take_the_project_with_it(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text("{", encoding="utf-8")
    write_json(tmp_path / "p" / ".pi" / "settings.json", {SETTINGS_KEY: {"snippets": {"p": "P"}}})
    config = load_config(
        LoadRequest(user_file=user, project_folder=tmp_path / "p", trust_project=True)
    )
    assert snippet_map(config) == {"p": "P"}
    assert len(config.warnings) == 1


DEEP = 100_000


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param("[" * DEEP + "]" * DEEP, "must hold a JSON object, not an array",
                     id="deep-array-is-json-but-no-object"),
        pytest.param("[" * DEEP, f"is not valid JSON: Unexpected end of JSON input at line 1 "
                     f"column {DEEP + 1}", id="deep-and-unclosed"),
        pytest.param('{"a":' + "[" * DEEP + "}", "is not valid JSON: Unexpected token '}' at "
                     f"line 1 column {DEEP + 6}", id="deep-and-broken"),
    ],
)  # fmt: skip
def test_a_file_nested_deeper_than_python_parses_is_a_warning_not_a_crash(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content, encoding="utf-8")
    assert load_file(path).warnings == (f"{path} {problem}",)


def test_deep_nesting_elsewhere_in_the_file_does_not_hide_the_snippets(tmp_path: Path) -> None:
    """``JSON.parse`` reads any depth, so Pi loads this file; so do we."""
    path = tmp_path / "settings.json"
    deep = "[" * DEEP + "]" * DEEP
    path.write_text(f'{{"other": {deep}, "{SETTINGS_KEY}": {{"snippets": {{"a": "A"}}}}}}')
    config = load_file(path)
    assert snippet_map(config) == {"a": "A"}
    assert config.warnings == ()


def test_two_deep_files_merge_without_a_crash(tmp_path: Path) -> None:
    deep_open, deep_close = '{"a":' * DEEP, "}" * DEEP
    user = tmp_path / "user.json"
    user.write_text(f'{{"x": {deep_open}1{deep_close}, "{SETTINGS_KEY}": {{"snippets": '
                    '{"u": "U"}}}')  # fmt: skip
    project = tmp_path / "p" / ".pi" / "settings.json"
    project.parent.mkdir(parents=True)
    project.write_text(f'{{"x": {deep_open}2{deep_close}}}')
    config = load_config(
        LoadRequest(user_file=user, project_folder=tmp_path / "p", trust_project=True)
    )
    assert snippet_map(config) == {"u": "U"}
    assert config.warnings == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param('{\n  "a": 1\n  "b": 2\n}', "Expected ',' or '}' after property value at "
                     "line 3 column 3", id="missing-comma"),
        pytest.param('{"a": 1,}', "Expected double-quoted property name at line 1 column 9",
                     id="trailing-comma"),
        pytest.param("{\r\n\r\n  x", "Expected property name or '}' at line 3 column 3",
                     id="crlf-lines"),
        pytest.param('{"é😀": 1 x', "Expected ',' or '}' after property value at line 1 "
                     "column 10", id="columns-count-code-points"),
        pytest.param('\ufeff{"a": }', "Unexpected token '}' at line 1 column 7",
                     id="the-bom-is-not-a-column"),
        pytest.param('{"a": NaN}', "Unexpected token 'N' at line 1 column 7", id="nan"),
        pytest.param("", None, id="empty-is-no-error"),
    ],
)  # fmt: skip
def test_a_parse_error_names_javascripts_message_and_the_line_and_column(
    text: str, problem: str | None
) -> None:
    if problem is None:
        assert parse_settings_text(text, "s.json") == {}
        return
    with pytest.raises(SettingsFileError) as info:
        parse_settings_text(text, "s.json")
    assert str(info.value) == f"s.json is not valid JSON: {problem}"


def test_integers_longer_than_python_converts_are_json() -> None:
    """``json.loads`` refuses 4301 digits; ``JSON.parse`` reads them as a double."""
    text = f'{{"big": {"9" * 5000}, "{SETTINGS_KEY}": {{"snippets": {{"a": "A"}}}}}}'
    settings = parse_settings_text(text, "s.json")
    assert settings["big"] == float("inf")


def test_a_directory_instead_of_a_file_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.mkdir()
    config = load_file(path)
    assert config.warnings == (f"{path} is a directory, not a settings file",)


def test_a_half_written_save_keeps_the_last_good_content(tmp_path: Path) -> None:
    path = write_json(tmp_path / "settings.json", {SETTINGS_KEY: {"snippets": {"a": "A"}}})
    files = SettingsFiles()
    assert snippet_map(load_file(path, files)) == {"a": "A"}

    path.write_text('{"piSimpleSnippets": {"snipp', encoding="utf-8")
    config = load_file(path, files)
    assert snippet_map(config) == {"a": "A"}
    (warning,) = config.warnings
    assert warning.startswith(f"{path} is not valid JSON")
    assert warning.endswith("; keeping its last valid content")

    write_json(path, {SETTINGS_KEY: {"snippets": {"b": "B"}}})
    config = load_file(path, files)
    assert snippet_map(config) == {"b": "B"}
    assert config.warnings == ()


def test_the_last_good_content_is_the_latest_good_one(tmp_path: Path) -> None:
    path = write_json(tmp_path / "settings.json", {SETTINGS_KEY: {"snippets": {"a": "A"}}})
    files = SettingsFiles()
    load_file(path, files)
    write_json(path, {SETTINGS_KEY: {"snippets": {"b": "B"}}})
    load_file(path, files)
    path.write_bytes(b"\xff")
    assert snippet_map(load_file(path, files)) == {"b": "B"}


def test_a_directory_replacing_a_good_file_keeps_its_last_content(tmp_path: Path) -> None:
    path = write_json(tmp_path / "settings.json", {SETTINGS_KEY: {"snippets": {"a": "A"}}})
    files = SettingsFiles()
    load_file(path, files)
    path.unlink()
    path.mkdir()
    config = load_file(path, files)
    assert snippet_map(config) == {"a": "A"}
    assert config.warnings == (
        f"{path} is a directory, not a settings file; keeping its last valid content",
    )


def test_a_deleted_file_drops_its_content(tmp_path: Path) -> None:
    path = write_json(tmp_path / "settings.json", {SETTINGS_KEY: {"snippets": {"a": "A"}}})
    files = SettingsFiles()
    load_file(path, files)
    path.unlink()
    config = load_file(path, files)
    assert config.snippets == ()
    assert config.warnings == ()
    assert config.sources == ()
    # Gone means gone: a broken file that reappears has no last good content.
    path.write_text("{", encoding="utf-8")
    config = load_file(path, files)
    assert config.snippets == ()
    assert "keeping its last valid content" not in config.warnings[0]


def test_each_file_keeps_its_own_last_good_content(tmp_path: Path) -> None:
    user = write_json(tmp_path / "user.json", {SETTINGS_KEY: {"snippets": {"u": "U"}}})
    project_file = write_json(
        tmp_path / "p" / ".pi" / "settings.json", {SETTINGS_KEY: {"snippets": {"p": "P"}}}
    )
    files = SettingsFiles()
    request = LoadRequest(user_file=user, project_folder=tmp_path / "p", trust_project=True)
    load_config(request, files)
    project_file.write_text("{", encoding="utf-8")
    write_json(user, {SETTINGS_KEY: {"snippets": {"u2": "U2"}}})
    config = load_config(request, files)
    assert snippet_map(config) == {"p": "P", "u2": "U2"}
    assert len(config.warnings) == 1


# --------------------------------------------------------------------------- the model


def test_a_generation_is_immutable() -> None:
    config = validate({"snippets": {"a": "A"}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.shortcut = "ctrl+s"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        config.snippets[0].value = "B"  # type: ignore[misc]


def test_the_schema_uses_the_name_rule() -> None:
    schema = settings_json_schema()
    namespace = schema["properties"][SETTINGS_KEY]  # type: ignore[index]
    pattern = namespace["properties"]["snippets"]["propertyNames"]["pattern"]
    assert pattern == f"^{NAME_PATTERN}$"
    assert namespace["properties"]["expandOnCompletion"]["type"] == "boolean"


@pytest.mark.parametrize(
    "table",
    [
        pytest.param({"ok": "A", "Bad": "B"}, id="an-invalid-name"),
        pytest.param({"ok": "A", "a\nb": "B"}, id="a-name-with-a-line-break-of-valid-halves"),
        pytest.param({"ok": "A", "b": ""}, id="an-empty-value"),
        pytest.param({"ok": "A", "b": 1}, id="a-number-value"),
        pytest.param({"ok": "A", "b": None}, id="a-null-value"),
        pytest.param({"ok": "A", "b": ["x"]}, id="a-list-value"),
        pytest.param({"ok": "A", "b-": "B"}, id="a-name-ending-in-punctuation"),
    ],
)
def test_one_bad_entry_among_good_ones_is_skipped_and_named(table: dict[str, object]) -> None:
    """Validation tells a whole table of good entries at once; one bad entry among
    them is still found, skipped and named, and the good ones kept."""
    bad = next(name for name in table if name != "ok")
    config = validate({"snippets": table})
    assert [s.name for s in config.snippets] == ["ok"]
    assert len(config.warnings) == 1
    assert json.dumps(bad) in config.warnings[0]


def test_a_large_table_of_good_entries_is_kept_whole_and_sorted() -> None:
    table = {f"s{i:05d}": f"text {i}" for i in reversed(range(3000))}
    config = validate({"snippets": table})
    assert config.warnings == ()
    assert [(s.name, s.value) for s in config.snippets] == sorted(table.items())


def test_a_project_is_untrusted_unless_the_request_says_otherwise(
    workspace: tuple[Path, Path, Path],
) -> None:
    """Security: a project's settings file is read only when trust is given explicitly;
    a request that says nothing about trust reads the user file alone."""
    user, project, project_file = workspace
    config = load_config(LoadRequest(user_file=user, project_folder=project))
    assert snippet_map(config) == {"u": "U"}
    assert config.untrusted_project_files == (str(project_file),)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        pytest.param("\ufeffctrl+s\u3000", "ctrl+s", id="js-whitespace-trimmed"),
        pytest.param("\x1cctrl+s", None, id="file-separator-is-not-js-whitespace"),
        pytest.param("ctrl+s\x85", None, id="nel-is-not-js-whitespace"),
    ],
)
def test_the_shortcut_is_trimmed_as_javascript_trims(raw: str, normalized: str | None) -> None:
    assert normalize_shortcut(raw) == normalized


@pytest.mark.parametrize(
    ("text", "empty"),
    [
        pytest.param("", True, id="nothing"),
        pytest.param("\ufeff \n\t\u3000\u2028", True, id="bom-and-js-whitespace"),
        pytest.param("\x1c", False, id="file-separator-is-text"),
        pytest.param("\x85", False, id="nel-is-text"),
        pytest.param(" {} ", False, id="an-object"),
    ],
)
def test_an_empty_settings_file_is_blank_to_javascript(text: str, empty: bool) -> None:
    """An empty or blank file is a save in progress (``{}``, reported); a file holding
    anything JavaScript's ``trim`` keeps is parsed, and fails as JSON if it is not."""
    assert settings_text_is_empty(text) is empty


def test_a_load_warning_lists_every_problem_in_full() -> None:
    """The separators matter: the warning is what a person reads."""
    config = validate(
        {
            "shortcut": 3,
            "expandOnCompletion": "yes",
            "snippets": {"Bad": "x", "ok": "fine", "empty": "", "also bad": "y"},
        }
    )
    assert config.warnings == (
        "`shortcut` must be a string, not a number; ignoring it",
        "`expandOnCompletion` must be true or false, not a string; ignoring it "
        "(snippets are inserted as markers)",
        'ignored 3 snippet entries: "Bad" (invalid name), "empty" (value must be a '
        'non-empty string), "also bad" (invalid name)',
    )


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        pytest.param({"a": (1, [2, (3,)])}, {"a": [1, [2, [3]]]}, id="tuples-become-lists"),
        pytest.param({1: "x"}, {"1": "x"}, id="keys-become-strings"),
        pytest.param(
            collections.namedtuple("NT", "snippets")({"a": "A"}),
            {"snippets": {"a": "A"}},
            id="namedtuples-become-objects",
        ),
        pytest.param(types.MappingProxyType({"a": 1}), {"a": 1}, id="any-mapping"),
        pytest.param("text", "text", id="a-string-stays"),
        pytest.param(None, None, id="null-stays"),
    ],
)
def test_client_data_becomes_plain_json(value: object, plain: object) -> None:
    """pygls hands unknown JSON over as namedtuples and tuples; validation and merging
    see only dicts, lists and scalars."""
    assert plain_json(value) == plain


def test_the_schema_states_the_value_rules() -> None:
    """Editors check settings files with this schema: values are non-empty strings,
    ``expandOnCompletion`` a boolean defaulting to false, ``shortcut`` a string."""
    schema = settings_json_schema()
    namespace = schema["properties"][SETTINGS_KEY]  # type: ignore[index]
    assert namespace["type"] == "object"
    properties = namespace["properties"]
    snippets = properties["snippets"]
    assert snippets["type"] == "object"
    assert snippets["additionalProperties"] == {"type": "string", "minLength": 1}
    assert properties["shortcut"]["type"] == "string"
    assert properties["expandOnCompletion"] == {
        "type": "boolean",
        "default": False,
        "description": properties["expandOnCompletion"]["description"],
    }
    assert schema["type"] == "object"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for part in (namespace, snippets, properties["shortcut"], properties["expandOnCompletion"]):
        assert part["description"]


@pytest.mark.parametrize(
    ("table", "usable"),
    [
        pytest.param({}, True, id="no-entries"),
        pytest.param({"a": "A", "b.c-1": "B"}, True, id="all-good"),
        pytest.param({"a": "A", "a\nb": "B"}, False, id="a-name-with-a-line-break"),
        pytest.param({"a\n": "A"}, False, id="a-name-ending-in-a-line-break"),
        pytest.param({"a": "A", "Bad": "B"}, False, id="an-invalid-name"),
        pytest.param({"a": "A", "b": ""}, False, id="an-empty-value"),
        pytest.param({"a": "A", "b": 1}, False, id="a-number"),
        pytest.param({"a": "A", "b": None}, False, id="null"),
    ],
)
def test_a_table_is_all_usable_exactly_when_every_entry_is(
    table: dict[str, object], usable: bool
) -> None:
    """The fast check of a whole table agrees with the entry-by-entry rule."""
    from pi_snippets_lsp.core.config import _all_usable

    assert _all_usable(table) is usable
    assert (check_namespace({"snippets": table}).problems == ()) is usable


def test_the_generation_warning_joins_every_problem() -> None:
    config = validate({"shortcut": 3, "snippets": {"Bad": "x"}})
    assert config.warning_message() == (
        "pi-simple-snippets: `shortcut` must be a string, not a number; ignoring it; "
        'ignored 1 snippet entry: "Bad" (invalid name)'
    )
    assert validate({"snippets": {"ok": "x"}}).warning_message() is None


def test_an_unusable_file_is_remembered_by_its_path(tmp_path: Path) -> None:
    """A reload settles a save in progress when a file was unusable: the session asks
    which files were."""
    good = write_json(tmp_path / "good.json", {})
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    files = SettingsFiles()
    files.read(good)
    files.read(bad)
    assert files.unusable == {str(bad)}
    bad.write_text("{}", encoding="utf-8")
    files.read(bad)
    assert files.unusable == set()


def test_a_named_settings_file_that_is_missing_is_a_warning(tmp_path: Path) -> None:
    """``--settings FILE`` names a file the user expects: its absence is said; Pi's
    default location may simply not exist yet."""
    missing = tmp_path / "nowhere.json"
    named = load_config(LoadRequest(user_file=missing, user_file_required=True))
    assert named.warnings == (f"settings file {missing} does not exist",)
    default = load_config(LoadRequest(user_file=missing))
    assert default.warnings == ()


def test_a_named_settings_file_that_is_present_or_broken_is_not_called_missing(
    tmp_path: Path,
) -> None:
    present = write_json(tmp_path / "s.json", {SETTINGS_KEY: {"snippets": {"a": "A"}}})
    assert load_config(LoadRequest(user_file=present, user_file_required=True)).warnings == ()
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    [warning] = load_config(LoadRequest(user_file=broken, user_file_required=True)).warnings
    assert "does not exist" not in warning and "is not valid JSON" in warning


def test_each_snippet_names_the_layer_that_last_set_it() -> None:
    config = validate_layers(
        [
            Layer("user", {SETTINGS_KEY: {"snippets": {"a": "1", "b": "2"}}}),
            Layer("project", {SETTINGS_KEY: {"snippets": {"b": "3"}}}),
            Layer("options", {SETTINGS_KEY: {"shortcut": "ctrl+s"}}),
        ]
    )
    assert [(s.name, s.value, s.source) for s in config.snippets] == [
        ("a", "1", "user"),
        ("b", "3", "project"),
    ]


def test_a_table_wiped_by_a_non_object_and_set_again_names_its_new_layer() -> None:
    config = validate_layers(
        [
            Layer("user", {SETTINGS_KEY: {"snippets": {"a": "1", "b": "2"}}}),
            Layer("project", {SETTINGS_KEY: {"snippets": 3}}),
            Layer("options", {SETTINGS_KEY: {"snippets": {"b": "4"}}}),
        ]
    )
    assert [(s.name, s.value, s.source) for s in config.snippets] == [("b", "4", "options")]
