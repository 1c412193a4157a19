"""Settings diagnostics: each problem at its key or value, hints, and quick fixes.

docs/settings-diagnostics.md; docs/configuration.md, "Validation and warnings". Expected
ranges are written into the texts as ``⟦...⟧``.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.config import MODIFIERS, SETTINGS_KEY, Layer
from pi_snippets_lsp.core.config import validate_layers as merge_and_validate
from pi_snippets_lsp.core.grammar import is_valid_name
from pi_snippets_lsp.settings import diagnostics
from pi_snippets_lsp.settings.diagnostics import (
    LEGACY_CONTROL_KEYS,
    PI_EDITOR_KEYS,
    SOURCE,
    QuickFix,
    SettingsDiagnostic,
    TextEdit,
    name_slug,
    remove_members,
    settings_diagnostics,
    shortcut_hints,
)
from pi_snippets_lsp.settings.files import SettingsFileError
from pi_snippets_lsp.settings.jsontree import parse
from pi_snippets_lsp.settings.layers import parse_settings_text

from .conftest import examples


def marked(source: str) -> tuple[str, int, int]:
    """``source`` without its ``⟦`` ``⟧`` markers, and the offsets they marked."""
    start = source.index("⟦")
    end = source.index("⟧") - 1
    return source.replace("⟦", "").replace("⟧", ""), start, end


def settings(namespace_text: str, before: str = "") -> str:
    return f'{{{before}"{SETTINGS_KEY}": {namespace_text}}}'


def load_warnings(text: str) -> tuple[str, ...]:
    """The load warnings of ``text`` as the only settings file."""
    layer = Layer(source="s.json", settings=parse_settings_text(text, "s.json"))
    return merge_and_validate([layer]).warnings


def apply(text: str, edits: Sequence[TextEdit]) -> str:
    """Apply non-overlapping edits, all against the original ``text`` (as LSP does)."""
    ordered = sorted(edits, key=lambda e: e.start)
    for earlier, later in itertools.pairwise(ordered):
        assert earlier.end <= later.start, "edits overlap"
    for edit in reversed(ordered):
        text = text[: edit.start] + edit.new_text + text[edit.end :]
    return text


def warnings_of(text: str) -> list[SettingsDiagnostic]:
    return [d for d in settings_diagnostics(text) if d.severity == "warning"]


# --------------------------------------------------------------------------- fine files


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty-file"),
        pytest.param(" \n\t", id="blank-file"),
        pytest.param("\ufeff", id="bom-only"),
        pytest.param("{}", id="empty-object"),
        pytest.param('{"theme": 5, "defaultModel": [], "x": {"snippets": 1}}', id="other-keys"),
        pytest.param('{"pi-simple-snippets": {"snippets": {"Bad": ""}}}', id="hyphenated-key"),
        pytest.param('{"PiSimpleSnippets": 5}', id="pascal-case-key"),
        pytest.param(settings("{}"), id="empty-namespace"),
        pytest.param(settings('{"snippets": {"use-mcp": "Use MCP", "a.b_c-1": " "}, '
                              '"shortcut": "alt+s", "expandOnCompletion": false}'),
                     id="valid-namespace"),
        pytest.param(settings('{"aliases": 1, "version": "2"}'), id="unknown-namespace-keys"),
        pytest.param(f'{{"a": 1, "{SETTINGS_KEY}": 5, "{SETTINGS_KEY}": {{}}}}',
                     id="a-shadowed-namespace-is-not-read"),
    ],
)  # fmt: skip
def test_a_fine_file_has_no_diagnostics(text: str) -> None:
    assert settings_diagnostics(text) == []


# --------------------------------------------------------------------------- problems


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(settings('{"snippets": {⟦"Bad Name"⟧: "x"}}'), id="invalid-name-at-the-key"),
        pytest.param(settings('{"snippets": {⟦"-lead"⟧: ""}}'),
                     id="invalid-name-with-empty-value-at-the-key"),
        pytest.param(settings('{"snippets": {"empty": ⟦""⟧}}'), id="empty-value-at-the-value"),
        pytest.param(settings('{"snippets": {"n": ⟦12.5⟧}}'), id="number-value-at-the-value"),
        pytest.param(settings('{"snippets": {"n": ⟦null⟧}}'), id="null-value-at-the-value"),
        pytest.param(settings('{"snippets": {"o": ⟦{"a": "b"}⟧}}'), id="object-value"),
        pytest.param(settings('{"shortcut": ⟦"ctrl + s"⟧}'), id="rejected-shortcut"),
        pytest.param(settings('{"shortcut": ⟦["ctrl", "s"]⟧}'), id="non-string-shortcut"),
        pytest.param(settings('{"expandOnCompletion": ⟦"yes"⟧}'), id="non-boolean-expand"),
        pytest.param(settings('{"expandOnCompletion": ⟦1⟧}'), id="number-expand"),
        pytest.param(settings('{"snippets": ⟦["a"]⟧}'), id="snippets-not-an-object"),
        pytest.param(settings("⟦null⟧"), id="namespace-not-an-object"),
        pytest.param(settings('⟦"snippets"⟧'), id="namespace-a-string"),
        pytest.param(settings('{"snippets": {"ok": "x", ⟦"A"⟧: "y"}}',
                              before='"theme": "caf\u00e9 \U0001f600 \u4e2d", '),
                     id="non-ascii-before-the-key"),
        pytest.param(settings('{"snippets": {⟦"B\\u0061d\\u00e9"⟧: "y"}}'),
                     id="escapes-in-the-key"),
        pytest.param(settings('{"snippets": {"a": 1, "b": "ok", "a": ⟦2⟧}}'),
                     id="duplicate-keys-the-last-counts"),
        pytest.param(settings('{"snippets": {"a": "ok"}}')[:-1]
                     + f', "{SETTINGS_KEY}": {{"snippets": {{⟦"Z"⟧: "z"}}}}}}',
                     id="duplicate-namespace-the-last-counts"),
        pytest.param("\ufeff" + settings('{"snippets": {⟦"Q"⟧: "q"}}'), id="after-a-bom"),
        pytest.param('{\n  "piSimpleSnippets": {\n    "snippets": {\n      "x": ⟦""⟧\n'
                     '    }\n  }\n}', id="indented"),
    ],
)  # fmt: skip
def test_each_problem_sits_at_its_key_or_value_with_the_load_warnings_words(source: str) -> None:
    text, start, end = marked(source)
    (diagnostic,) = settings_diagnostics(text)
    assert (diagnostic.start, diagnostic.end) == (start, end)
    assert (diagnostic.severity, diagnostic.source) == ("warning", "pi-simple-snippets")
    assert load_warnings(text) == (diagnostic.message,)


def test_every_problem_of_a_file_is_a_diagnostic_in_text_order() -> None:
    source = settings(
        '{"snippets": {⟦"A"⟧: "x", "b": "", "ok": "y", "C": 1}, "shortcut": 3, '
        '"expandOnCompletion": "no"}'
    )
    text, start, end = marked(source)
    diagnostics = settings_diagnostics(text)
    assert [text[d.start : d.end] for d in diagnostics] == ['"A"', '""', '"C"', "3", '"no"']
    assert (diagnostics[0].start, diagnostics[0].end) == (start, end)
    starts = [d.start for d in diagnostics]
    assert starts == sorted(starts)
    # The load warning folds the entries into one; each diagnostic names its own.
    assert len(load_warnings(text)) == 3
    assert {d.message for d in diagnostics[:3]} == {
        'ignored 1 snippet entry: "A" (invalid name)',
        'ignored 1 snippet entry: "b" (value must be a non-empty string)',
        'ignored 1 snippet entry: "C" (invalid name)',
    }


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param('{"a": 1,⟦}⟧', "Expected double-quoted property name",
                     id="trailing-comma"),
        pytest.param('{\n  "a": 1\n  ⟦"⟧b": 2\n}', "Expected ',' or '}' after property value",
                     id="missing-comma-on-the-next-line"),
        pytest.param('{"a": ⟦N⟧aN}', "Unexpected token 'N'", id="nan"),
        pytest.param('{"a": ⟦X⟧}', "Unexpected token 'X'", id="any-letter"),
        pytest.param('{"a": "x⟦\t⟧"}', "Bad control character in string literal",
                     id="raw-tab-in-a-string"),
        pytest.param('{"a": "\\u00e9 \\⟦x⟧"}', "Bad escaped character",
                     id="bad-escape-after-non-ascii"),
        pytest.param('{"a": 1⟦⟧', "Expected ',' or '}' after property value",
                     id="cut-at-the-end-is-an-empty-range"),
        pytest.param('{"a": "x⟦⟧\ny"}', "Bad control character in string literal",
                     id="at-a-line-break-an-empty-range"),
        pytest.param("⟦/⟧/ settings\n{}", "Unexpected token '/'",
                     id="comment"),
        pytest.param('{"é😀": 1 ⟦x⟧}', "Expected ',' or '}' after property value",
                     id="code-point-offsets"),
    ],
)  # fmt: skip
def test_invalid_json_is_one_warning_at_the_parse_error(source: str, message: str) -> None:
    text, start, end = marked(source)
    assert settings_diagnostics(text) == [
        SettingsDiagnostic(start, end, "warning", f"This file is not valid JSON: {message}")
    ]
    (warning,) = _file_warning(text)
    assert warning.startswith(f"s.json is not valid JSON: {message} at line ")


def _file_warning(text: str) -> list[str]:
    try:
        parse_settings_text(text, "s.json")
    except SettingsFileError as error:
        return [str(error)]
    return []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        pytest.param("[1, 2]", "an array", id="array"),
        pytest.param(' "settings" ', "a string", id="string"),
        pytest.param("null", "null", id="null"),
    ],
)
def test_a_file_that_is_not_an_object_is_one_warning_on_its_value(text: str, kind: str) -> None:
    (diagnostic,) = settings_diagnostics(text)
    assert text[diagnostic.start : diagnostic.end] == text.strip()
    assert (diagnostic.severity, diagnostic.source) == ("warning", SOURCE)
    assert diagnostic.message == f"This file must hold a JSON object, not {kind}"
    assert _file_warning(text) == [f"s.json must hold a JSON object, not {kind}"]


# --------------------------------------------------------------------------- shortcut hints


@pytest.mark.parametrize(
    ("shortcut", "same"),
    [
        pytest.param("ctrl+i", "Tab", id="ctrl-i-is-tab"),
        pytest.param("ctrl+m", "Enter", id="ctrl-m-is-enter"),
        pytest.param("ctrl+[", "Escape", id="ctrl-bracket-is-escape"),
        pytest.param("ctrl+h", "Backspace", id="ctrl-h-is-backspace"),
        pytest.param("ctrl+j", "a newline (line feed)", id="ctrl-j-is-a-newline"),
        pytest.param("ctrl+shift+s", "ctrl+s", id="ctrl-shift-letter-is-ctrl-letter"),
        pytest.param("ctrl+shift+a", "ctrl+a", id="from-a"),
        pytest.param("ctrl+shift+z", "ctrl+z", id="to-z"),
        pytest.param("shift+ctrl+x", "ctrl+x", id="modifier-order-does-not-matter"),
        pytest.param("ctrl+shift+i", "Tab", id="ctrl-shift-i-is-tab-too"),
        pytest.param("ctrl+alt+shift+s", "ctrl+alt+s", id="alt-survives"),
    ],
)
def test_a_shortcut_legacy_terminals_cannot_tell_apart_gets_a_hint(
    shortcut: str, same: str
) -> None:
    (hint,) = [h for h in shortcut_hints(shortcut, shortcut) if "kitty" in h]
    assert hint == (
        f'`shortcut` "{shortcut}": a terminal without the kitty keyboard protocol sends it as '
        f"{same}, so Pi cannot tell the two apart"
    )


@pytest.mark.parametrize(
    ("shortcut", "editor_key"),
    [
        pytest.param("ctrl+k", "ctrl+k", id="ctrl-k"),
        pytest.param("ctrl+c", "ctrl+c", id="ctrl-c"),
        pytest.param("alt+return", "alt+enter", id="key-alias"),
        pytest.param("shift+tab", "shift+tab", id="shift-tab"),
        pytest.param("ctrl+-", "ctrl+-", id="undo"),
    ],
)
def test_a_shortcut_that_takes_over_a_pi_editor_key_gets_a_hint(
    shortcut: str, editor_key: str
) -> None:
    hints = [h for h in shortcut_hints(shortcut.upper(), shortcut) if "takes over" in h]
    action = PI_EDITOR_KEYS[editor_key]
    assert hints == [
        f'`shortcut` "{shortcut.upper()}" takes over {editor_key}, which Pi\'s editor uses to '
        f"{action}"
    ]


@pytest.mark.parametrize(
    "shortcut",
    [
        pytest.param("ctrl+s", id="ctrl-s"),
        pytest.param("alt+s", id="alt-letter"),
        pytest.param("ctrl+alt+i", id="ctrl-alt-i"),
        pytest.param("ctrl+5", id="ctrl-digit"),
        pytest.param("super+k", id="super"),
        pytest.param("shift+f5", id="function-key"),
        pytest.param("ctrl+shift+[", id="shift-with-a-non-letter"),
    ],
)
def test_other_shortcuts_get_no_hint(shortcut: str) -> None:
    assert shortcut_hints(shortcut, shortcut) == []


def test_a_shortcut_can_get_both_hints() -> None:
    hints = shortcut_hints("ctrl+h", "ctrl+h")
    assert len(hints) == 1  # ctrl+h is not one of Pi's editor keys
    hints = shortcut_hints("ctrl+shift+p", "ctrl+shift+p")
    assert len(hints) == 1
    assert "ctrl+p" in hints[0]


def test_the_hint_tables_use_real_keys() -> None:
    for key in PI_EDITOR_KEYS:
        *modifiers, base = key.split("+")
        assert modifiers and set(modifiers) <= MODIFIERS
        assert base
    assert set(LEGACY_CONTROL_KEYS) == {"i", "m", "[", "h", "j"}


def test_hints_are_information_at_the_shortcut_value_of_a_valid_shortcut() -> None:
    text, start, end = marked(settings('{"shortcut": ⟦"Ctrl+K"⟧, "snippets": {"a": "A"}}'))
    (diagnostic,) = settings_diagnostics(text)
    assert (diagnostic.start, diagnostic.end, diagnostic.severity) == (start, end, "information")
    assert diagnostic.message.startswith('`shortcut` "Ctrl+K" takes over ctrl+k')
    assert diagnostic.source == SOURCE
    assert load_warnings(text) == ()  # a hint is no load warning


def test_a_rejected_shortcut_gets_its_warning_and_no_hint() -> None:
    diagnostics = settings_diagnostics(settings('{"shortcut": "ctrl+ i"}'))
    assert [d.severity for d in diagnostics] == ["warning"]


# --------------------------------------------------------------------------- quick fixes


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        pytest.param("Bad Name", "bad-name", id="lowercase-and-spaces"),
        pytest.param("Code Review - Short", "code-review-short", id="spaced-hyphen"),
        pytest.param("  padded  ", "padded", id="padded"),
        pytest.param("-lead", "lead", id="leading-hyphen"),
        pytest.param("trail_.", "trail", id="trailing-punctuation"),
        pytest.param("Café", "cafe", id="accent"),
        pytest.param("a/b:c", "a-b-c", id="other-characters"),
        pytest.param("a--b C", "a--b-c", id="valid-hyphens-kept"),
        pytest.param("ＦＵＬＬ", "full", id="fullwidth"),
        pytest.param("x 中文", "x", id="cjk-dropped"),
        pytest.param("中文", None, id="nothing-left"),
        pytest.param("", None, id="empty"),
        pytest.param("---", None, id="only-punctuation"),
    ],
)
def test_name_slug(name: str, slug: str | None) -> None:
    assert name_slug(name) == slug
    if slug is not None:
        assert is_valid_name(slug)


@pytest.mark.parametrize(
    ("source", "title", "fixed"),
    [
        pytest.param('{"snippets": {"Bad Name": "x"}}', 'Rename to "bad-name"',
                     '{"snippets": {"bad-name": "x"}}', id="invalid-name-to-its-slug"),
        pytest.param('{"snippets": {"B\\u0061d": "x"}}', 'Rename to "bad"',
                     '{"snippets": {"bad": "x"}}', id="escaped-key-replaced-whole"),
        pytest.param('{"snippets": {"A": "1", "b": "2", "A": "3"}}', 'Rename to "a"',
                     '{"snippets": {"a": "1", "b": "2", "a": "3"}}',
                     id="every-occurrence-renamed-so-the-last-still-wins"),
        pytest.param('{"expandOnCompletion": "true"}', "Use the boolean true",
                     '{"expandOnCompletion": true}', id="string-true"),
        pytest.param('{"expandOnCompletion": " False "}', "Use the boolean false",
                     '{"expandOnCompletion": false}', id="string-false-any-case"),
    ],
)  # fmt: skip
def test_quick_fixes(source: str, title: str, fixed: str) -> None:
    text = settings(source)
    (diagnostic,) = settings_diagnostics(text)
    assert diagnostic.fix is not None
    assert diagnostic.fix.title == title
    assert apply(text, diagnostic.fix.edits) == settings(fixed)
    assert settings_diagnostics(settings(fixed)) == []


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('{"snippets": {"Bad": "x", "bad": "y"}}', id="slug-taken"),
        pytest.param('{"snippets": {"Bad": "x", "b\\u0061d": "y"}}', id="slug-taken-escaped"),
        pytest.param('{"snippets": {"中文": "x"}}', id="no-slug"),
        pytest.param('{"snippets": {"n": 5}}', id="non-string-value"),
        pytest.param('{"snippets": {"n": null}}', id="null-value"),
        pytest.param('{"expandOnCompletion": "yes"}', id="expand-yes"),
        pytest.param('{"expandOnCompletion": 1}', id="expand-number"),
        pytest.param('{"shortcut": "ctrl + s"}', id="shortcut"),
        pytest.param('{"snippets": []}', id="snippets-not-an-object"),
    ],
)
def test_no_quick_fix_where_the_repair_is_not_clear(source: str) -> None:
    (diagnostic,) = warnings_of(settings(source))
    assert diagnostic.fix is None


REMOVALS = [
    pytest.param('{"e": "", "a": "A"}', '{"a": "A"}', id="first"),
    pytest.param('{"a": "A", "e": "", "b": "B"}', '{"a": "A", "b": "B"}', id="middle"),
    pytest.param('{"a": "A", "e": ""}', '{"a": "A"}', id="last"),
    pytest.param('{"e": ""}', "{}", id="only"),
    pytest.param('{ "e" : "" , "a": "A" }', '{ "a": "A" }', id="spaced"),
    pytest.param('{"e": "x", "a": "A", "e": ""}', '{"a": "A"}', id="every-occurrence"),
    pytest.param('{"a": "A", "e": "x", "e": ""}', '{"a": "A"}', id="adjacent-occurrences-last"),
    pytest.param('{"e": "x", "e": ""}', "{}", id="only-occurrences"),
    pytest.param(
        '{\n      "a": "A",\n      "e": "",\n      "b": "B"\n    }',
        '{\n      "a": "A",\n      "b": "B"\n    }',
        id="indented-middle",
    ),
    pytest.param(
        '{\n      "a": "A",\n      "e": ""\n    }',
        '{\n      "a": "A"\n    }',
        id="indented-last",
    ),
]


@pytest.mark.parametrize(("table", "fixed"), REMOVALS)
def test_an_empty_value_is_removed_with_its_comma(table: str, fixed: str) -> None:
    text = settings(f'{{"snippets": {table}}}')
    (diagnostic,) = settings_diagnostics(text)
    assert diagnostic.fix is not None
    assert diagnostic.fix.title == 'Remove the empty snippet "e"'
    assert apply(text, diagnostic.fix.edits) == settings(f'{{"snippets": {fixed}}}')


def test_removing_several_members_keeps_the_others() -> None:
    text = '{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}'
    root = parse(text)
    doomed = [m for m in root.members if m.key in ("a", "c", "d", "e")]
    assert apply(text, remove_members(root, doomed)) == '{"b": 2}'
    doomed = [m for m in root.members if m.key in ("b", "c")]
    assert apply(text, remove_members(root, doomed)) == '{"a": 1, "d": 4, "e": 5}'


def test_a_fix_is_a_plain_value() -> None:
    fix = QuickFix("t", (TextEdit(1, 2, "x"),))
    assert fix == QuickFix("t", (TextEdit(1, 2, "x"),))


# --------------------------------------------------------------------------- properties

NAMES = ["ok", "a.b", "Bad Name", "UPPER", "-x", "é", "中文", "", "bad-name", "upper", "x"]
VALUES = ['"text"', '""', '" "', "1", "null", "true", "[]", '{"a": "b"}']
SHORTCUTS = ['"ctrl+s"', '"ctrl+shift+s"', '"ctrl+i"', '"ctrl+k"', '"ctrl + s"', "5", '""']
EXPANDS = ["true", "false", '"true"', '"False"', '"yes"', "0", "null"]
SPACES = ["", " ", "\n  ", "\n\t", "\r\n    "]


def random_settings(rng: random.Random) -> str:
    """A settings text with random problems, duplicates, escapes and formatting."""

    def obj(members: list[tuple[str, str]]) -> str:
        if not members:
            return "{" + rng.choice(SPACES) + "}"
        inner = ",".join(
            rng.choice(SPACES) + key + rng.choice(["", " "]) + ":" + rng.choice(["", " "]) + value
            for key, value in members
        )
        return "{" + inner + rng.choice(SPACES) + "}"

    def key(name: str) -> str:
        quoted = json.dumps(name, ensure_ascii=rng.random() < 0.3)
        if rng.random() < 0.2 and len(name) > 0:
            quoted = '"' + "".join(f"\\u{ord(c):04x}" if c < "\uffff" else c for c in name) + '"'
        return quoted

    snippets = [(key(rng.choice(NAMES)), rng.choice(VALUES)) for _ in range(rng.randint(0, 6))]
    namespace: list[tuple[str, str]] = []
    if rng.random() < 0.9:
        namespace.append(('"snippets"', obj(snippets)))
    if rng.random() < 0.5:
        namespace.append(('"shortcut"', rng.choice(SHORTCUTS)))
    if rng.random() < 0.5:
        namespace.append(('"expandOnCompletion"', rng.choice(EXPANDS)))
    rng.shuffle(namespace)
    top = [('"theme"', '"caf\u00e9 \U0001f600"'), (f'"{SETTINGS_KEY}"', obj(namespace))]
    if rng.random() < 0.3:
        top.append(('"other"', obj(snippets)))  # the same mistakes, outside the namespace
    rng.shuffle(top)
    return ("\ufeff" if rng.random() < 0.1 else "") + obj(top)


@hypothesis_settings(max_examples=examples(300))
@given(st.randoms(use_true_random=False))
def test_each_fix_leaves_valid_json_without_that_problem(rng: random.Random) -> None:
    text = random_settings(rng)
    diagnostics = settings_diagnostics(text)
    for diagnostic in diagnostics:
        if diagnostic.fix is None:
            continue
        fixed = apply(text, diagnostic.fix.edits)
        parse(fixed)  # still JSON.parse's JSON
        after = settings_diagnostics(fixed)
        assert diagnostic.message not in {d.message for d in after}
        # Nothing else in the file changed: other keys are the same.
        before_value = parse(text).value
        after_value = parse(fixed).value
        assert isinstance(before_value, dict) and isinstance(after_value, dict)
        assert {k: v for k, v in before_value.items() if k != SETTINGS_KEY} == {
            k: v for k, v in after_value.items() if k != SETTINGS_KEY
        }


@hypothesis_settings(max_examples=examples(300))
@given(st.randoms(use_true_random=False))
def test_diagnostics_sit_on_json_values_and_match_the_load_warnings(rng: random.Random) -> None:
    text = random_settings(rng)
    diagnostics = settings_diagnostics(text)
    for diagnostic in diagnostics:
        assert 0 <= diagnostic.start < diagnostic.end <= len(text)
        json.loads(text[diagnostic.start : diagnostic.end])  # a whole key or value
    warnings = [d for d in diagnostics if d.severity == "warning"]
    entries = [d for d in warnings if d.message.startswith("ignored 1 snippet entry: ")]
    others = [d.message for d in warnings if d not in entries]
    expected = list(load_warnings(text))
    if entries:
        combined = [w for w in expected if w.startswith("ignored ")]
        assert len(combined) == 1
        for entry in entries:
            assert entry.message.removeprefix("ignored 1 snippet entry: ") in combined[0]
        expected.remove(combined[0])
    assert sorted(others) == sorted(expected)


class _CountingMembers(list):  # type: ignore[type-arg]
    """An object's members that count each one visited by iteration."""

    visited = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        for member in super().__iter__():
            _CountingMembers.visited += 1
            yield member


def _members_visited(count: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """Members of the ``snippets`` object visited while diagnosing a file whose every
    entry has a quick fix (half invalid names, half empty snippets)."""
    snippets = {f"Bad Name {i}": "v" for i in range(count // 2)}
    snippets.update({f"empty{i}": "" for i in range(count // 2)})
    text = json.dumps({SETTINGS_KEY: {"snippets": snippets}})

    def counting_parse(source: str) -> object:
        root = parse(source)
        table = root.find((SETTINGS_KEY, "snippets"))
        assert table is not None
        table.members = _CountingMembers(table.members)
        return root

    monkeypatch.setattr(diagnostics, "parse", counting_parse)
    _CountingMembers.visited = 0
    found = settings_diagnostics(text)
    assert len(found) == count and all(d.fix is not None for d in found)
    return _CountingMembers.visited


def test_quick_fixes_do_not_scan_every_member(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each problem's quick fix looks up the members it edits: diagnosing a file with a
    problem in each of its members visits them a bounded number of times each (the old
    fixes scanned every member for every problem: a 395 KiB file took seconds)."""
    small = _members_visited(200, monkeypatch)
    large = _members_visited(2000, monkeypatch)
    assert large <= 10 * small + 100, (small, large)
    assert large <= 5 * 2000
