"""The position-keeping JSON parser: JavaScript's ``JSON.parse``, with spans and paths.

docs/configuration.md, "Reading a settings file" (Pi reads settings with ``JSON.parse``
after stripping a BOM); docs/settings-diagnostics.md (diagnostics at the exact key or
value). JavaScript is the reference: the differential test at the end asks Node's own
``JSON.parse``; ``json.loads`` is the oracle of the property tests.
"""

from __future__ import annotations

import json
import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_snippets_lsp.core.documents import units_length
from pi_snippets_lsp.settings.jsontree import JsonNode, JsonParseError, decode_number, parse

from . import jsongen
from .conftest import RunNode, examples


def loads(text: str) -> object:
    """``json.loads`` as an oracle for ``JSON.parse``, with the two differences patched.

    ``json.loads`` accepts ``NaN``, ``Infinity`` and ``-Infinity`` (JavaScript does not)
    and refuses integers of more than 4300 digits (JavaScript reads them as doubles).
    Everything else it accepts and rejects as JavaScript does, lone surrogate escapes
    included; the differential test against Node checks that claim.
    """
    if text.startswith("\ufeff"):
        text = text[1:]

    def reject(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=reject, parse_int=decode_number)


def error_of(text: str) -> tuple[str, int]:
    with pytest.raises(JsonParseError) as info:
        parse(text)
    return info.value.message, info.value.offset


