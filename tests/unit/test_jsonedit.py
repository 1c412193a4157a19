"""Minimal edits of JSON and JSONC config files (``agents.jsonedit``), and the two
pieces of ``settings`` they build on: ``jsontree.blank_jsonc`` and
``save_snippet.JsonStyle.value``.

docs/agents.md, "What setup changes": one insertion in the file's own style, every other
byte kept, and a removal that is the insertion's exact inverse.
"""

from __future__ import annotations

import json

import pytest

from pi_snippets_lsp.agents.jsonedit import (
    ConfigFileError,
    add_item,
    json_value,
    remove_items,
    remove_member,
    set_member,
)
from pi_snippets_lsp.settings.jsontree import blank_jsonc, parse_jsonc
from pi_snippets_lsp.settings.save_snippet import JsonStyle

ENTRY = {"command": "x", "args": ["mcp"]}


# ------------------------------------------------------------------ blank_jsonc


@pytest.mark.parametrize(
    ("text", "blanked"),
    [
        ('{"a": 1} // c', '{"a": 1}     '),
        ('{"a": "// no"}', '{"a": "// no"}'),
        ('{"a": "/* no */"}', '{"a": "/* no */"}'),
        ('{"a": "x\\"//"}', '{"a": "x\\"//"}'),
        ("{/* a\nb */}", "{    \n    }"),
        ("{/* a\r\nb */}", "{    \r\n    }"),
        ('{"a": [1, 2,],}', '{"a": [1, 2 ] }'),
        ('{"a": 1, // c\n}', '{"a": 1  // c\n}'.replace("// c", "    ")),
        ('{"a": 1, /* c */ }', '{"a": 1          }'),
        ('{"a": 1,\n\t}', '{"a": 1 \n\t}'),
        ("[1, /* open", "[1,        "),
        ('{"a,": 1}', '{"a,": 1}'),
        ("{} //x\r{}", "{}    \r{}"),
        ('{"a": 1,, }', '{"a": 1,  }'),
    ],
)
def test_blank_jsonc_turns_comments_and_trailing_commas_into_spaces(
    text: str, blanked: str
) -> None:
    assert blank_jsonc(text) == blanked
    assert len(blank_jsonc(text)) == len(text)


def test_parse_jsonc_spans_slice_the_original_text() -> None:
    text = '// head\n{\n  /* c */ "a": {"b": [1,]}, // tail\n}\n'
    root = parse_jsonc(text)
    assert root.value == {"a": {"b": [1]}}
    node = root.find(("a", "b"))
    assert node is not None and text[node.start : node.end] == "[1,]"


# ------------------------------------------------------------------ JsonStyle.value


STYLE = JsonStyle("\n", "  ", ": ")


@pytest.mark.parametrize(
    ("value", "indent", "text"),
    [
        ("s", "", '"s"'),
        (3, "", "3"),
        (True, "", "true"),
        ([], "", "[]"),
        ({}, "", "{}"),
        (["a", "b"], "", '["a", "b"]'),
        ({"a": 1}, "", '{\n  "a": 1\n}'),
        ({"a": 1, "b": [2]}, "  ", '{\n    "a": 1,\n    "b": [2]\n  }'),
        ([{"a": 1}], "", '[\n  {\n    "a": 1\n  }\n]'),
        ([[1], 2], "", "[\n  [1],\n  2\n]"),
        ({"a": 1, "b": {"c": 2}}, None, '{"a": 1, "b": {"c": 2}}'),
        ([{"a": 1}, 2], None, '[{"a": 1}, 2]'),
        ({"é": "ü"}, None, '{"é": "ü"}'),
    ],
)
def test_json_style_lays_out_any_value(value: object, indent: str | None, text: str) -> None:
    assert STYLE.value(value, indent) == text
    assert json.loads(text) == value


def test_json_style_uses_the_files_line_break_indent_and_colon() -> None:
    style = JsonStyle("\r\n", "\t", " : ")
    assert (
        style.value({"a": [{"b": 1}]}, "")
        == '{\r\n\t"a" : [\r\n\t\t{\r\n\t\t\t"b" : 1\r\n\t\t}\r\n\t]\r\n}'
    )


# ------------------------------------------------------------------ set_member / remove_member


def roundtrip(text: str, path: tuple[str, ...], expected: str) -> None:
    """Setting ``ENTRY`` at ``path`` gives ``expected``; removing it gives ``text``."""
    added = set_member(text, "f", path, "pi", ENTRY)
    assert added == expected
    assert json.loads(blank_jsonc(added)) == json.loads(blank_jsonc(expected))
    created = {path[:i] for i in range(1, len(path) + 1) if _lacks(text, path[:i])}
    assert remove_member(added, "f", path, "pi", created) == text


