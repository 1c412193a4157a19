"""Client positions on one line, at C speed: code units <-> code points.

docs/lsp.md, "Positions". ``documents.py`` converts one character at a time in Python,
which is right and fast for the lines people write, but a 50 MB line of CJK text (or of
emoji) took seconds per request. Here the same conversions go through Python's codecs,
which run in C: the UTF-16 length of a text is half the length of its ``utf-16-le``
bytes, and the code point at a unit offset is found by decoding that many units with an
incremental decoder, which keeps a character cut in half (half a surrogate pair, part of
a UTF-8 sequence) back: the position rounds down to that character's start, as
``documents.index_from_units`` does. A lone surrogate (JSON allows one) counts as one
UTF-16 unit and three UTF-8 bytes, as there (``surrogatepass``); a line holding one is
converted the slow way, as two lone surrogates side by side would decode as one pair.

Standard library only (and ``documents``); the results equal ``documents.units_length`` and
``documents.index_from_units`` (``tests/unit/test_line_codec.py`` checks them against
each other).
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from itertools import repeat
from operator import floordiv
from typing import Final

from pi_snippets_lsp.core.documents import Encoding, index_from_units

_CODEC: Final = {"utf-8": "utf-8", "utf-16": "utf-16-le"}
_UNIT_BYTES: Final = {"utf-8": 1, "utf-16": 2}


def units_of(text: str, encoding: Encoding) -> int:
    """The length of ``text`` in code units of ``encoding``."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    return len(text.encode(_CODEC[encoding], "surrogatepass")) // _UNIT_BYTES[encoding]


def units_of_each(texts: Sequence[str], encoding: Encoding) -> list[int]:
    """``units_of`` of each text, in one pass of C calls (no Python step per text): the
    pieces between the markers of a large prompt are many and short."""
    if encoding == "utf-32":
        return list(map(len, texts))
    codec = repeat(_CODEC[encoding])
    lengths = map(len, map(str.encode, texts, codec, repeat("surrogatepass")))
    return list(map(floordiv, lengths, repeat(_UNIT_BYTES[encoding])))


def index_at(line: str, units: int, encoding: Encoding) -> int:
    """The code-point index in ``line`` at ``units`` code units, clamped to the line; a
    position inside a character rounds down to its start."""
    return index_and_units(line, units, encoding)[0]


def index_and_units(line: str, units: int, encoding: Encoding) -> tuple[int, int]:
    """``index_at``, and the code units before that index (``units`` itself, unless the
    position was clamped or rounded down): a caller needs no second pass over the line
    to know the column of what it finds there."""
    units = max(units, 0)
    if encoding == "utf-32" or line.isascii():
        index = min(units, len(line))
        return index, index
    try:
        data = line.encode(_CODEC[encoding])  # strict: a lone surrogate raises
    except UnicodeEncodeError:
        index = index_from_units(line, units, encoding)
        return index, units_of(line[:index], encoding)
    width = _UNIT_BYTES[encoding]
    taken = data[: units * width]
    decoder = codecs.getincrementaldecoder(_CODEC[encoding])()
    index = len(decoder.decode(taken, final=False))
    held = len(decoder.getstate()[0])  # the bytes of a character cut in two
    return index, (len(taken) - held) // width
