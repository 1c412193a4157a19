"""Saving a text as a snippet: its name, and an edit that adds one member and changes no
other byte of the settings file (docs/lsp.md, "Save selection as snippet")."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.config import SETTINGS_KEY
from pi_snippets_lsp.core.edits import TextEdit, apply_edits
from pi_snippets_lsp.core.grammar import is_valid_name
from pi_snippets_lsp.settings.layers import parse_settings_text
from pi_snippets_lsp.settings.save_snippet import (
    FALLBACK_NAME,
    SaveSnippetError,
    derive_name,
    file_names,
    name_problem,
    snippet_insertion,
)

from .conftest import examples

# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("text", "taken", "expected"),
    [
        pytest.param("Use your MCP tools to find", set(), "use-your-mcp", id="first-three-words"),
        pytest.param("## Review: the Café code", set(), "review-the-cafe", id="punctuation"),
        pytest.param("Use your MCP tools", {"use-your-mcp"}, "use-your-mcp-2", id="taken"),
        pytest.param("Use your MCP", {"use-your-mcp", "use-your-mcp-2"}, "use-your-mcp-3",
                     id="taken-twice"),
        pytest.param("中文 😀 !!!", set(), FALLBACK_NAME, id="nothing-usable"),
        pytest.param("中文", {FALLBACK_NAME}, f"{FALLBACK_NAME}-2", id="fallback-taken"),
        pytest.param("a" * 50, set(), "a" * 32, id="long-word-cut"),
        pytest.param("a" * 31 + " bcd", set(), "a" * 31, id="cut-never-ends-with-a-hyphen"),
        pytest.param("x.y_z-w more", set(), "x-y-z", id="name-punctuation-splits-words"),
        pytest.param("line one\nline two", set(), "line-one-line", id="across-lines"),
    ],
)  # fmt: skip
def test_derived_names(text: str, taken: set[str], expected: str) -> None:
    assert derive_name(text, taken) == expected


@given(text=st.text(), taken=st.sets(st.sampled_from(["snippet", "a", "a-2", "ab-cd"])))
def test_a_derived_name_is_always_valid_and_unused(text: str, taken: set[str]) -> None:
    name = derive_name(text, taken)
    assert is_valid_name(name) and name not in taken


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        pytest.param("ok-name", None, id="valid"),
        pytest.param("Bad Name", "not a valid snippet name", id="invalid"),
        pytest.param("-x", "not a valid snippet name", id="starts-with-hyphen"),
        pytest.param("taken", 'a snippet named "taken" already exists', id="taken"),
    ],
)
def test_given_names_are_checked(name: str, problem: str | None) -> None:
    found = name_problem(name, {"taken"})
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_an_invalid_name_says_what_the_name_rule_is() -> None:
    """The user reads this message when the name they typed is refused."""
    assert name_problem("Bad Name", set()) == (
        '"Bad Name" is not a valid snippet name: use lowercase letters, digits, ".", "_" '
        'and "-", starting and ending with a letter or digit'
    )


def test_file_names_are_every_key_of_the_table_valid_or_not() -> None:
    text = '{"piSimpleSnippets": {"snippets": {"ok": "x", "Bad Name": "y", "empty": ""}}}'
    assert file_names(text) == {"ok", "Bad Name", "empty"}
    assert file_names("{") == set()
    assert file_names('{"piSimpleSnippets": {"shortcut": "alt+s"}}') == set()
    assert file_names('{"theme": "dark"}') == set()
    assert file_names(" \n") == set()
    assert file_names(None) == set()


# --------------------------------------------------------------------------- the edit


def added(text: str | None, name: str = "new", value: str = "New text") -> str:
    insertion = snippet_insertion(text, name, value, "/s.json")
    result = apply_edits(text or "", insertion.edits)
    assert result == insertion.text
    return result


def only_inserted(before: str, after: str) -> str:
    """The one span ``after`` inserts into ``before``; fails if anything else changed."""
    prefix = 0
    while prefix < len(before) and before[prefix] == after[prefix]:
        prefix += 1
    inserted = len(after) - len(before)
    assert after[:prefix] + after[prefix + inserted :] == before
    return after[prefix : prefix + inserted]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            '{\n  "theme": "dark",\n  "piSimpleSnippets": {\n    "snippets": {\n'
            '      "a": "b"\n    }\n  }\n}\n',
            '{\n  "theme": "dark",\n  "piSimpleSnippets": {\n    "snippets": {\n'
            '      "a": "b",\n      "new": "New text"\n    }\n  }\n}\n',
            id="two-spaces",
        ),
        pytest.param(
            '{\r\n\t"piSimpleSnippets": {\r\n\t\t"snippets": {\r\n\t\t\t"a": "b",\r\n'
            '\t\t\t"c": "d"\r\n\t\t}\r\n\t}\r\n}',
            '{\r\n\t"piSimpleSnippets": {\r\n\t\t"snippets": {\r\n\t\t\t"a": "b",\r\n'
            '\t\t\t"c": "d",\r\n\t\t\t"new": "New text"\r\n\t\t}\r\n\t}\r\n}',
            id="tabs-and-crlf",
        ),
        pytest.param(
            '{"piSimpleSnippets":{"snippets":{"a":"b"}}}',
            '{"piSimpleSnippets":{"snippets":{"a":"b", "new":"New text"}}}',
            id="minified",
        ),
        pytest.param(
            '{"theme": "dark"}',
            '{"theme": "dark", "piSimpleSnippets": {"snippets": {"new": "New text"}}}',
            id="one-line-no-namespace",
        ),
        pytest.param(
            '{\n    "theme": "dark",\n    "other": [1, 2]\n}',
            '{\n    "theme": "dark",\n    "other": [1, 2],\n    "piSimpleSnippets": {\n'
            '        "snippets": {\n            "new": "New text"\n        }\n    }\n}',
            id="four-spaces-no-namespace",
        ),
        pytest.param(
            '{\n  "piSimpleSnippets": {\n    "shortcut": "ctrl+x"\n  }\n}',
            '{\n  "piSimpleSnippets": {\n    "shortcut": "ctrl+x",\n    "snippets": {\n'
            '      "new": "New text"\n    }\n  }\n}',
            id="namespace-without-snippets",
        ),
        pytest.param(
            '{\n  "piSimpleSnippets": {\n    "snippets": {}\n  }\n}',
            '{\n  "piSimpleSnippets": {\n    "snippets": {\n      "new": "New text"\n    }\n  }\n}',
            id="empty-table",
        ),
        pytest.param(
            '{\n  "piSimpleSnippets": {\n    "snippets": {\n    }\n  }\n}',
            '{\n  "piSimpleSnippets": {\n    "snippets": {\n      "new": "New text"\n    }\n  }\n}',
            id="empty-table-over-lines",
        ),
        pytest.param("{}", '{"piSimpleSnippets": {"snippets": {"new": "New text"}}}',
                     id="empty-object"),
        pytest.param(
            '{\n  "a": 1,  "piSimpleSnippets" : {\n    "snippets" : { "x" : "y" }\n  }\n}',
            '{\n  "a": 1,  "piSimpleSnippets" : {\n    "snippets" : { "x" : "y", "new" : '
            '"New text" }\n  }\n}',
            id="spaces-around-colons-kept",
        ),
        pytest.param(
            '{"theme":"dark"}',
            '{"theme":"dark", "piSimpleSnippets":{"snippets":{"new":"New text"}}}',
            id="the-files-colon-inside-the-new-objects-too",
        ),
        pytest.param(
            '{"piSimpleSnippets":{"snippets":{}}}',
            '{"piSimpleSnippets":{"snippets":{"new":"New text"}}}',
            id="an-empty-table-takes-the-files-colon",
        ),
        pytest.param(
            '{"piSimpleSnippets": {"snippets": {"a": "1" , "b": "2"}}}',
            '{"piSimpleSnippets": {"snippets": {"a": "1" , "b": "2" , "new": "New text"}}}',
            id="two-members-give-the-separator",
        ),
        pytest.param(
            '{"a": 1,\n    "b": {\n        "c": 2\n    }\n}',
            '{"a": 1,\n    "b": {\n        "c": 2\n    },\n    "piSimpleSnippets": {\n'
            '        "snippets": {\n            "new": "New text"\n        }\n    }\n}',
            id="indent-unit-of-the-first-object-laid-out-over-lines",
        ),
        pytest.param(
            '{\n"a": {\n   "b": 1\n}\n}',
            '{\n"a": {\n   "b": 1\n},\n"piSimpleSnippets": {\n   "snippets": {\n'
            '      "new": "New text"\n   }\n}\n}',
            id="an-object-whose-members-are-not-indented-gives-no-unit",
        ),
        pytest.param(
            '{\r\n\t"theme": "dark",\r\n\t"piSimpleSnippets": {\r\n\t\t"shortcut": "alt+s"'
            '\r\n\t}\r\n}',
            '{\r\n\t"theme": "dark",\r\n\t"piSimpleSnippets": {\r\n\t\t"shortcut": "alt+s",\r\n'
            '\t\t"snippets": {\r\n\t\t\t"new": "New text"\r\n\t\t}\r\n\t}\r\n}',
            id="tabs-and-crlf-new-table",
        ),
        pytest.param(
            '{\r  "theme": "dark",\r  "piSimpleSnippets": {\r    "shortcut": "alt+s"\r  }\r}',
            '{\r  "theme": "dark",\r  "piSimpleSnippets": {\r    "shortcut": "alt+s",\r'
            '    "snippets": {\r      "new": "New text"\r    }\r  }\r}',
            id="cr-line-breaks",
        ),
        pytest.param(
            '{\n  "theme": "dark",\n\n  "x": 1\n}',
            '{\n  "theme": "dark",\n\n  "x": 1,\n\n  "piSimpleSnippets": {\n    "snippets": {\n'
            '      "new": "New text"\n    }\n  }\n}',
            id="a-blank-line-between-members-is-kept-and-nesting-follows-the-key",
        ),
        pytest.param(
            '{\n  "theme": "dark"\n  , "x": 1\n}',
            '{\n  "theme": "dark"\n  , "x": 1\n  , "piSimpleSnippets": {\n    "snippets": {\n'
            '      "new": "New text"\n    }\n  }\n}',
            id="comma-first-nesting-follows-the-keys-indentation",
        ),
        pytest.param(
            "{\n}",
            '{\n  "piSimpleSnippets": {\n    "snippets": {\n      "new": "New text"\n    }\n  }\n}',
            id="empty-object-over-lines",
        ),
        pytest.param(
            '{\n  "piSimpleSnippets": {\n    "snippets": {\n}\n  }\n}',
            '{\n  "piSimpleSnippets": {\n    "snippets": {\n      "new": "New text"\n}\n  }\n}',
            id="an-empty-table-keeps-its-closing-line",
        ),
        pytest.param(
            '{"piSimpleSnippets": {"snippets": {"a": "1"}}, "piSimpleSnippets": {"snippets": {}}}',
            '{"piSimpleSnippets": {"snippets": {"a": "1"}}, "piSimpleSnippets": {"snippets": '
            '{"new": "New text"}}}',
            id="duplicate-namespace-the-last-counts",
        ),
    ],
)  # fmt: skip
def test_the_file_keeps_its_style_and_every_other_byte(before: str, after: str) -> None:
    assert added(before) == after


@pytest.mark.parametrize("text", [None, "", "  \n"])
def test_a_missing_or_blank_file_gets_a_whole_text(text: str | None) -> None:
    insertion = snippet_insertion(text, "new", "New text", "/s.json")
    assert insertion.text == (
        '{\n  "piSimpleSnippets": {\n    "snippets": {\n      "new": "New text"\n    }\n  }\n}\n'
    )
    assert insertion.create is (text is None)
    # One edit that replaces the whole (blank) text: nothing of it is left around.
    assert insertion.edits == (TextEdit(0, len(text or ""), insertion.text),)


def test_non_ascii_text_is_written_as_itself() -> None:
    """The file stays readable: ``café 中文 😀`` is saved as typed, not as ``\\u`` escapes."""
    assert added("{}", name="café", value="café 中文 😀") == (
        '{"piSimpleSnippets": {"snippets": {"café": "café 中文 😀"}}}'
    )


def test_the_value_is_saved_with_line_feeds_and_json_escapes() -> None:
    text = added("{}", value='say "hi"\r\n\ttab \\ 😀\u2028')
    assert json.loads(text) == {SETTINGS_KEY: {"snippets": {"new": 'say "hi"\n\ttab \\ 😀\u2028'}}}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param('{"a": ', "not valid JSON (Unexpected end of JSON input at line 1", id="bad"),
        pytest.param("[1]", "must hold a JSON object", id="array"),
        pytest.param('{"piSimpleSnippets": 5}', '"piSimpleSnippets" in /s.json is not an object',
                     id="namespace"),
        pytest.param('{"piSimpleSnippets": {"snippets": []}}', '"piSimpleSnippets.snippets"',
                     id="table"),
    ],
)  # fmt: skip
def test_a_file_that_cannot_take_it_is_left_alone(text: str, words: str) -> None:
    with pytest.raises(SaveSnippetError) as caught:
        snippet_insertion(text, "new", "x", "/s.json")
    assert words in str(caught.value)


# --------------------------------------------------------------------------- properties

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
NAMESPACES = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={"shortcut": st.just("ctrl+x")}),
    st.fixed_dictionaries(
        {"snippets": st.dictionaries(st.sampled_from(["a", "b", "Bad", "é"]), st.text(max_size=5))}
    ),
)
STYLES = [
    {"indent": 2},
    {"indent": 4},
    {"indent": "\t"},
    {"indent": None},
    {"indent": None, "separators": (",", ":")},
    {"indent": 1, "ensure_ascii": False},
]


@settings(max_examples=examples(300))
@given(
    others=st.dictionaries(st.text(max_size=6).filter(lambda k: k != SETTINGS_KEY), JSON_VALUES,
                           max_size=3),
    namespace=NAMESPACES,
    style=st.sampled_from(STYLES),
    crlf=st.booleans(),
    value=st.text(min_size=1, max_size=20),
)  # fmt: skip
def test_saving_adds_exactly_the_snippet_and_nothing_else(
    others: dict[str, object], namespace: object, style: dict[str, object], crlf: bool, value: str
) -> None:
    data = dict(others)
    if namespace is not None:
        data[SETTINGS_KEY] = namespace
    before = json.dumps(data, **style)  # type: ignore[arg-type]
    if crlf:
        before = before.replace("\n", "\r\n")
    after = added(before, "new", value)
    expected = copy.deepcopy(data)
    expected.setdefault(SETTINGS_KEY, {}).setdefault("snippets", {})["new"] = value.replace(
        "\r\n", "\n"
    ).replace("\r", "\n")
    assert parse_settings_text(after, "s.json") == expected
    # One span inserted (json.dumps never writes whitespace inside an empty object).
    only_inserted(before, after)
    if "\n" not in before:
        assert "\n" not in after  # a one-line file stays on one line
    if crlf:
        assert "\n" not in after.replace("\r\n", "")  # CRLF stays CRLF


@pytest.mark.parametrize("text", [None, '{"piSimpleSnippets": {"snippets": {}}}'])
@pytest.mark.parametrize("value", ["\ud800", "a\udfffb"])
def test_a_text_that_is_not_valid_unicode_is_refused(text: str | None, value: str) -> None:
    with pytest.raises(SaveSnippetError, match="not valid Unicode"):
        snippet_insertion(text, "odd", value, "/s.json")


def test_a_save_that_would_outgrow_the_read_limit_is_refused() -> None:
    text = '{"piSimpleSnippets": {"snippets": {"a": "' + "x" * (16 * 1024 * 1024 - 100) + '"}}}'
    with pytest.raises(SaveSnippetError, match="over the 16 MiB limit"):
        snippet_insertion(text, "b", "y" * 200, "/s.json")
    assert snippet_insertion(text, "b", "y", "/s.json").text.endswith('"y"}}}')


@pytest.mark.parametrize(
    ("text", "value", "message"),
    [
        pytest.param('{\n  "a": 1,\n  x\n}', "x", "/s.json is not valid JSON (Expected "
                     "double-quoted property name at line 3 column 3); fix it first", id="bad"),
        pytest.param("[1]", "x", "/s.json must hold a JSON object; fix it first", id="array"),
        pytest.param('{"piSimpleSnippets": 5}', "x",
                     '"piSimpleSnippets" in /s.json is not an object; fix it first',
                     id="namespace"),
        pytest.param('{"piSimpleSnippets": {"snippets": []}}', "x",
                     '"piSimpleSnippets.snippets" in /s.json is not an object; fix it first',
                     id="table"),
        pytest.param(None, "a\udfffb", "the text is not valid Unicode (a lone surrogate "
                     "U+DFFF at character 1); not saved", id="surrogate"),
        pytest.param('{"piSimpleSnippets": {"snippets": {"a": "' + "x" * (16 * 1024 * 1024 - 100)
                     + '"}}}', "y" * 200, "saving it would make /s.json 16.0 MiB, over the 16 "
                     "MiB limit of a settings file (it could not be read back); not saved",
                     id="too large"),
    ],
)  # fmt: skip
def test_a_refused_save_says_exactly_why(text: str | None, value: str, message: str) -> None:
    with pytest.raises(SaveSnippetError) as caught:
        snippet_insertion(text, "new", value, "/s.json")
    assert str(caught.value) == message


def test_a_save_of_exactly_the_read_limit_is_written() -> None:
    """16 MiB is the largest file read back: a save that makes it exactly that is made."""
    overhead = len(snippet_insertion(None, "b", "", "/s.json").text.encode())
    value = "y" * (16 * 1024 * 1024 - overhead)
    assert len(snippet_insertion(None, "b", value, "/s.json").text.encode()) == 16 * 1024 * 1024


@pytest.mark.parametrize("newline", ["\n", "\r"])
def test_an_object_on_the_line_after_a_leading_line_break_keeps_its_indentation(
    newline: str,
) -> None:
    """The first line break of the file (at offset 0) ends the line before the object's."""
    text = f'{newline}  {{"piSimpleSnippets": {{"snippets": {{}}}}{newline}  }}'
    after = snippet_insertion(text, "new", "x", "/s.json").text
    assert after == (
        f'{newline}  {{"piSimpleSnippets": {{"snippets": {{{newline}    "new": "x"{newline}  }}}}'
        f"{newline}  }}"
    )