# --------------------------------------------------------------------------- what is JSON


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("{}", {}, id="empty-object"),
        pytest.param("[]", [], id="empty-array"),
        pytest.param(' \t\r\n{"a" : [ 1 , 2 ] }\n', {"a": [1, 2]}, id="json-whitespace"),
        pytest.param('"\\ud800"', "\ud800", id="lone-high-surrogate-escape"),
        pytest.param('"\\udc00x"', "\udc00x", id="lone-low-surrogate-escape"),
        pytest.param('"\\uD83D\\uDE00"', "😀", id="surrogate-pair-escape-is-one-character"),
        pytest.param('"\\ud83d\\ud83d\\ude00"', "\ud83d😀", id="lone-then-pair"),
        pytest.param('"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\/\b\f\n\r\t', id="short-escapes"),
        pytest.param('"\x7f\u2028\u2029"', "\x7f\u2028\u2029", id="del-and-line-separators-raw"),
        pytest.param("\ufeff[1]", [1], id="leading-bom-stripped"),
        pytest.param("-0", 0, id="minus-zero"),
        pytest.param("1E+2", 100.0, id="uppercase-exponent"),
        pytest.param("1e400", float("inf"), id="huge-exponent-is-infinity"),
        pytest.param("1" * 5000, float("1" * 5000), id="integer-longer-than-python-converts"),
        pytest.param('{"a": 1, "a": 2}', {"a": 2}, id="duplicate-key-last-wins"),
        pytest.param('{"__proto__": 1}', {"__proto__": 1}, id="proto-is-a-plain-key"),
    ],
)
def test_what_json_parse_accepts(text: str, value: object) -> None:
    assert parse(text).value == value


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        pytest.param("", "Unexpected end of JSON input", 0, id="empty"),
        pytest.param("  ", "Unexpected end of JSON input", 2, id="only-whitespace"),
        pytest.param("{", "Expected property name or '}'", 1, id="open-object"),
        pytest.param("{ not json", "Expected property name or '}'", 2, id="bare-word-key"),
        pytest.param("{'a': 1}", "Expected property name or '}'", 1, id="single-quotes"),
        pytest.param('{"a": 1,}', "Expected double-quoted property name", 8,
                     id="trailing-comma-in-object"),
        pytest.param("[1,]", "Unexpected token ']'", 3, id="trailing-comma-in-array"),
        pytest.param('{"a" 1}', "Expected ':' after property name", 5, id="missing-colon"),
        pytest.param('{"a":1,"b" 2}', "Unexpected number", 11, id="missing-later-colon"),
        pytest.param('{"a": 1 "b": 2}', "Expected ',' or '}' after property value", 8,
                     id="missing-comma-in-object"),
        pytest.param("[1 2]", "Expected ',' or ']' after array element", 3,
                     id="missing-comma-in-array"),
        pytest.param('{"a": [1}', "Expected ',' or ']' after array element", 8,
                     id="mismatched-bracket"),
        pytest.param('"abc', "Unterminated string", 4, id="unterminated-string"),
        pytest.param('"a\tb"', "Bad control character in string literal", 2,
                     id="raw-tab-in-string"),
        pytest.param('"a\nb"', "Bad control character in string literal", 2,
                     id="raw-newline-in-string"),
        pytest.param('"\\x"', "Bad escaped character", 2, id="unknown-escape"),
        pytest.param('"\\\'"', "Bad escaped character", 2, id="escaped-single-quote"),
        pytest.param('"\\u12G4"', "Bad Unicode escape", 5, id="bad-hex-digit"),
        pytest.param('"\\u12"', "Bad Unicode escape", 5, id="short-unicode-escape"),
        pytest.param('"\\', "Unexpected end of JSON input", 2, id="backslash-at-end"),
        pytest.param('"\\中"', "Unexpected token '中'", 2, id="escaped-non-latin-1"),
        pytest.param("-", "No number after minus sign", 1, id="lone-minus"),
        pytest.param("-Infinity", "No number after minus sign", 1, id="minus-infinity"),
        pytest.param("1.", "Unterminated fractional number", 2, id="no-fraction-digits"),
        pytest.param(".5", "Unexpected token '.'", 0, id="no-integer-digits"),
        pytest.param("1e", "Exponent part is missing a number", 2, id="no-exponent-digits"),
        pytest.param("1e+", "Exponent part is missing a number", 3, id="signed-no-digits"),
        pytest.param("01", "Unexpected number", 1, id="leading-zero"),
        pytest.param("+1", "Unexpected token '+'", 0, id="plus-sign"),
        pytest.param("0x1F", "Unexpected non-whitespace character after JSON", 1, id="hex"),
        pytest.param("\u0661", "Unexpected token '\u0661'", 0, id="non-ascii-digit"),
        pytest.param("NaN", '"NaN" is not valid JSON', 0, id="nan"),
        pytest.param("Infinity", '"Infinity" is not valid JSON', 0, id="infinity"),
        pytest.param("[NaN]", "Unexpected token 'N'", 1, id="nan-inside"),
        pytest.param("tru", "Unexpected end of JSON input", 3, id="cut-literal"),
        pytest.param("trux", "Unexpected token 'x'", 3, id="misspelt-literal"),
        pytest.param("True", "Unexpected token 'T'", 0, id="capitalized-literal"),
        pytest.param("{}x", "Unexpected non-whitespace character after JSON", 2,
                     id="text-after-value"),
        pytest.param("{}\n{}", "Unexpected non-whitespace character after JSON", 3,
                     id="two-documents"),
        pytest.param("// c\n{}", "Unexpected token '/'", 0, id="line-comment"),
        pytest.param("{} /* c */", "Unexpected non-whitespace character after JSON", 3,
                     id="block-comment"),
        pytest.param("\u00a0{}", "Unexpected token U+00A0", 0, id="nbsp-is-not-json-whitespace"),
        pytest.param("\x0b{}", "Unexpected token U+000B", 0, id="vertical-tab"),
        pytest.param("\ufeff\ufeff{}", "Unexpected token U+FEFF", 1, id="second-bom"),
        pytest.param("\ufeff{", "Expected property name or '}'", 2, id="offsets-count-the-bom"),
        pytest.param('{"é": 1,}', "Expected double-quoted property name", 8,
                     id="offsets-count-code-points"),
        pytest.param("undefined", '"undefined" is not valid JSON', 0, id="undefined"),
        pytest.param("[object Object]", '"[object Object]" is not valid JSON', 1,
                     id="a-stringified-object"),
        pytest.param("\ufeffNaN", '"NaN" is not valid JSON', 1, id="bom-then-nan"),
        pytest.param('"\\\u00ff"', "Bad escaped character", 2, id="escaped-latin-1-is-bad"),
        pytest.param('"\\\u0100"', "Unexpected token '\u0100'", 2,
                     id="escaped-above-latin-1-is-unexpected"),
        pytest.param('"\\u0041\x01"', "Bad control character in string literal", 7,
                     id="a-unicode-escape-is-four-digits"),
        pytest.param('"a b', "Unterminated string", 4, id="a-space-is-no-control-character"),
        pytest.param('"\x1f"', "Bad control character in string literal", 1,
                     id="last-control-character"),
        pytest.param("1e-", "Exponent part is missing a number", 3, id="minus-no-digits"),
        pytest.param("-01", "Unexpected number", 2, id="minus-leading-zero"),
        pytest.param("1X", "Unexpected non-whitespace character after JSON", 1,
                     id="only-e-starts-an-exponent"),
        pytest.param("1eX", "Exponent part is missing a number", 2,
                     id="only-a-sign-may-follow-the-e"),
        pytest.param("\U000e0001", "Unexpected token U+E0001", 0, id="astral-unprintable"),
    ],
)  # fmt: skip
def test_what_json_parse_rejects_with_its_message_and_offset(
    text: str, message: str, offset: int
) -> None:
    assert error_of(text) == (message, offset)
    with pytest.raises(ValueError):  # the oracle agrees that it is not JSON
        loads(text)


