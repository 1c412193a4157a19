"""The marker grammar: boundary, wrappers, name rule, query rule, the cursor token.

docs/grammar.md, "Boundary", "The name rule", "The completion token". Pi runs in
JavaScript, so where JavaScript and Python disagree (what ``\\s`` is) JavaScript wins;
the differential tests at the end ask Node's own regex engine.
"""

from __future__ import annotations

import json
import re

import pytest
import regex
from pi_snippets_lsp.core.grammar import (
    CJK_PUNCTUATION_LIST,
    MARKER_CANDIDATE_RE,
    MARKER_PATTERN,
    Token,
    find_token,
    is_boundary_before,
    is_separator,
    is_valid_name,
    is_valid_query,
)

from .conftest import RunNode, random_texts

#: The grammar as one pattern (what expansion's fast scan must agree with).
MARKER_RE = regex.compile(MARKER_PATTERN)

# --------------------------------------------------------------------------- boundary

#: Text before a ``%`` after which a marker may start.
BOUNDARIES = [
    pytest.param("", id="start-of-text"),
    pytest.param("line\n", id="start-of-line-after-lf"),
    pytest.param("line\r\n", id="start-of-line-after-crlf"),
    pytest.param("line\r", id="start-of-line-after-lone-cr"),
    pytest.param("a ", id="after-space"),
    pytest.param("a\t", id="after-tab"),
    pytest.param("a\x0b", id="after-vertical-tab"),
    pytest.param("a\x0c", id="after-form-feed"),
    pytest.param("a\u00a0", id="after-nbsp"),
    pytest.param("a\u1680", id="after-ogham-space-mark"),
    pytest.param("a\u2003", id="after-em-space"),
    pytest.param("a\u202f", id="after-narrow-nbsp"),
    pytest.param("a\u205f", id="after-math-space"),
    pytest.param("a\u3000", id="after-ideographic-space"),
    pytest.param("a\ufeff", id="after-bom-zwnbsp-js-whitespace"),
    pytest.param("a\u2028", id="after-line-separator"),
    pytest.param("a\u2029", id="after-paragraph-separator"),
    *(
        pytest.param("a" + char, id=f"after-pi-listed-cjk-punctuation-U+{ord(char):04X}")
        for char in "，．：；！？（）［］｛｝“”‘’…—"
    ),
    *(
        pytest.param("中" + char, id=f"after-cjk-script-punctuation-U+{ord(char):04X}")
        for char in "。、「」『』《》【】・〜｡､"
    ),
    pytest.param("a\u00b7", id="after-middle-dot-whose-script-extensions-include-han"),
    pytest.param("a\U00016fe2", id="after-astral-old-chinese-hook-mark"),
    pytest.param("😀 ", id="after-space-after-emoji"),
]

#: Text before a ``%`` after which a marker may NOT start.
NOT_BOUNDARIES = [
    pytest.param("a\x85", id="not-after-nel-python-whitespace-not-js"),
    pytest.param("a\x1c", id="not-after-file-separator-python-whitespace-not-js"),
    pytest.param("a\x1d", id="not-after-group-separator-python-whitespace-not-js"),
    pytest.param("a\x1e", id="not-after-record-separator-python-whitespace-not-js"),
    pytest.param("a\x1f", id="not-after-unit-separator-python-whitespace-not-js"),
    pytest.param("a\u200b", id="not-after-zero-width-space"),
    pytest.param("a\u180e", id="not-after-mongolian-vowel-separator"),
    pytest.param("a,", id="not-after-ascii-comma"),
    pytest.param("a:", id="not-after-ascii-colon"),
    pytest.param("a'", id="not-after-ascii-apostrophe"),
    pytest.param('a"', id="not-after-ascii-quote"),
    pytest.param("a-", id="not-after-ascii-hyphen"),
    pytest.param("a.", id="not-after-ascii-period"),
    pytest.param("a!", id="not-after-ascii-bang"),
    pytest.param("a/", id="not-after-slash"),
    pytest.param("a=", id="not-after-equals"),
    pytest.param("a)", id="not-after-closing-paren"),
    pytest.param("a%", id="not-after-percent"),
    pytest.param("x", id="not-after-letter"),
    pytest.param("X", id="not-after-uppercase-letter"),
    pytest.param("5", id="not-after-digit"),
    pytest.param("_", id="not-after-underscore"),
    pytest.param("中", id="not-after-han-letter"),
    pytest.param("あ", id="not-after-hiragana-letter"),
    pytest.param("ア", id="not-after-katakana-letter"),
    pytest.param("ー", id="not-after-katakana-prolonged-sound-mark-a-letter"),
    pytest.param("한", id="not-after-hangul-letter"),
    pytest.param("a\u2013", id="not-after-en-dash-common-script-unlisted"),
    pytest.param("a«", id="not-after-guillemet"),
    pytest.param("a\u203b", id="not-after-reference-mark-a-symbol"),
    pytest.param("😀", id="not-after-emoji"),
]