def _lacks(text: str, path: tuple[str, ...]) -> bool:
    value: object = json_value(text, "f")
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return True
        value = value[key]
    return False


def test_set_member_after_the_last_member_in_the_files_style() -> None:
    roundtrip(
        '{\n    "s": {\n        "a": 1,\n        "b": 2\n    }\n}\n',
        ("s",),
        '{\n    "s": {\n        "a": 1,\n        "b": 2,\n        "pi": {\n'
        '            "command": "x",\n            "args": ["mcp"]\n        }\n    }\n}\n',
    )


def test_set_member_in_a_one_line_file_stays_on_one_line() -> None:
    roundtrip(
        '{"s": {"a": 1}}',
        ("s",),
        '{"s": {"a": 1, "pi": {"command": "x", "args": ["mcp"]}}}',
    )


def test_set_member_creates_the_missing_objects_and_remove_takes_them_back() -> None:
    roundtrip(
        '{\n  "k": 1\n}\n',
        ("s", "t"),
        '{\n  "k": 1,\n  "s": {\n    "t": {\n      "pi": {\n        "command": "x",\n'
        '        "args": ["mcp"]\n      }\n    }\n  }\n}\n',
    )


def test_set_member_into_an_empty_object_that_stays_after_removal() -> None:
    roundtrip(
        '{\n  "s": {}\n}\n',
        ("s",),
        '{\n  "s": {\n    "pi": {\n      "command": "x",\n      "args": ["mcp"]\n    }\n  }\n}\n',
    )


def test_set_member_keeps_comments_and_drops_no_trailing_comma() -> None:
    roundtrip(
        '{\n  // servers\n  "s": {\n    "a": 1, // one\n  },\n}\n',
        ("s",),
        '{\n  // servers\n  "s": {\n    "a": 1,\n    "pi": {\n      "command": "x",\n'
        '      "args": ["mcp"]\n    }, // one\n  },\n}\n',
    )


def test_set_member_on_a_blank_or_missing_file_writes_a_new_one() -> None:
    new = '{\n  "s": {\n    "pi": {\n      "command": "x",\n      "args": ["mcp"]\n    }\n  }\n}\n'
    assert set_member("", "f", ("s",), "pi", ENTRY) == new
    assert set_member(" \n", "f", ("s",), "pi", ENTRY) == new


def test_set_member_is_idempotent_and_updates_a_different_value_in_place() -> None:
    once = set_member('{"s": {}}', "f", ("s",), "pi", ENTRY)
    assert set_member(once, "f", ("s",), "pi", ENTRY) == once
    assert (
        set_member(once, "f", ("s",), "pi", {"command": "y"}) == '{"s": {"pi": {"command": "y"}}}'
    )
    text = '{\n  "s": {\n    "pi": 1,\n    "z": 2\n  }\n}'
    assert set_member(text, "f", ("s",), "pi", {"a": 1}) == (
        '{\n  "s": {\n    "pi": {\n      "a": 1\n    },\n    "z": 2\n  }\n}'
    )


def test_remove_member_of_the_first_of_several_takes_its_separator() -> None:
    text = '{"s": {"pi": 1, "z": 2}}'
    assert remove_member(text, "f", ("s",), "pi") == '{"s": {"z": 2}}'
    assert remove_member(text, "f", ("s",), "none") == text
    assert remove_member(text, "f", ("t",), "pi") == text
    assert remove_member('{"s": {"pi": 1}}', "f", ("s",), "pi") == '{"s": {}}'
    assert remove_member('{"s": {"pi": 1}}', "f", ("s",), "pi", {("s",)}) == "{}"


def test_remove_member_takes_the_occurrence_json_parse_keeps() -> None:
    text = '{"s": {"pi": 1, "a": 2, "pi": 3}}'
    assert remove_member(text, "f", ("s",), "pi") == '{"s": {"pi": 1, "a": 2}}'


# ------------------------------------------------------------------ add_item / remove_items


def ours(item: object) -> bool:
    return isinstance(item, dict) and item.get("id") == "pi"


PI = {"id": "pi", "n": 1}


