"""The marker grammar, in one place, so completion and expansion cannot disagree.

Rules: docs/grammar.md ("Boundary", "Wrappers", "The name rule", "Escapes").

A marker is ``%name``. It counts only at a *boundary*: the start of the text or of a
line, after whitespace, or after CJK punctuation, with any number of the opening
wrappers ``( [ { < `` between the boundary and the ``%``. The boundary is the one
Pi's editor (pi-tui 1.1.0) uses to decide when to open its completion popup, so a
position where the popup can open is exactly a position where submission expands.

Pi runs in JavaScript, so "whitespace" is JavaScript's ``\\s`` (which includes U+FEFF
and excludes U+001C..U+001F and U+0085, unlike Python's), and "punctuation" is the
Unicode ``Punctuation`` property restricted to CJK scripts, plus Pi's explicit list of
fullwidth and typographic punctuation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import regex


TRIGGER: Final = "%"

#: JavaScript's ``\s``: WhiteSpace plus LineTerminator (ECMA-262 22.2.2.9).
JS_WHITESPACE: Final = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: The characters after which pi-tui's fuzzy match counts a word start (docs/grammar.md,
#: "Ranking"): whitespace, ``-``, ``_``, ``.``, ``/`` and ``:``.
FUZZY_BOUNDARIES: Final = frozenset(JS_WHITESPACE + "-_./:")
_JS_SPACE_CLASS: Final = "[" + "".join(f"\\u{ord(c):04x}" for c in JS_WHITESPACE) + "]"

#: Scripts whose text may break anywhere (pi-tui ``cjkBreakRegex``).
_CJK_SCRIPTS: Final = (
    r"[\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}"
    r"\p{Script_Extensions=Katakana}\p{Script_Extensions=Hangul}"
    r"\p{Script_Extensions=Bopomofo}]"
)
#: Pi's explicit CJK punctuation list (pi-tui ``cjkPunctuationRegex``).
CJK_PUNCTUATION_LIST: Final = "，．：；！？（）［］｛｝“”‘’…—"
_CJK_PUNCTUATION: Final = rf"(?:(?=\p{{Punctuation}}){_CJK_SCRIPTS}|[{CJK_PUNCTUATION_LIST}])"
_SEPARATOR: Final = rf"(?:{_JS_SPACE_CLASS}|{_CJK_PUNCTUATION})"

#: Opening wrappers allowed between the boundary and the ``%``.
WRAPPERS: Final = "([{<`"
_WRAPPERS_CLASS: Final = r"[(\[{<`]"

#: Snippet names and marker names share one grammar.
NAME_PATTERN: Final = r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?"
#: Characters a partial name typed in the popup may contain.
NAME_RUN_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")

#: The name rule is ASCII-only, so the standard library's engine suffices: ``regex`` is
#: imported only when a text needs Unicode's script properties (``_separator_re``).
_NAME_RE: Final = re.compile(NAME_PATTERN)
_QUERY_RE: Final = re.compile(r"[a-z0-9][a-z0-9._-]*")

#: Whole-text expansion: boundary, wrappers, ``%``, optional escape ``%``, name, and the
#: leftover ``[._-]`` run that is re-emitted as surrounding punctuation. A greedy
#: maximal name run would swallow the period of ``Please %use-mcp.``; capturing the
#: leftover separately keeps it, while ``%use-mcpx`` is never shortened to ``use-mcp``.
#: ``\A`` plus the separators covers "start of any line": every line terminator is
#: JavaScript whitespace.
#: (For the third-party ``regex`` engine: it has Unicode script properties.)
MARKER_PATTERN: Final = (
    rf"(?P<boundary>\A|{_SEPARATOR})(?P<wrappers>{_WRAPPERS_CLASS}*)"
    rf"%(?P<escape>%)?(?P<name>{NAME_PATTERN})(?P<trailing>[._-]*)"
)

#: The same markers, found fast. ``MARKER_PATTERN`` tries its boundary (a Unicode property
#: class) at every position of a text; this stdlib pattern starts with the literal ``%``,
#: which the engine finds at C speed, and rejects a ``%`` glued to an ASCII character that
#: is neither a separator nor a wrapper (``x%a``, ``50%``, ``=%h``) without leaving C.
#: What it keeps is a *candidate*: ``%``, the optional escape ``%`` (group 1) and the name
#: (group 2, as ``MARKER_PATTERN`` takes it: the trailing ``[._-]`` run is left unmatched, and
#: the candidate ends with the name). A candidate is a marker exactly when
#: ``is_boundary_before`` holds at its start: every ``MARKER_PATTERN`` match has a candidate at
#: its ``%``, and the escape ``%`` of a candidate never starts one of its own (a ``%`` is
#: no boundary).
#: ASCII characters after which no marker can start: neither a separator nor a wrapper.
_NO_MARKER_AFTER: Final = "".join(
    re.escape(chr(code))
    for code in range(0x80)
    if chr(code) not in WRAPPERS and chr(code) not in JS_WHITESPACE
)
MARKER_CANDIDATE_RE: Final = re.compile(rf"%(?<![{_NO_MARKER_AFTER}]%)(%?)({NAME_PATTERN})")
#: Characters that are separators without asking Unicode: JavaScript's whitespace and
#: Pi's explicit CJK punctuation list (a subset of ``is_separator``; the fast path).
COMMON_SEPARATORS: Final = frozenset(JS_WHITESPACE + CJK_PUNCTUATION_LIST)

#: Every separator, listed: the code points ``is_separator`` accepts in the Unicode data
#: of the ``regex`` package (JavaScript's whitespace, and 55 CJK punctuation marks), for
#: patterns that must tell a boundary without leaving the regex engine (expansion's).
#: tests/unit/test_grammar.py holds the list to ``is_separator`` on every code point, so a
#: Unicode update that adds one fails there, not silently here.
SEPARATOR_RANGES: Final = (
    (0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0xB7, 0xB7), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2014, 0x2014), (0x2018, 0x2019), (0x201C, 0x201D),
    (0x2026, 0x2026), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
    (0x3000, 0x3003), (0x3008, 0x3011), (0x3014, 0x301F), (0x3030, 0x3030),
    (0x303D, 0x303D), (0x30A0, 0x30A0), (0x30FB, 0x30FB), (0xFE45, 0xFE46),
    (0xFEFF, 0xFEFF), (0xFF01, 0xFF01), (0xFF08, 0xFF09), (0xFF0C, 0xFF0C),
    (0xFF0E, 0xFF0E), (0xFF1A, 0xFF1B), (0xFF1F, 0xFF1F), (0xFF3B, 0xFF3B),
    (0xFF3D, 0xFF3D), (0xFF5B, 0xFF5B), (0xFF5D, 0xFF5D), (0xFF61, 0xFF65),
    (0x16FE2, 0x16FE2),
)  # fmt: skip
SEPARATORS: Final = "".join(
    chr(code) for first, last in SEPARATOR_RANGES for code in range(first, last + 1)
)


def is_separator(char: str) -> bool:
    """True when ``char`` ends a token: JavaScript whitespace or CJK punctuation."""
    return _separator_re().fullmatch(char) is not None


@lru_cache(maxsize=1)
def _separator_re() -> regex.Pattern[str]:
    """The separator class, compiled when a text first needs Unicode's answer: the
    ``regex`` engine (for script properties) would otherwise be imported by every
    server's start, and most prompts are answered by ``COMMON_SEPARATORS`` alone."""
    import regex  # noqa: PLC0415 (see above)

    return regex.compile(_SEPARATOR)