def test_a_parse_error_is_a_value_error_naming_its_offset() -> None:
    error = JsonParseError("Unexpected end of JSON input", 7)
    assert isinstance(error, ValueError)
    assert str(error) == "Unexpected end of JSON input at offset 7"
    assert error.args == ("Unexpected end of JSON input",)  # what a ValueError handler reads


# --------------------------------------------------------------------------- spans and paths


def test_every_value_and_key_knows_its_span_and_path() -> None:
    text = '{"a": [1, {"b": null}], "c": "x"}'
    root = parse(text)
    assert (root.start, root.end, root.path) == (0, len(text), ())
    node = root.find(("a", 1, "b"))
    assert node is not None
    assert (text[node.start : node.end], node.path, node.value) == ("null", ("a", 1, "b"), None)
    parent = root.find(("a", 1))
    assert parent is not None
    member = parent.member("b")
    assert member is not None
    assert text[member.key_start : member.key_end] == '"b"'
    assert text[member.start : member.end] == '"b": null'
    assert root.find(("a", 5)) is None
    assert root.find(("zzz",)) is None
    assert root.find(("c", "x")) is None


def test_a_key_with_unicode_escapes_spans_its_escapes() -> None:
    text = '{"caf\\u00e9 \\ud83d\\ude00": 1, "x": 2}'
    root = parse(text)
    member = root.member("café 😀")
    assert member is not None
    assert text[member.key_start : member.key_end] == '"caf\\u00e9 \\ud83d\\ude00"'
    other = root.member("x")
    assert other is not None
    assert text[other.key_start : other.key_end] == '"x"'


def test_offsets_are_code_points_of_the_text_as_given() -> None:
    text = '\ufeff{"😀": "中文", "k": 1}'
    root = parse(text)
    assert root.start == 1
    member = root.member("k")
    assert member is not None
    assert text[member.key_start : member.key_end] == '"k"'
    assert member.key_start == len('\ufeff{"😀": "中文", ')


def test_duplicate_keys_point_at_the_last_occurrence() -> None:
    text = '{"a": 1, "b": 2, "a": 3}'
    root = parse(text)
    member = root.member("a")
    assert member is not None
    assert member.key_start == text.rindex('"a"')
    assert member.value.value == 3
    assert [m.key_start for m in root.occurrences("a")] == [1, text.rindex('"a"')]
    assert [m.key for m in root.members] == ["a", "b", "a"]
    assert root.value == {"a": 3, "b": 2}
    assert list(root.value) == ["a", "b"]  # JavaScript keeps the first position too