@pytest.mark.parametrize("before", BOUNDARIES)
def test_a_marker_starts_at_a_boundary(before: str) -> None:
    text = before + "%ab"
    assert is_boundary_before(text, len(before))
    assert find_token(text) == Token(start=len(before), query="ab")
    match = MARKER_RE.search(text)
    assert match is not None
    assert match.start("name") == len(before) + 1


@pytest.mark.parametrize("before", NOT_BOUNDARIES)
def test_no_marker_starts_anywhere_else(before: str) -> None:
    text = before + "%ab"
    assert not is_boundary_before(text, len(before))
    assert find_token(text) is None
    assert MARKER_RE.search(text) is None


@pytest.mark.parametrize(
    "char",
    [pytest.param(c, id=f"U+{ord(c):04X}") for c in "\x85\x1c\x1d\x1e\x1f"],
)
def test_python_whitespace_that_javascript_rejects_is_no_separator(char: str) -> None:
    # The reason these cases exist: Python calls them whitespace, JavaScript does not.
    assert char.isspace()
    assert re.fullmatch(r"\s", char) is not None
    assert not is_separator(char)


def test_every_character_of_pis_punctuation_list_is_a_separator() -> None:
    assert CJK_PUNCTUATION_LIST == "，．：；！？（）［］｛｝“”‘’…—"
    assert [c for c in CJK_PUNCTUATION_LIST if not is_separator(c)] == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("ab", id="two-letters"),
        pytest.param("  ", id="two-spaces"),
        pytest.param(" a", id="space-then-letter"),
    ],
)
def test_a_separator_is_exactly_one_character(text: str) -> None:
    assert not is_separator(text)


# --------------------------------------------------------------------------- wrappers

WRAPPED = [
    pytest.param("(", id="paren"),
    pytest.param("[", id="bracket"),
    pytest.param("{", id="brace"),
    pytest.param("<", id="angle"),
    pytest.param("`", id="backtick"),
    pytest.param("((", id="two-parens"),
    pytest.param("([`{<", id="every-wrapper-in-a-row"),
    pytest.param("say (", id="wrapper-after-space"),
    pytest.param("x\n[[", id="wrappers-at-line-start"),
    pytest.param("，(", id="wrapper-after-cjk-punctuation"),
    pytest.param("（(", id="ascii-wrapper-after-fullwidth-paren"),
]

NOT_WRAPPED = [
    pytest.param("x(", id="wrapper-after-letter"),
    pytest.param("x((", id="wrappers-after-letter"),
    pytest.param(")(", id="wrapper-after-closing-paren"),
    pytest.param(" '", id="apostrophe-is-no-wrapper"),
    pytest.param(' "', id="quote-is-no-wrapper"),
    pytest.param(" «", id="guillemet-is-no-wrapper"),
    pytest.param(" (x(", id="wrapper-run-broken-by-letter"),
]


