"""Text documents the LSP way: lines and client positions.

LSP splits lines only at ``\\n``, ``\\r\\n`` and ``\\r``; Python's ``str.splitlines``
(which pygls uses) also breaks at ``\\x0b \\x0c \\x1c-\\x1e \\x85 \\u2028 \\u2029``, so a
prompt containing one of those would get wrong line numbers and, with incremental
sync, silently diverge from the editor's copy. This module keeps its own copy of each
open document and converts positions in the negotiated encoding (UTF-16 unless the
client chose UTF-8 or UTF-32): ``character`` counts code units of that encoding.

Out-of-range positions are clamped as the LSP specification asks: a character past the
end of its line means the end of the line, a line past the end means the end of text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Final, Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]
ENCODINGS: Final[tuple[Encoding, ...]] = ("utf-8", "utf-16", "utf-32")

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Position:
    """A zero-based line and a character offset in client code units."""

    line: int
    character: int


def code_units(char: str, encoding: Encoding) -> int:
    """How many code units of ``encoding`` one code point takes."""
    cp = ord(char)
    if encoding == "utf-32":
        return 1
    if encoding == "utf-16":
        return 2 if cp > 0xFFFF else 1
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


def units_length(text: str, encoding: Encoding) -> int:
    """The length of ``text`` in code units of ``encoding``."""
    if encoding == "utf-32":
        return len(text)
    return sum(code_units(c, encoding) for c in text)


def index_from_units(text: str, units: int, encoding: Encoding) -> int:
    """The code-point index in ``text`` at ``units`` code units, clamped to ``len(text)``.

    A position inside a character (half a surrogate pair, the middle of a UTF-8 sequence)
    is rounded down to that character's start.
    """
    if units <= 0:
        return 0
    if encoding == "utf-32":
        return min(units, len(text))
    seen = 0
    for index, char in enumerate(text):
        seen += code_units(char, encoding)
        if seen > units:
            return index
    return len(text)


def line_starts(text: str) -> list[int]:
    """Offsets at which each line begins, lines split at ``\\n``, ``\\r\\n`` and ``\\r``."""
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


@dataclass
class Document:
    """One open document: its text, version, and line index (rebuilt on change)."""

    uri: str
    text: str
    version: int | None = None
    language_id: str | None = None
    _starts: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._starts = line_starts(self.text)

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line(self, number: int) -> str:
        """The text of line ``number`` without its line break ("" past the end)."""
        if not 0 <= number < len(self._starts):
            return ""
        start = self._starts[number]
        end = self._starts[number + 1] if number + 1 < len(self._starts) else len(self.text)
        content = self.text[start:end]
        if content.endswith("\r\n"):
            return content[:-2]
        if content.endswith(("\n", "\r")):
            return content[:-1]
        return content

    def offset_at(self, position: Position, encoding: Encoding) -> int:
        """The code-point offset in ``text`` of a client position (clamped)."""
        if position.line < 0:
            return 0
        if position.line >= len(self._starts):
            return len(self.text)
        line = self.line(position.line)
        return self._starts[position.line] + index_from_units(line, position.character, encoding)

    def position_at(self, offset: int, encoding: Encoding) -> Position:
        """The client position of a code-point offset in ``text`` (clamped)."""
        offset = max(0, min(offset, len(self.text)))
        number = bisect_right(self._starts, offset) - 1
        start = self._starts[number]
        line = self.line(number)
        column = min(offset - start, len(line))
        return Position(number, units_length(line[:column], encoding))

    def contains(self, position: Position) -> bool:
        """Whether ``position`` names an existing line (characters are clamped anyway)."""
        return 0 <= position.line < len(self._starts) and position.character >= 0

    def apply_change(
        self,
        text: str,
        start: Position | None = None,
        end: Position | None = None,
        encoding: Encoding = "utf-16",
    ) -> None:
        """Apply one ``didChange`` content change: the whole text, or a range's text."""
        if start is None or end is None:
            self.text = text
        else:
            a = self.offset_at(start, encoding)
            b = self.offset_at(end, encoding)
            if b < a:
                a, b = b, a
            self.text = self.text[:a] + text + self.text[b:]
        self._starts = line_starts(self.text)

    def text_before(self, position: Position, encoding: Encoding) -> tuple[str, int]:
        """The cursor line's text before ``position`` and the offset where that line starts."""
        if not 0 <= position.line < len(self._starts):
            # No such line: nothing before the cursor, which is clamped like offset_at's.
            return "", self.offset_at(position, encoding)
        line = self.line(position.line)
        column = index_from_units(line, position.character, encoding)
        return line[:column], self._starts[position.line]