def test_an_escaped_duplicate_is_a_duplicate() -> None:
    root = parse('{"a": 1, "\\u0061": 2}')
    assert root.value == {"a": 2}
    assert len(root.occurrences("a")) == 2


def test_leaves_have_no_members_or_items() -> None:
    root = parse('[{"a": "s"}, [], {}]')
    string = root.find((0, "a"))
    assert string is not None
    assert (string.members, string.items, string.member("a")) == ((), (), None)
    empty_object = root.find((2,))
    assert empty_object is not None and empty_object.is_object
    assert empty_object.member("a") is None


def test_walk_visits_every_node_in_text_order() -> None:
    text = '{"a": [1, 2], "b": {"c": 3}, "a": 4}'
    starts = [node.start for node in parse(text).walk()]
    assert starts == sorted(starts)
    assert len(starts) == 7  # root, [1, 2], 1, 2, {c}, 3, and the last "a"'s 4


# --------------------------------------------------------------------------- depth


@pytest.mark.parametrize(
    ("opening", "closing"),
    [
        pytest.param("[", "]", id="arrays"),
        pytest.param('{"a":', "}", id="objects"),
    ],
)
def test_nesting_deeper_than_python_recursion_parses(opening: str, closing: str) -> None:
    depth = 100_000
    assert depth > sys.getrecursionlimit()
    text = opening * depth + "0" + closing * depth
    root = parse(text)
    deepest = max(root.walk(), key=lambda node: node.start)
    assert deepest.value == 0
    assert len(deepest.path) == depth
    assert (deepest.start, deepest.end) == (len(opening) * depth, len(opening) * depth + 1)
    assert "path" in repr(deepest)


def test_an_error_deep_inside_is_reported_without_recursion() -> None:
    text = "[" * 100_000 + "}"
    assert error_of(text) == ("Unexpected token '}'", 100_000)


# --------------------------------------------------------------------------- properties


def nodes_and_slices(text: str, root: JsonNode) -> None:
    """Every node's span re-parses to its value, every key's span to its key, and every
    node ``JSON.parse`` keeps (none of its ancestors a shadowed duplicate) is the one its
    path leads to."""
    kept: dict[int, bool] = {}
    for node in root.walk():
        assert loads(text[node.start : node.end]) == node.value
        for member in node.members:
            assert loads(text[member.key_start : member.key_end]) == member.key
            assert loads("{" + text[member.start : member.end] + "}") == {
                member.key: member.value.value
            }
        parent = node.parent
        if parent is None:
            kept[id(node)] = True
        elif isinstance(node.key, str):
            last = parent.member(node.key)
            kept[id(node)] = kept[id(parent)] and last is not None and last.value is node
        else:
            kept[id(node)] = kept[id(parent)]
        if kept[id(node)]:
            assert root.find(node.path) is node


@settings(max_examples=examples(400))
@given(st.randoms(use_true_random=False))
def test_spans_slice_the_text_to_exactly_the_key_or_value_they_name(
    rng: random.Random,
) -> None:
    text = jsongen.document(rng)
    root = parse(text)
    assert root.value == loads(text)
    nodes_and_slices(text, root)


@settings(max_examples=examples(600))
@given(st.randoms(use_true_random=False))
def test_validity_agrees_with_json_loads_on_mutated_texts(rng: random.Random) -> None:
    text = jsongen.mutate(jsongen.document(rng), rng)
    try:
        expected = loads(text)
    except ValueError:
        with pytest.raises(JsonParseError) as info:
            parse(text)
        assert 0 <= info.value.offset <= len(text)
        return
    root = parse(text)
    assert root.value == expected
    nodes_and_slices(text, root)


@settings(max_examples=examples(300))
@given(st.text())
def test_any_text_parses_or_raises_a_parse_error_inside_it(text: str) -> None:
    try:
        expected = loads(text)
    except ValueError:
        with pytest.raises(JsonParseError) as info:
            parse(text)
        assert 0 <= info.value.offset <= len(text)
    else:
        assert parse(text).value == expected