@pytest.mark.parametrize("before", WRAPPED)
def test_opening_wrappers_may_sit_between_boundary_and_marker(before: str) -> None:
    text = before + "%ab"
    assert is_boundary_before(text, len(before))
    assert find_token(text) == Token(start=len(before), query="ab")
    match = MARKER_RE.search(text)
    assert match is not None
    assert match.start("name") == len(before) + 1


@pytest.mark.parametrize("before", NOT_WRAPPED)
def test_wrappers_do_not_make_a_boundary_of_their_own(before: str) -> None:
    text = before + "%ab"
    assert not is_boundary_before(text, len(before))
    assert find_token(text) is None
    assert MARKER_RE.search(text) is None


@pytest.mark.parametrize("after", ["(", "x(", " ", "%"])
def test_wrappers_at_the_start_of_a_text_make_a_boundary_whatever_ends_it(after: str) -> None:
    """The start of the text is a boundary, also behind wrappers; what the text ends
    with has no say (the search stops at its start, it does not wrap around)."""
    text = "((%ab" + after
    assert is_boundary_before(text, 2)
    assert MARKER_RE.search(text) is not None


def _every_code_point() -> list[str]:
    return [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def test_the_fast_boundary_test_is_the_unicode_one_for_every_character() -> None:
    """``is_boundary_before`` answers ASCII from a set and caches the rest: for every
    code point, before a ``%`` and before wrappers, it still says ``is_separator``."""
    wrong = [
        f"U+{ord(c):04X}"
        for c in _every_code_point()
        if is_boundary_before(f"x{c}%a", 2) != is_separator(c)
        or is_boundary_before(f"x{c}([%a", 4) != is_separator(c)
    ]
    assert wrong == []


def test_a_candidate_is_rejected_in_the_pattern_only_when_no_marker_can_start_there() -> None:
    """``MARKER_CANDIDATE_RE`` drops a ``%`` after some characters without a boundary test;
    after every one of them, no marker can start."""
    dropped = [c for c in _every_code_point() if MARKER_CANDIDATE_RE.search(f"{c}%a") is None]
    assert dropped  # ASCII letters, digits and most punctuation
    assert [c for c in dropped if is_separator(c) or c in "([{<`"] == []
    assert all(c.isascii() for c in dropped)


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("a", id="one-letter"),
        pytest.param("0", id="one-digit"),
        pytest.param("use-mcp", id="hyphen-inside"),
        pytest.param("x.y", id="dot-inside"),
        pytest.param("x_y", id="underscore-inside"),
        pytest.param("0start", id="digit-first"),
        pytest.param("a--b", id="hyphen-run-inside"),
        pytest.param("a._-b", id="mixed-punctuation-inside"),
        pytest.param("v2", id="digit-last"),
    ],
)
def test_valid_names_are_lowercase_and_start_and_end_alphanumeric(name: str) -> None:
    assert is_valid_name(name)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("", id="empty"),
        pytest.param("A", id="uppercase"),
        pytest.param("Use-mcp", id="uppercase-first"),
        pytest.param("use-mcP", id="uppercase-last"),
        pytest.param("-a", id="leading-hyphen"),
        pytest.param("a-", id="trailing-hyphen"),
        pytest.param(".a", id="leading-dot"),
        pytest.param("a.", id="trailing-dot"),
        pytest.param("_a", id="leading-underscore"),
        pytest.param("a_", id="trailing-underscore"),
        pytest.param("use mcp", id="space-inside"),
        pytest.param("a%b", id="percent-inside"),
        pytest.param("a/b", id="slash-inside"),
        pytest.param("é", id="non-ascii-letter"),
        pytest.param("ａ", id="fullwidth-letter"),
        pytest.param("١", id="arabic-indic-digit"),
        pytest.param("a\n", id="trailing-newline-is-not-ignored"),
    ],
)
def test_invalid_names_are_rejected(name: str) -> None:
    assert not is_valid_name(name)


