"""The completion model: what the popup lists for the text before the cursor.

Contract: behavior-contract.md, "Autocomplete"; lsp-design.md, "Completion". Plain data
only; the server turns it into LSP items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from .config import Config, Snippet
from .grammar import JS_WHITESPACE, TRIGGER, Token, find_token
from .ranking import fuzzy_filter

MAX_ITEMS: Final = 20
PREVIEW_LIMIT: Final = 80
ELLIPSIS: Final = "…"

_WHITESPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")
_LINE_BREAKS = re.compile(r"\r\n?")


def preview(value: str) -> str:
    """One line for the popup: whitespace runs collapsed, trimmed, at most 80 characters.

    Pi measures the limit in UTF-16 code units (JavaScript ``length``) but cuts whole
    code points, so an emoji-heavy value is cut exactly where Pi cuts it.
    """
    collapsed = _WHITESPACE_RUN.sub(" ", value).strip(" ")
    if _utf16_length(collapsed) <= PREVIEW_LIMIT:
        return collapsed
    return collapsed[: PREVIEW_LIMIT - 1] + ELLIPSIS


def _utf16_length(text: str) -> int:
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def normalize_newlines(value: str) -> str:
    """CRLF and a lone CR become LF, as they do for text typed or pasted into Pi."""
    return _LINE_BREAKS.sub("\n", value)


def insert_text(snippet: Snippet, expand_on_completion: bool) -> str:
    """What accepting ``snippet`` puts into the editor: its marker, or its text."""
    if expand_on_completion:
        return normalize_newlines(snippet.value)
    return TRIGGER + snippet.name


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One popup entry, in Pi's order (``rank`` 0 is first)."""

    snippet: Snippet
    rank: int
    label: str
    preview: str
    insert_text: str

    @property
    def sort_text(self) -> str:
        """The LSP ``sortText``: the zero-padded rank, so clients keep Pi's order."""
        return f"{self.rank:04d}"


@dataclass(frozen=True, slots=True)
class Suggestions:
    """The popup for one token. ``incomplete`` means more matched than were listed."""

    token: Token
    items: tuple[Suggestion, ...]
    incomplete: bool


def suggest(text_before_cursor: str, config: Config) -> Suggestions | None:
    """The suggestions for the token ending ``text_before_cursor``.

    None when the cursor is not in a snippet token (other completion sources answer);
    an empty, complete list when it is one but nothing matches (nothing falls through).
    """
    token = find_token(text_before_cursor)
    if token is None:
        return None
    matched = fuzzy_filter(config.snippets, token.query, lambda s: s.name)
    items = tuple(
        Suggestion(
            snippet=snippet,
            rank=rank,
            label=TRIGGER + snippet.name,
            preview=preview(snippet.value),
            insert_text=insert_text(snippet, config.expand_on_completion),
        )
        for rank, snippet in enumerate(matched[:MAX_ITEMS])
    )
    return Suggestions(token=token, items=items, incomplete=len(matched) > MAX_ITEMS)


def suggest_completion(text_before_cursor: str, config: Config) -> Suggestions | None:
    """What ``textDocument/completion`` answers for the text before the cursor.

    None while no usable snippet is configured (the static provider's ``null``, the
    analogue of "registers no completion provider") or when the cursor is not in a
    snippet token; otherwise ``suggest``. The server and the in-process API both call
    this, so their items cannot drift apart.
    """
    if not config.snippets:
        return None
    return suggest(text_before_cursor, config)
