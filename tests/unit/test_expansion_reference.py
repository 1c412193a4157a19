"""Expansion against a second implementation, written from docs/grammar.md alone.

The reference below is deliberately simple and deliberately different: a scanner that
walks the text one character at a time, with the character classes spelled out from the
page's tables. It shares no code with the package (not even its regular expressions),
so a mistake in ``grammar.py`` cannot hide in both. Hypothesis then compares the two on
texts built from every kind of boundary, wrapper, name character and percent sign.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_snippets_lsp.core.expansion import expand

from .conftest import PIECES, examples

# --------------------------------------------------------------------------- the page's classes

#: "Whitespace means JavaScript's \s" (the table of code points).
WHITESPACE = {
    *"\t\n\x0b\x0c\r ",
    "\u00a0",
    "\u1680",
    *(chr(c) for c in range(0x2000, 0x200B)),
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\ufeff",
}
#: "CJK punctuation", the explicit list.
LISTED_PUNCTUATION = set("，．：；！？（）［］｛｝“”‘’…—")
CJK_SCRIPTS = ("Han", "Hiragana", "Katakana", "Hangul", "Bopomofo")
#: "Wrappers".
WRAPPERS = set("([{<`")
#: "The name rule".
LETTERS_AND_DIGITS = set("abcdefghijklmnopqrstuvwxyz0123456789")
NAME_CHARACTERS = LETTERS_AND_DIGITS | set("._-")


def is_cjk_punctuation(character: str) -> bool:
    """Listed, or a Punctuation character whose script extensions include a CJK script."""
    if character in LISTED_PUNCTUATION:
        return True
    if not unicodedata.category(character).startswith("P"):
        return False
    return any(regex.match(rf"\p{{scx={script}}}", character) for script in CJK_SCRIPTS)


def starts_at_boundary(text: str, percent: int) -> bool:
    """Any run of wrappers before the ``%``, and before that nothing, whitespace or CJK
    punctuation."""
    start = percent
    while start > 0 and text[start - 1] in WRAPPERS:
        start -= 1
    if start == 0:
        return True
    before = text[start - 1]
    return before in WHITESPACE or is_cjk_punctuation(before)


def name_at(text: str, start: int) -> tuple[str, int] | None:
    """The longest run of name characters, less the ``.-_`` it may not end with."""
    if start >= len(text) or text[start] not in LETTERS_AND_DIGITS:
        return None
    end = start
    while end < len(text) and text[end] in NAME_CHARACTERS:
        end += 1
    while text[end - 1] not in LETTERS_AND_DIGITS:
        end -= 1
    return text[start:end], end


def reference_expand(text: str, snippets: Mapping[str, str]) -> str:
    """ "Expansion: one pass, no re-scan", character by character."""
    if not snippets:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "%" and starts_at_boundary(text, i):
            escape = text[i + 1 : i + 2] == "%"
            found = name_at(text, i + 2 if escape else i + 1)
            if found is not None:
                name, end = found
                if escape:
                    out.append("%" + name)
                    i = end
                    continue
                if name in snippets:
                    out.append(snippets[name])
                    i = end
                    continue
        out.append(text[i])
        i += 1
    return "".join(out)


# --------------------------------------------------------------------------- the page's examples


def test_the_reference_reads_the_page_the_same_way() -> None:
    """A few rows of docs/grammar.md, so the reference itself is known to be right."""
    mcp = {"use-mcp": "T", "a": "AAA", "x.y": "DOT", "rec": "see %use-mcp"}
    rows = {
        "Please %use-mcp.": "Please T.",
        "x%use-mcp": "x%use-mcp",
        "，%use-mcp": "，T",
        "%use-mcpx": "%use-mcpx",
        "%%use-mcp": "%use-mcp",
        "%%%a": "%%%a",
        "x(%a": "x(%a",
        "say ([`{<%a": "say ([`{<AAA",
        "%a-.-_ x": "AAA-.-_ x",
        "%x.y.": "DOT.",
        "%a%a": "AAA%a",
        "%rec": "see %use-mcp",
        "中。%a": "中。AAA",
        "a\u0085%a": "a\u0085%a",
        "a\ufeff%a": "a\ufeffAAA",
    }
    assert {text: reference_expand(text, mcp) for text in rows} == rows
    assert reference_expand("%%a", {}) == "%%a"


# --------------------------------------------------------------------------- the comparison

NAMES = ["a", "b", "use-mcp", "x.y", "1", "mcp", "a-b", "ab", "a_1"]
VALUES = st.lists(st.sampled_from([*PIECES, "AAA", "$1"]), min_size=1, max_size=4).map("".join)
TEXTS = st.lists(st.sampled_from(PIECES), max_size=20).map("".join) | st.text(max_size=30)
SNIPPETS = st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=5)


@settings(max_examples=examples(2000))
@given(text=TEXTS, snippets=SNIPPETS)
def test_expansion_agrees_with_the_reference(text: str, snippets: dict[str, str]) -> None:
    result = expand(text, snippets)
    assert result.text == reference_expand(text, snippets)
    assert result.changed == (result.text != text)