@pytest.mark.parametrize(
    ("query", "valid"),
    [
        pytest.param("", True, id="bare-percent-is-a-query"),
        pytest.param("a", True, id="one-letter"),
        pytest.param("use-", True, id="trailing-hyphen-while-typing"),
        pytest.param("use-mcp.", True, id="trailing-period-after-a-name"),
        pytest.param("x._-", True, id="trailing-punctuation-run"),
        pytest.param(".", False, id="percent-dot-is-no-token"),
        pytest.param("-x", False, id="percent-hyphen-x-is-no-token"),
        pytest.param("_", False, id="percent-underscore-is-no-token"),
        pytest.param("Use", False, id="uppercase"),
        pytest.param("a b", False, id="space-inside"),
        pytest.param("a\n", False, id="trailing-newline"),
    ],
)
def test_the_query_rule(query: str, valid: bool) -> None:
    assert is_valid_query(query) is valid


# --------------------------------------------------------------------------- find_token


@pytest.mark.parametrize(
    ("before_cursor", "expected"),
    [
        pytest.param("%", Token(0, ""), id="bare-percent-at-start"),
        pytest.param("100 %", Token(4, ""), id="bare-percent-after-space"),
        pytest.param("hello %use", Token(6, "use"), id="partial-name"),
        pytest.param("hello %use-mcp.", Token(6, "use-mcp."), id="query-keeps-punctuation"),
        pytest.param("%a %b", Token(3, "b"), id="last-marker-wins"),
        pytest.param("(%ab", Token(1, "ab"), id="after-wrapper"),
        pytest.param("first\n%ab", Token(6, "ab"), id="on-second-line"),
        pytest.param("😀 %a", Token(2, "a"), id="after-emoji-in-code-points"),
        pytest.param("😀😀，%a", Token(3, "a"), id="after-emoji-and-cjk-comma"),
        pytest.param("x" * 10_000 + " %a", Token(10_001, "a"), id="long-line"),
        pytest.param("%.", None, id="rejected-query-dot"),
        pytest.param("%-x", None, id="rejected-query-hyphen"),
        pytest.param("x%use", None, id="not-at-a-boundary"),
        pytest.param("%use ", None, id="cursor-after-space"),
        pytest.param("%Use", None, id="uppercase-in-run"),
        pytest.param("%use/x", None, id="slash-in-run"),
        pytest.param("100%", None, id="percent-after-digit"),
        pytest.param("%a%b", None, id="second-percent-glued"),
        pytest.param("%%ab", None, id="escape-is-no-token"),
        pytest.param("%use-mcp%", None, id="trailing-percent-glued"),
        pytest.param("no percent", None, id="no-percent"),
        pytest.param("", None, id="empty"),
        pytest.param("😀%a", None, id="glued-to-emoji"),
    ],
)
def test_find_token_before_the_cursor(before_cursor: str, expected: Token | None) -> None:
    assert find_token(before_cursor) == expected


def test_token_text_is_the_trigger_and_the_query() -> None:
    assert Token(start=3, query="use").text == "%use"
    assert Token(start=0, query="").text == "%"


# --------------------------------------------------------------------------- marker regex


@pytest.mark.parametrize(
    ("text", "name", "trailing", "escaped"),
    [
        pytest.param("%use-mcp.", "use-mcp", ".", False, id="trailing-period-is-not-in-the-name"),
        pytest.param("%a...", "a", "...", False, id="trailing-ellipsis"),
        pytest.param("%a-", "a", "-", False, id="trailing-hyphen"),
        pytest.param("%a_.", "a", "_.", False, id="trailing-underscore-period"),
        pytest.param("%use-mcpx", "use-mcpx", "", False, id="greedy-name-never-shortened"),
        pytest.param("%%use-mcp", "use-mcp", "", True, id="escape-percent"),
        pytest.param("%x.y.", "x.y", ".", False, id="inner-dot-kept-outer-dot-trailing"),
    ],
)
def test_marker_regex_parts(text: str, name: str, trailing: str, escaped: bool) -> None:
    match = MARKER_RE.search(text)
    assert match is not None
    assert match.group("name") == name
    assert match.group("trailing") == trailing
    assert bool(match.group("escape")) is escaped


# --------------------------------------------------------------------------- JavaScript

