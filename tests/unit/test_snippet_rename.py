"""Renaming and deleting a snippet in a settings file's text (docs/mcp.md, "Writing
snippets"): only the snippet's members change, and a file that cannot take the change
is refused with what to fix."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_snippets_lsp.settings.jsontree import parse
from pi_snippets_lsp.settings.snippet_rename import (
    SnippetFileError,
    deleted_text,
    removal_edits,
    renamed_text,
    snippets_table,
)

PATH = "/home/u/.pi/agent/settings.json"
FILE = (
    '{\r\n  "theme": "dark",\r\n  "piSimpleSnippets": {\r\n    "snippets": {\r\n'
    '      "review": "R",\r\n      "brief": "B",\r\n      "last": "L"\r\n    }\r\n  }\r\n}\r\n'
)


def table_of(text: str) -> dict[str, object]:
    value = json.loads(text)["piSimpleSnippets"]["snippets"]
    assert isinstance(value, dict)
    return value


# --------------------------------------------------------------------------- delete


def test_deleting_a_first_or_middle_member_takes_its_line_and_comma():
    assert deleted_text(FILE, "review", PATH) == FILE.replace('      "review": "R",\r\n', "")
    assert deleted_text(FILE, "brief", PATH) == FILE.replace('      "brief": "B",\r\n', "")


def test_deleting_the_last_member_takes_the_comma_before_it():
    assert deleted_text(FILE, "last", PATH) == FILE.replace(',\r\n      "last": "L"', "")


def test_deleting_the_only_member_leaves_an_empty_table():
    text = '{"piSimpleSnippets": {"snippets": {\n  "one": "1"\n}, "x": 1}}'
    assert deleted_text(text, "one", PATH) == '{"piSimpleSnippets": {"snippets": {}, "x": 1}}'


def test_every_duplicate_goes_and_the_rest_stays_in_order():
    text = (
        '{"piSimpleSnippets": {"snippets": {"d": 1, "a": "A", "d": 2, "d": 3, "b": "B", "d": 4}}}'
    )
    result = deleted_text(text, "d", PATH)
    assert result == '{"piSimpleSnippets": {"snippets": {"a": "A", "b": "B"}}}'
    adjacent = '{"piSimpleSnippets": {"snippets": {"a": "A", "d": 1, "d": 2}}}'
    assert deleted_text(adjacent, "d", PATH) == '{"piSimpleSnippets": {"snippets": {"a": "A"}}}'
    leading = '{"piSimpleSnippets": {"snippets": {"d": 1, "d": 2, "a": "A"}}}'
    assert deleted_text(leading, "d", PATH) == '{"piSimpleSnippets": {"snippets": {"a": "A"}}}'
    only = '{"piSimpleSnippets": {"snippets": {"d": 1, "d": 2}}}'
    assert deleted_text(only, "d", PATH) == '{"piSimpleSnippets": {"snippets": {}}}'


def test_a_leading_comma_layout_stays_valid():
    text = '{"piSimpleSnippets": {"snippets": { "a": "A"\n, "b": "B"\n, "c": "C"\n}}}'
    assert deleted_text(text, "a", PATH) == (
        '{"piSimpleSnippets": {"snippets": { "b": "B"\n, "c": "C"\n}}}'
    )
    assert deleted_text(text, "c", PATH) == (
        '{"piSimpleSnippets": {"snippets": { "a": "A"\n, "b": "B"\n}}}'
    )


def test_an_escaped_key_is_the_name_it_spells():
    text = '{"piSimpleSnippets": {"snippets": {"a": "A", "re\\u0076iew": "R"}}}'
    assert deleted_text(text, "review", PATH) == '{"piSimpleSnippets": {"snippets": {"a": "A"}}}'


def test_no_member_no_edit():
    table = parse('{"a": 1}')
    assert removal_edits(table, "b") == []
    empty = parse("{}")
    assert removal_edits(empty, "b") == []


names = st.sampled_from(["a", "b", "c", "d"])


@given(keys=st.lists(names, min_size=1, max_size=8), gone=names, pretty=st.booleans())
def test_delete_keeps_every_other_member_in_order(keys: list[str], gone: str, pretty: bool):
    members = [(key, i) for i, key in enumerate(keys)]
    inner = ",\n    ".join(f'"{k}": {v}' for k, v in members)
    if pretty:
        text = '{\n  "piSimpleSnippets": {"snippets": {\n    ' + inner + "\n  }}\n}\n"
    else:
        text = '{"piSimpleSnippets":{"snippets":{' + inner.replace("\n    ", "") + "}}}"
    if gone not in keys:
        with pytest.raises(SnippetFileError):
            deleted_text(text, gone, PATH)
        return
    result = deleted_text(text, gone, PATH)
    kept = [(k, v) for k, v in members if k != gone]
    table = parse(result).find(("piSimpleSnippets", "snippets"))
    assert table is not None
    assert [(m.key, m.value.value) for m in table.members] == kept
    assert result.startswith(text[: text.index("{", 2)])


# --------------------------------------------------------------------------- rename


def test_a_rename_changes_the_key_and_nothing_else():
    result = renamed_text(FILE, "brief", "short", PATH)
    assert result == FILE.replace('"brief":', '"short":')
    assert list(table_of(result)) == ["review", "short", "last"]


def test_a_rename_of_a_duplicate_renames_every_occurrence():
    text = '{"piSimpleSnippets": {"snippets": {"d": "1", "d": "2"}}}'
    assert renamed_text(text, "d", "e", PATH) == text.replace('"d"', '"e"')


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": ', f"{PATH} is not valid JSON (Unexpected end of JSON input at line 1 column 7)"),
        ("[1]", f"{PATH} must hold a JSON object; fix it first"),
        ('{"piSimpleSnippets": 1}', f'"piSimpleSnippets" in {PATH} is not an object; fix it first'),
        (
            '{"piSimpleSnippets": {"snippets": []}}',
            f'"piSimpleSnippets.snippets" in {PATH} is not an object; fix it first',
        ),
    ],
)
def test_a_file_that_cannot_take_a_change_is_refused(text: str, message: str):
    changes = (lambda: deleted_text(text, "a", PATH), lambda: renamed_text(text, "a", "b", PATH))
    for change in changes:
        with pytest.raises(SnippetFileError) as refused:
            change()
        assert str(refused.value).startswith(message)
    assert str(refused.value).endswith("; fix it first")


@pytest.mark.parametrize(
    "text",
    ["{}", '{"piSimpleSnippets": {}}', '{"piSimpleSnippets": {"snippets": {"b": "B"}}}'],
)
def test_a_file_that_does_not_define_the_name_is_refused(text: str):
    table = snippets_table(text, PATH)
    assert table is None or not table.occurrences("a")
    changes = (lambda: deleted_text(text, "a", PATH), lambda: renamed_text(text, "a", "c", PATH))
    for change in changes:
        with pytest.raises(SnippetFileError, match=f"^{PATH} does not define a \\(it changed"):
            change()


def test_the_table_is_the_one_json_parse_keeps():
    text = (
        '{"piSimpleSnippets": {"snippets": {"a": 1}}, "piSimpleSnippets": {"snippets": {"b": 2}}}'
    )
    table = snippets_table(text, PATH)
    assert table is not None and [m.key for m in table.members] == ["b"]
    assert snippets_table('{"piSimpleSnippets": {"other": 1}}', PATH) is None