@pytest.mark.parametrize(
    ("text", "added"),
    [
        ('{"h": {"e": [{"id": "a"}]}}', '{"h": {"e": [{"id": "a"}, {"id": "pi", "n": 1}]}}'),
        (
            '{\n  "h": {\n    "e": [\n      {"id": "a"},\n      {"id": "b"}\n    ]\n  }\n}',
            '{\n  "h": {\n    "e": [\n      {"id": "a"},\n      {"id": "b"},\n      {\n'
            '        "id": "pi",\n        "n": 1\n      }\n    ]\n  }\n}',
        ),
        (
            '{\n  "h": {\n    "e": [\n      {"id": "a"}\n    ]\n  }\n}',
            '{\n  "h": {\n    "e": [\n      {"id": "a"},\n      {\n        "id": "pi",\n'
            '        "n": 1\n      }\n    ]\n  }\n}',
        ),
        (
            '{\n  "h": {\n    "e": []\n  }\n}',
            '{\n  "h": {\n    "e": [\n      {\n        "id": "pi",\n        "n": 1\n      }\n'
            "    ]\n  }\n}",
        ),
        ('{"h": {"e": []}}', '{"h": {"e": [{"id": "pi", "n": 1}]}}'),
        (
            '{"h": {"e": [1, // c\n 2]}}',
            '{"h": {"e": [1, // c\n 2,\n {\n   "id": "pi",\n   "n": 1\n }]}}',
        ),
    ],
)
def test_add_item_appends_in_the_arrays_style_and_removal_gives_the_text_back(
    text: str, added: str
) -> None:
    assert add_item(text, "f", ("h", "e"), PI, ours) == added
    assert remove_items(added, "f", ("h", "e"), ours) == text


def test_add_item_creates_what_is_missing_and_removal_takes_it_back() -> None:
    text = '{\n  "a": 1\n}\n'
    added = add_item(text, "f", ("h", "e"), PI, ours)
    assert added == (
        '{\n  "a": 1,\n  "h": {\n    "e": [\n      {\n        "id": "pi",\n        "n": 1\n'
        "      }\n    ]\n  }\n}\n"
    )
    assert remove_items(added, "f", ("h", "e"), ours, {("h",), ("h", "e")}) == text
    with_h = '{"h": {"x": []}}'
    added = add_item(with_h, "f", ("h", "e"), PI, ours)
    assert added == '{"h": {"x": [], "e": [{"id": "pi", "n": 1}]}}'
    assert remove_items(added, "f", ("h", "e"), ours, {("h", "e")}) == with_h
    assert add_item("", "f", ("h", "e"), PI, ours) == (
        '{\n  "h": {\n    "e": [\n      {\n        "id": "pi",\n        "n": 1\n      }\n'
        "    ]\n  }\n}\n"
    )


def test_add_item_replaces_an_item_of_ours_that_differs_and_keeps_one_that_does_not() -> None:
    text = '{"h": {"e": [{"id": "pi", "n": 0}, {"id": "b"}]}}'
    assert add_item(text, "f", ("h", "e"), PI, ours) == (
        '{"h": {"e": [{"id": "pi", "n": 1}, {"id": "b"}]}}'
    )
    same = '{"h": {"e": [{"id": "pi", "n": 1}]}}'
    assert add_item(same, "f", ("h", "e"), PI, ours) == same


def test_remove_items_takes_every_item_of_ours() -> None:
    text = '{"h": {"e": [{"id": "pi"}, {"id": "a"}, {"id": "pi", "n": 2}]}}'
    assert remove_items(text, "f", ("h", "e"), ours) == '{"h": {"e": [{"id": "a"}]}}'
    assert remove_items('{"h": {"e": 3}}', "f", ("h", "e"), ours) == '{"h": {"e": 3}}'
    assert remove_items("{}", "f", ("h", "e"), ours) == "{}"


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"a": 1,, }',
            "f is not valid JSON (Expected double-quoted property name at line 1 column 11)",
        ),
        ("[]", "f does not hold a JSON object"),
        ('{"s": []}', "s in f is not an object"),
        ('{"s": {"t": 1}}', "s.t in f is not an object"),
    ],
)
def test_a_file_it_cannot_edit_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ConfigFileError) as caught:
        set_member(text, "f", ("s", "t"), "pi", 1)
    assert str(caught.value) == message


def test_an_array_that_is_not_one_is_refused() -> None:
    with pytest.raises(ConfigFileError, match=r"^h\.e in f is not an array$"):
        add_item('{"h": {"e": {}}}', "f", ("h", "e"), PI, ours)
    with pytest.raises(ConfigFileError, match=r"^h in f is not an object$"):
        add_item('{"h": []}', "f", ("h", "e"), PI, ours)


def test_json_value_of_a_blank_text_is_an_empty_object() -> None:
    assert json_value("", "f") == {}
    assert json_value(' // c\n{"a": 1,}', "f") == {"a": 1}
