"""Text edits in code points: what every feature that changes a text returns.

An edit replaces ``text[start:end]`` with ``new_text``; offsets are code points of the
original text, so edits of one change never see each other's effect. The server turns
them into LSP ``TextEdit`` values with the document's position codec (``translate.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``start``..``end`` (code points of the original text) with ``new_text``."""

    start: int
    end: int
    new_text: str


def apply_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (in any order), as a client would."""
    result = text
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        result = result[: edit.start] + edit.new_text + result[edit.end :]
    return result
