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
import re
from typing import Final

from pi_snippets_lsp.core.documents import Encoding, index_from_units

_CODEC: Final = {"utf-8": "utf-8", "utf-16": "utf-16-le"}
_UNIT_BYTES: Final = {"utf-8": 1, "utf-16": 2}
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def units_of(text: str, encoding: Encoding) -> int:
    """The length of ``text`` in code units of ``encoding``."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    return len(text.encode(_CODEC[encoding], "surrogatepass")) // _UNIT_BYTES[encoding]


def index_at(line: str, units: int, encoding: Encoding) -> int:
    """The code-point index in ``line`` at ``units`` code units, clamped to the line; a
    position inside a character rounds down to its start."""
    units = max(units, 0)
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))
    if _SURROGATE.search(line):
        return index_from_units(line, units, encoding)
    data = line.encode(_CODEC[encoding], "surrogatepass")
    decoder = codecs.getincrementaldecoder(_CODEC[encoding])("surrogatepass")
    return len(decoder.decode(data[: units * _UNIT_BYTES[encoding]], final=False))