# --------------------------------------------------------------------------- JavaScript


def javascript_message(message: str) -> str:
    """Our message as V8 words it: V8 quotes any character, and in UTF-16."""
    prefix = "Unexpected token U+"
    if message.startswith(prefix):
        message = f"Unexpected token '{chr(int(message[len(prefix) :], 16))}'"
    if message.startswith("Unexpected token '") and ord(message[-2]) > 0xFFFF:
        high = 0xD800 + ((ord(message[-2]) - 0x10000) >> 10)
        message = message[:-2] + chr(high) + "'"
    return message


def test_parse_agrees_with_javascript_json_parse(node: RunNode) -> None:
    """Valid or not, and when not, V8's message and position (in UTF-16 units)."""
    rng = random.Random(20260412)
    texts = [jsongen.document(rng) for _ in range(2000)]
    texts += [jsongen.mutate(jsongen.document(rng), rng) for _ in range(6000)]
    results = json.loads(node("json_parse.mjs", stdin=json.dumps(texts)))
    assert len(results) == len(texts)
    disagreements = []
    valid = 0
    for text, result in zip(texts, results, strict=True):
        try:
            parse(text)
        except JsonParseError as error:
            ours: dict[str, object] = {
                "message": javascript_message(error.message),
                "position": units_length(text[: error.offset], "utf-16"),
            }
            position = result.get("position")
            same_message = "ok" not in result and ours["message"] == result["message"]
            same_position = position is None or position == ours["position"]
            if not (same_message and same_position):
                disagreements.append((text, ours, result))
        else:
            valid += 1
            if "ok" not in result:
                disagreements.append((text, "accepted", result))
    assert disagreements == []
    assert 2000 < valid < 6000  # both kinds were really compared


# --------------------------------------------------------------------------- the API


def test_decode_number_reads_integers_as_python_does_up_to_its_digit_limit() -> None:
    """Up to 4300 digits (Python's limit for ``int()``) an integer stays exact; longer,
    it is a double, as JavaScript reads every number. The sign is not a digit."""
    assert decode_number("1" * 4300) == int("1" * 4300)
    assert isinstance(decode_number("-" + "1" * 4300), int)
    assert decode_number("1" * 4301) == float("1" * 4301)
    assert decode_number("-" + "1" * 4301) == -float("1" * 4301)
    assert (decode_number("12"), decode_number("1.5"), decode_number("1e2")) == (12, 1.5, 100.0)
    assert decode_number("1E2") == 100.0 and isinstance(decode_number("1E2"), float)


def test_find_takes_only_indices_inside_an_array() -> None:
    """An index finds an item of an array only: not past the end, not counted from the
    end (``-1`` is no index in JSON), not on an object."""
    root = parse('{"a": [10, 20], "0": "zero"}')
    assert [root.find(("a", i)) for i in (2, -1)] == [None, None]
    first = root.find(("a", 0))
    assert first is not None and first.value == 10
    assert root.find((0,)) is None
    assert root.find(("a", "0")) is None


def test_a_node_and_a_member_show_where_they_are() -> None:
    text = '{"k": [true]}'
    root = parse(text)
    item = root.find(("k", 0))
    assert repr(item) == "<JsonNode bool 7:11 path=('k', 0)>"
    assert repr(root) == "<JsonNode dict 0:13 path=()>"
    assert repr(root.member("k")) == "<JsonMember 'k' 1:4>"


def test_a_node_knows_its_parent_and_key() -> None:
    root = parse('{"a": [1, {"b": 2}]}')
    b = root.find(("a", 1, "b"))
    assert b is not None and b.key == "b"
    inner = b.parent
    assert inner is not None and inner.key == 1 and inner.is_object
    array = inner.parent
    assert array is not None and array.key == "a" and not array.is_object
    assert array.parent is root and root.parent is None and root.key is None
