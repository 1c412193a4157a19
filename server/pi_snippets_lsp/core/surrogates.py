"""Lone surrogates: the one text rule for a character JSON can carry and UTF-8 cannot.

A JSON string may hold a lone UTF-16 surrogate (``"\\ud800"``): Pi's settings loader
takes one, so a snippet's name or value, a warning quoting it, or a file path decoded
with ``surrogateescape`` can hold one. UTF-8 has no encoding for it: a writer either
fails (the SDK's JSON writer, ``str.encode``) or must replace it. Every front end that
writes a text out replaces each lone surrogate by U+FFFD, as Node writes one as UTF-8,
and a save that would store one refuses it; both find them by this one pattern.
"""

from __future__ import annotations

import re
from typing import Final

#: One lone surrogate (a pair of them in a Python ``str`` is two lone ones: a valid
#: pair is one code point above U+FFFF, never two surrogates).
LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: What a lone surrogate becomes in a text written out.
REPLACEMENT: Final = "\ufffd"


def first_lone_surrogate(text: str) -> re.Match[str] | None:
    """The first lone surrogate of ``text`` (where it is, and which), or None."""
    return LONE_SURROGATE.search(text)


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD, every other character as it is.

    The common text (ASCII, or any that encodes) is told at C speed and returned as it
    is, so a large text is not scanned by the pattern on every answer.
    """
    if text.isascii():
        return text
    try:
        text.encode()  # UTF-8
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub(REPLACEMENT, text)
    return text