@lru_cache(maxsize=4096)
def _is_separator_cached(char: str) -> bool:
    # Texts repeat the few non-ASCII characters they use; the Unicode property test runs
    # once per character, not once per marker.
    return is_separator(char)


def is_valid_name(name: str) -> bool:
    """The name rule: lowercase, starts and ends with a letter or digit."""
    return _NAME_RE.fullmatch(name) is not None


def is_valid_query(query: str) -> bool:
    """A popup query: empty, or a name-rule start followed by any name-run characters.

    ``%.`` or ``%-x`` is no snippet token, so completion leaves it to other sources;
    ``%use-mcp.`` is one (its trailing punctuation is simply matched by nothing).
    """
    return query == "" or _QUERY_RE.fullmatch(query) is not None


@dataclass(frozen=True, slots=True)
class Token:
    """The partial marker just before the cursor.

    ``start`` is the index of the ``%`` in the text that was searched, in code points;
    ``query`` is what follows it (possibly empty).
    """

    start: int
    query: str

    @property
    def text(self) -> str:
        return TRIGGER + self.query


def is_boundary_before(text: str, index: int) -> bool:
    """Whether a marker may start at ``index``: wrappers, then a boundary, before it.

    ASCII answers from a set; only a non-ASCII character needs the Unicode test.
    """
    i = index
    while i > 0 and text[i - 1] in WRAPPERS:
        i -= 1
    if i == 0:
        return True
    char = text[i - 1]
    if char in COMMON_SEPARATORS:
        return True
    # A fast path: every ASCII separator is in COMMON_SEPARATORS.
    return char >= "\x80" and _is_separator_cached(char)  # pragma: no mutate (fast path)


def find_token(text_before_cursor: str) -> Token | None:
    """The snippet token that ends ``text_before_cursor``, or None.

    Equivalent to Pi's anchored ``TOKEN_RE`` (boundary, wrappers, ``%``, name run, end),
    computed from the last ``%`` backwards so a long line costs one scan.
    """
    start = text_before_cursor.rfind(TRIGGER)
    if start < 0:
        return None
    query = text_before_cursor[start + 1 :]
    if any(c not in NAME_RUN_CHARS for c in query):
        return None
    if not is_boundary_before(text_before_cursor, start):
        return None
    if not is_valid_query(query):
        return None
    return Token(start=start, query=query)