#: Code points compared with Node: the whole BMP (surrogates are skipped by the script),
#: the astral blocks where CJK punctuation lives, and a stride through the rest.
_ASTRAL_BLOCKS = [
    "16FE0-16FFF",  # Ideographic Symbols and Punctuation (Han/Tangut/Nushu marks)
    "1F200-1F2FF",  # Enclosed Ideographic Supplement
    "20000-200FF",  # CJK Extension B (letters)
    "2F800-2F8FF",  # CJK Compatibility Ideographs Supplement
    "E0000-E007F",  # Tags
]
_ASTRAL_STRIDE = 101

#: Code points where Python's answer knowingly differs from Node's, with the reason.
#: Empty: on the code points assigned alike in both, the two engines agree everywhere
#: (checked on the whole range U+0000..U+10FFFF with Node 20 / ICU 78 and regex
#: 2026.11.19).
KNOWN_DIFFERENCES: dict[int, str] = {}

_CATEGORIES = [
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
    "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
]  # fmt: skip
_CATEGORY_RE = regex.compile("|".join(f"(?P<{gc}>\\p{{gc={gc}}})" for gc in _CATEGORIES))


def _python_category(char: str) -> str:
    """General category in the Unicode data of the ``regex`` package.

    The grammar runs on ``regex``, so its data (not ``unicodedata``, which is older in
    Python 3.11) is what must agree with Node's.
    """
    match = _CATEGORY_RE.fullmatch(char)
    assert match is not None and match.lastgroup is not None
    return match.lastgroup


def _astral_sample() -> list[str]:
    ranges = list(_ASTRAL_BLOCKS)
    ranges += [f"{cp:X}-{cp:X}" for cp in range(0x10000, 0x110000, _ASTRAL_STRIDE)]
    return ranges


def test_separators_agree_with_javascript(node: RunNode) -> None:
    """Every code point: JavaScript's regex engine and ``is_separator`` give one answer.

    Unicode versions may differ between Node's ICU and ``regex``, so only code points
    assigned with the same general category in both are compared; the test also
    checks that this leaves almost all of them.
    """
    output = node("separators.mjs", "0-FFFF", *_astral_sample())
    compared = 0
    unassigned = 0
    skipped = 0
    separators = 0
    mismatches: dict[int, str] = {}
    for line in output.splitlines():
        hex_cp, js_flag, js_category = line.split()
        cp = int(hex_cp, 16)
        char = chr(cp)
        if js_category == "Cn":
            unassigned += 1
            continue
        if _python_category(char) != js_category:
            skipped += 1
            continue
        compared += 1
        js_separator = js_flag == "1"
        separators += js_separator
        if is_separator(char) != js_separator:
            mismatches[cp] = f"U+{cp:04X} ({js_category}): JavaScript says {js_separator}"
    unexplained = {cp: m for cp, m in mismatches.items() if cp not in KNOWN_DIFFERENCES}
    assert unexplained == {}
    assert set(KNOWN_DIFFERENCES) <= set(mismatches)  # a known difference that vanished
    # The comparison must have been real: most of the BMP is assigned in both, few
    # assigned code points differ in category, and there are dozens of
    # separators (25 spaces, about 55 CJK punctuation marks).
    assert compared > 60_000, (compared, unassigned, skipped)
    assert skipped < compared // 100, (compared, unassigned, skipped)
    assert 70 < separators < 200, separators


def test_find_token_agrees_with_javascript(node: RunNode) -> None:
    texts = random_texts(seed=20260101, count=4000, token_tail=True)
    payload = json.dumps({"snippets": {"a": "A"}, "texts": texts})
    results = json.loads(node("reference.mjs", stdin=payload))
    assert len(results) == len(texts)
    disagreements = []
    found = 0
    for text, result in zip(texts, results, strict=True):
        token = find_token(text)
        ours = None if token is None else token.start
        found += ours is not None
        if ours != result["token"]:
            disagreements.append((text, ours, result["token"]))
    assert disagreements == []
    assert found > 500  # the generator does reach real tokens
