"""Text documents the LSP way: lines and client positions.

LSP splits lines only at ``\\n``, ``\\r\\n`` and ``\\r``; Python's ``str.splitlines``
(which pygls uses) also breaks at ``\\x0b \\x0c \\x1c-\\x1e \\x85 \\u2028 \\u2029``, so a
prompt containing one of those would get wrong line numbers and, with incremental
sync, silently diverge from the editor's copy. This module keeps its own copy of each
open document and converts positions in the negotiated encoding (UTF-16 unless the
client chose UTF-8 or UTF-32): ``character`` counts code units of that encoding.

Out-of-range positions are clamped as the LSP specification asks: a character past the
end of its line means the end of the line, a line past the end means the end of text.

A document is kept as blocks of whole lines (some 16k characters each) with the start of
every line inside its block, so a keystroke costs the block it touches, not the whole
text: re-indexing every line on every change would make a keystroke cost the whole
document.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
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
    if encoding == "utf-32" or text.isascii():  # pragma: no mutate (fast path)
        return len(text)
    return sum(code_units(c, encoding) for c in text)


def index_from_units(text: str, units: int, encoding: Encoding) -> int:
    """The code-point index in ``text`` at ``units`` code units, clamped to ``len(text)``.

    A position inside a character (half a surrogate pair, the middle of a UTF-8 sequence)
    is rounded down to that character's start.
    """
    units = max(units, 0)
    if encoding == "utf-32" or text.isascii():  # pragma: no mutate (fast path)
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


#: Characters per block: a keystroke re-splits about this much text.
BLOCK_CHARS: Final = 16384


def _offset_type(length: int) -> str:
    """The smallest array type for offsets into a block of ``length`` characters."""
    # (No test builds a block of 2**32 characters: "q" is not told from "Q".)
    return "H" if length < 1 << 16 else "I" if length < 1 << 32 else "q"  # pragma: no mutate


def _blocks_of(text: str, *, last: bool, size: int) -> tuple[list[str], list[array[int]]]:
    """``text`` (whole lines) cut into blocks of about ``size`` characters.

    Each block holds whole lines and the offsets where they start in it (2 bytes a line,
    as a block is usually under 64k characters).
    A text that is not the end of the document ends with a line break, and the line that
    would start after it belongs to what follows; at the end of the document it is a line
    of its own (a final empty line, when the text ends with a break). Blocks are cut at
    the end of a line break (never between the CR and the LF of a CRLF: the pattern takes
    CRLF first), and indexed one at a time, so memory stays a block's worth of work.
    """
    blocks: list[str] = []
    block_starts: list[array[int]] = []
    length = len(text)
    base = 0
    while True:
        cut = length
        brk = _LINE_BREAK.search(text, base + size)
        if brk is not None and length - brk.end() >= size // 2:
            cut = brk.end()
        block = text[base:cut]  # (the text itself, not a copy, when it is one block)
        starts = array(_offset_type(len(block)), [0])
        starts.extend(brk.end() for brk in _LINE_BREAK.finditer(block))
        if cut < length or not last:
            starts.pop()  # == len(block): the first line of what follows
        if starts:
            blocks.append(block)
            block_starts.append(starts)
        if cut == length:
            return blocks, block_starts
        base = cut


class Document:
    """One open document: its text (as blocks of lines), version and language.

    ``block_chars`` only tunes the block size (tests use tiny blocks to cross block
    boundaries on every edit).
    """

    __slots__ = (
        "_block_chars",
        "_block_starts",
        "_blocks",
        "_char_prefix",
        "_joined",
        "_line_prefix",
        "language_id",
        "uri",
        "version",
    )
    _blocks: list[str]
    #: Where each line of a block starts in it.
    _block_starts: list[array[int]]
    #: Characters and lines before each block (and in all of them, last).
    _char_prefix: list[int]
    _line_prefix: list[int]
    #: The whole text, once joined after the last edit.
    _joined: str | None

    def __init__(
        self,
        uri: str,
        text: str,
        version: int | None = None,
        language_id: str | None = None,
        *,
        block_chars: int = BLOCK_CHARS,
    ) -> None:
        self.uri = uri
        self.version = version
        self.language_id = language_id
        self._block_chars = max(2, block_chars)
        self.text = text  # sets the blocks, their line starts and prefixes

    def __repr__(self) -> str:
        return f"Document(uri={self.uri!r}, version={self.version!r}, lines={self.line_count})"

    @property
    def text(self) -> str:
        """The whole text: joined when first asked for after an edit, then kept until the
        next edit (requests that read the whole text come in bursts between keystrokes)."""
        if self._joined is None:
            self._joined = self._blocks[0] if len(self._blocks) == 1 else "".join(self._blocks)
        return self._joined

    @text.setter
    def text(self, text: str) -> None:
        self._blocks, self._block_starts = _blocks_of(text, last=True, size=self._block_chars)
        self._joined = None
        self._reindex()

    def _reindex(self) -> None:
        self._char_prefix = list(accumulate(map(len, self._blocks), initial=0))
        self._line_prefix = list(accumulate(map(len, self._block_starts), initial=0))

    @property
    def line_count(self) -> int:
        return self._line_prefix[-1]

    def _line(self, number: int) -> tuple[int, int, int]:
        """(block, start, content end) of an existing line; offsets within the block."""
        block = bisect_right(self._line_prefix, number) - 1
        starts = self._block_starts[block]
        text = self._blocks[block]
        k = number - self._line_prefix[block]
        start = starts[k]
        end = starts[k + 1] if k + 1 < len(starts) else len(text)
        if end > start and text[end - 1] == "\n":
            end -= 1
        if end > start and text[end - 1] == "\r":
            end -= 1
        return block, start, end

    def line(self, number: int) -> str:
        """The text of line ``number`` without its line break ("" past the end)."""
        if not 0 <= number < self.line_count:
            return ""
        block, start, end = self._line(number)
        return self._blocks[block][start:end]

    def offset_at(self, position: Position, encoding: Encoding) -> int:
        """The code-point offset in ``text`` of a client position (clamped)."""
        if position.line < 0:
            return 0
        if position.line >= self.line_count:
            return self._char_prefix[-1]
        block, start, end = self._line(position.line)
        line = self._blocks[block][start:end]
        return (
            self._char_prefix[block] + start + index_from_units(line, position.character, encoding)
        )

    def position_at(self, offset: int, encoding: Encoding) -> Position:
        """The client position of a code-point offset in ``text`` (clamped)."""
        offset = max(0, min(offset, self._char_prefix[-1]))
        block = bisect_right(self._char_prefix, offset, hi=len(self._blocks)) - 1
        local = offset - self._char_prefix[block]
        k = bisect_right(self._block_starts[block], local) - 1
        number = self._line_prefix[block] + k
        _, start, end = self._line(number)
        column = min(local - start, end - start)
        return Position(number, units_length(self._blocks[block][start : start + column], encoding))

    def contains(self, position: Position) -> bool:
        """Whether ``position`` names an existing line (characters are clamped anyway)."""
        return 0 <= position.line < self.line_count and position.character >= 0

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
            return
        a = self.offset_at(start, encoding)
        b = self.offset_at(end, encoding)
        self._replace(min(a, b), max(a, b), text)

    def _replace(self, a: int, b: int, text: str) -> None:
        """``text[a:b] = text``, re-splitting only the blocks around the edit.

        A block boundary stays exact while the characters on both sides of it are not
        edited. The edited blocks end with their own last character, which the edit never
        reaches (an offset at a block's end is the next block's start), so only their
        start can change neighbours: when the block before ends with a lone ``\\r``, it is
        re-split too, as a ``\\n`` arriving after it makes one line break of the two.
        """
        blocks = self._blocks
        count = len(blocks)
        first = bisect_right(self._char_prefix, a, hi=count) - 1
        last = bisect_right(self._char_prefix, b, hi=count) - 1
        if first > 0 and blocks[first - 1].endswith("\r"):
            first -= 1
        base = self._char_prefix[first]
        region = "".join(blocks[first : last + 1])
        region = region[: a - base] + text + region[b - base :]
        if len(region) < self._block_chars // 2:
            # A small block takes in a neighbour, so blocks never dwindle to a line each.
            if last + 1 < count:
                last += 1
                region += blocks[last]
            elif first > 0:
                first -= 1
                region = blocks[first] + region
        new_blocks, new_starts = _blocks_of(region, last=last == count - 1, size=self._block_chars)
        blocks[first : last + 1] = new_blocks
        self._block_starts[first : last + 1] = new_starts
        self._joined = None
        self._reindex()

    def text_before(self, position: Position, encoding: Encoding) -> tuple[str, int]:
        """The cursor line's text before ``position`` and the offset where that line starts."""
        if not 0 <= position.line < self.line_count:
            # No such line: nothing before the cursor, which is clamped like offset_at's
            # (which reads no encoding for a line outside the document).
            return "", self.offset_at(position, encoding)  # pragma: no mutate
        block, start, end = self._line(position.line)
        line = self._blocks[block][start:end]
        column = index_from_units(line, position.character, encoding)
        return line[:column], self._char_prefix[block] + start
