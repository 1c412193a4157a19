"""A settings file's snippet keys as written (docs/lsp.md, "Rename", "Symbols"): their
spans, the key under a cursor, and the rename's exact edits."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.edits import apply_edits
from pi_snippets_lsp.settings.snippet_keys import SnippetKey, key_at, rename_edits, snippet_keys

from .conftest import examples

FILE = (
    '{\r\n  "theme": {"snippets": {"review": 1}},\r\n  "piSimpleSnippets": {\r\n'
    '    "snippets": {\r\n      "review": "R 😀",\r\n      "re\\u0062ase": "B",\r\n'
    '      "dup": "first", "bad": 3,\r\n      "dup": "second"\r\n    }\r\n  }\r\n}\r\n'
)


def test_every_member_in_text_order_with_its_spans():
    keys = snippet_keys(FILE)
    assert [k.name for k in keys] == ["review", "rebase", "dup", "bad", "dup"]
    review = keys[0]
    assert FILE[review.key_start : review.key_end] == '"review"'
    assert FILE[review.start : review.end] == '"review": "R 😀"'
    assert review.value == "R 😀"
    assert FILE[keys[1].key_start : keys[1].key_end] == '"re\\u0062ase"'
    assert keys[3].value is None  # not a string
    assert keys[4].value == "second"


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[1]", '{"piSimpleSnippets": 1}', '{"piSimpleSnippets": {"snippets": []}}'],
)
def test_no_table_no_keys(text):
    assert snippet_keys(text) == []
    assert key_at(text, 0) is None
    assert rename_edits(text, "a", "b") == []


def test_the_key_under_a_cursor_includes_its_quotes_ends():
    start = FILE.index('"dup": "second"')
    for offset in (start, start + 2, start + 5):
        found = key_at(FILE, offset)
        assert found is not None and found.key_start == start and found.value == "second"
    assert key_at(FILE, start - 1) is None
    assert key_at(FILE, start + 6) is None  # the colon
    assert key_at(FILE, FILE.index('"review": 1') + 2) is None  # not under the namespace


def test_a_rename_edits_every_occurrence_and_nothing_else():
    renamed = apply_edits(FILE, rename_edits(FILE, "dup", "dup2"))
    assert renamed == FILE.replace('"dup":', '"dup2":')
    assert json.loads(renamed)["piSimpleSnippets"]["snippets"]["dup2"] == "second"
    escaped = apply_edits(FILE, rename_edits(FILE, "rebase", "rebase-main"))
    assert escaped == FILE.replace('"re\\u0062ase"', '"rebase-main"')
    assert rename_edits(FILE, "absent", "x") == []


names = st.from_regex(r"[a-z0-9](?:[a-z0-9._-]{0,6}[a-z0-9])?", fullmatch=True)


@settings(max_examples=examples(100))
@given(st.dictionaries(names, st.text(max_size=5), min_size=1, max_size=5), st.data())
def test_a_rename_of_any_table_moves_the_value_to_the_new_name(table, data):
    text = json.dumps({"x": 1, "piSimpleSnippets": {"snippets": table}}, indent=2)
    old = data.draw(st.sampled_from(sorted(table)))
    new = data.draw(names.filter(lambda n: n not in table))
    renamed = json.loads(apply_edits(text, rename_edits(text, old, new)))
    expected = {new if k == old else k: v for k, v in table.items()}
    assert renamed == {"x": 1, "piSimpleSnippets": {"snippets": expected}}
    for key in snippet_keys(text):
        assert key_at(text, key.key_start) == key == key_at(text, key.key_end)
        assert (
            isinstance(key, SnippetKey)
            and json.loads(text[key.key_start : key.key_end]) == key.name
        )
