"""Setting a snippet's value in its settings file (settings.snippet_edits): one token
replaced by the value in ``JSON.stringify``'s form, every other byte kept; a file changed
meanwhile, text UTF-8 cannot hold and a file grown too large refused with a reason."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_snippets_lsp.core.edits import TextEdit
from pi_snippets_lsp.settings import snippet_edits
from pi_snippets_lsp.settings.files import MAX_SETTINGS_BYTES
from pi_snippets_lsp.settings.snippet_edits import (
    SnippetEditError,
    SnippetValue,
    ValueEdit,
    set_value_edit,
    snippet_value,
    value_token,
    write_problem,
)

TEXT = (
    '{\n  "theme": "中文",\n  "piSimpleSnippets": {\n    "snippets": {\n'
    '      "a": "first",\n      "n": 3,\n      "a": "caf\\u00e9 \\"q\\"",\n'
    '      "b": "B"\n    }\n  }\n}\n'
)
TOKEN = '"caf\\u00e9 \\"q\\""'


def test_the_value_json_parse_keeps_and_its_token() -> None:
    start = TEXT.index(TOKEN)
    assert snippet_value(TEXT, "a") == SnippetValue("a", 'café "q"', start, start + len(TOKEN))
    b = TEXT.index('"B"')
    assert snippet_value(TEXT, "b") == SnippetValue("b", "B", b, b + 3)


@pytest.mark.parametrize(
    "text",
    [
        TEXT,  # "n" is a number: Pi skips it
        '{"piSimpleSnippets": {"snippets": ["n"]}}',
        '{"piSimpleSnippets": {"other": {"n": "x"}}}',
        '{"snippets": {"n": "x"}}',
        '{"piSimpleSnippets": {"snippets": {"n": "x",}}}',
        "",
    ],
)
def test_no_value_where_pi_reads_no_string(text: str) -> None:
    assert snippet_value(text, "n") is None
    assert snippet_value(text, "missing") is None


def test_the_token_is_json_stringify_form() -> None:
    value = 'q " b \\ nl \n cr \r\n tab \t nul \x00 del \x7f % é 😀 \u2028'
    token = value_token(value)
    assert token == ('"q \\" b \\\\ nl \\n cr \\n tab \\t nul \\u0000 del \x7f % é 😀 \u2028"')
    assert json.loads(token) == value.replace("\r\n", "\n")
    assert value_token("a\rb") == '"a\\nb"'


def test_the_edit_replaces_the_kept_token_only() -> None:
    new = 'x "y" \\z\n% 中文 😀'
    result = set_value_edit(TEXT, "a", new, "settings.json", expected='café "q"')
    start = TEXT.index(TOKEN)
    token = '"x \\"y\\" \\\\z\\n% 中文 😀"'
    assert result == ValueEdit(
        (TextEdit(start, start + len(TOKEN), token),),
        TEXT.replace(TOKEN, token),
        changed=True,
    )
    assert '"a": "first"' in result.text
    assert json.loads(result.text)["piSimpleSnippets"]["snippets"]["a"] == new


def test_without_expected_any_current_value_is_replaced() -> None:
    result = set_value_edit(TEXT, "b", "new", "p")
    assert result.changed and result.text == TEXT.replace('"B"', '"new"')


def test_line_breaks_are_saved_as_newlines_and_match_expected() -> None:
    text = '{"piSimpleSnippets": {"snippets": {"a": "x\\r\\ny"}}}'
    # The buffer showed the value with its break as "\n": still the value it was opened with.
    result = set_value_edit(text, "a", "x\r\nz", "p", expected="x\ny")
    assert result.text == '{"piSimpleSnippets": {"snippets": {"a": "x\\nz"}}}'
    # The same text up to line breaks is a change (the file's CRLF becomes "\n").
    same = set_value_edit(text, "a", "x\ny", "p", expected="x\r\ny")
    assert same.changed and same.text == '{"piSimpleSnippets": {"snippets": {"a": "x\\ny"}}}'


def test_the_same_value_is_no_edit() -> None:
    assert set_value_edit(TEXT, "b", "B", "p", expected="B") == ValueEdit((), TEXT, False)
    assert set_value_edit(TEXT, "b", "B", "p") == ValueEdit((), TEXT, changed=False)


def test_a_value_changed_meanwhile_is_refused() -> None:
    with pytest.raises(SnippetEditError) as caught:
        set_value_edit(TEXT, "b", "mine", "/home/u/settings.json", expected="old")
    assert str(caught.value) == (
        "%b was changed in /home/u/settings.json since it was opened for editing; not saved "
        "(open it again to edit the new text)"
    )


@pytest.mark.parametrize("name", ["n", "gone"])
def test_a_snippet_no_longer_defined_is_refused(name: str) -> None:
    with pytest.raises(SnippetEditError) as caught:
        set_value_edit(TEXT, name, "x", "/s.json", expected="x")
    assert str(caught.value) == f"/s.json no longer defines %{name}; not saved"


def test_a_file_that_does_not_parse_is_refused() -> None:
    with pytest.raises(SnippetEditError) as caught:
        set_value_edit('{\n  "a": 1,,\n}', "a", "x", "/s.json")
    assert str(caught.value) == (
        "/s.json is not valid JSON (Expected double-quoted property name at line 2 column 10); "
        "fix it first; not saved"
    )


def test_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(SnippetEditError) as caught:
        set_value_edit(TEXT, "b", "ok \udc80 no", "p")
    assert str(caught.value) == (
        "the text is not valid Unicode (a lone surrogate U+DC80 at character 3); not saved"
    )


def test_a_file_grown_past_the_limit_is_refused() -> None:
    text = '{"piSimpleSnippets": {"snippets": {"a": "x"}}}'
    room = MAX_SETTINGS_BYTES - len(text) + len('"x"') - 2
    assert set_value_edit(text, "a", "y" * room, "p").changed  # exactly at the limit
    with pytest.raises(SnippetEditError) as caught:
        set_value_edit(text, "a", "é" * (room // 2 + 1), "/s.json")  # two bytes each
    assert str(caught.value) == (
        "saving it would make /s.json 16.0 MiB, over the 16 MiB limit of a settings file "
        "(it could not be read back); not saved"
    )


def test_write_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    assert write_problem(path) is None
    asked: list[tuple[Path, int]] = []

    def access(where: Path, mode: int) -> bool:
        asked.append((where, mode))
        return False

    monkeypatch.setattr(snippet_edits.os, "access", access)
    assert write_problem(path) == f"{path} is not writable by this user; not saved"
    assert asked == [(path, os.W_OK)]


@given(st.text(), st.text())
def test_any_value_round_trips(old: str, new: str) -> None:
    """Whatever the old and new values, JSON.parse reads back exactly the new one (line
    breaks as "\\n"), and the text around the token is untouched."""
    if any("\ud800" <= c <= "\udfff" for c in old + new):
        return
    text = json.dumps({"x": 1, "piSimpleSnippets": {"snippets": {"s": old}}, "y": "é"}, indent=1)
    result = set_value_edit(text, "s", new, "p", expected=old)
    want = new.replace("\r\n", "\n").replace("\r", "\n")
    assert json.loads(result.text)["piSimpleSnippets"]["snippets"]["s"] == want
    found = snippet_value(text, "s")
    assert found is not None
    assert result.text[: found.start] == text[: found.start]
    assert result.text.endswith(text[found.end :])
