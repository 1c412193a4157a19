"""The completion model: what the popup lists for the text before the cursor.

Rules: docs/grammar.md ("The completion token", "Ranking"); docs/lsp.md, "Completion". Plain data
only; the server turns it into LSP items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NamedTuple

from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.grammar import TRIGGER, find_token
from pi_snippets_lsp.core.snippet import Snippet, normalize_newlines, preview

MAX_ITEMS: Final = 20


def insert_text(snippet: Snippet, expand_on_completion: bool) -> str:
    """What accepting ``snippet`` puts into the editor: its marker, or its text."""
    if expand_on_completion:
        return normalize_newlines(snippet.value)
    return TRIGGER + snippet.name


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One popup entry: a snippet, where Pi ranks it, and what accepting it inserts.

    The same value serves the server (which turns it into an LSP ``CompletionItem``), the
    in-process API and the out-of-process client, so all three describe an entry alike.
    """

    name: str
    #: The whole snippet text, shown literally as the item's documentation.
    value: str
    #: The settings file (or client layer) that defined the snippet.
    source: str
    #: Pi's order: 0 is listed first.
    rank: int
    #: The one-line preview (see ``preview``).
    preview: str
    #: What accepting inserts: ``%name``, or with ``expandOnCompletion`` the text.
    insert_text: str

    @property
    def label(self) -> str:
        """``%name``: the label and the filter text of the item."""
        return TRIGGER + self.name

    @property
    def sort_text(self) -> str:
        """The LSP ``sortText`` (``sort_text``)."""
        return sort_text(self.rank)

    @property
    def accept_summary(self) -> str:
        """What accepting does, in a few words (the LSP ``detail``).

        The row already shows the preview and the documentation the whole text, so this
        says only what lands in the prompt: the marker, or the text and how many lines it
        has (``Inserts %review``, ``Inserts the text (3 lines)``). Lines are counted the
        LSP way; ``insert_text`` has only ``\n`` line breaks.
        """
        if self.insert_text == self.label:
            return f"Inserts {self.label}"
        lines = self.insert_text.count("\n") + 1
        return f"Inserts the text ({lines} line{'' if lines == 1 else 's'})"


def suggestion(snippet: Snippet, rank: int, expand_on_completion: bool) -> Suggestion:
    """``snippet`` as the popup's entry at ``rank``: the one place an entry is worked out
    from a snippet. ``suggest`` lists these for the API; the server encodes each one's
    fields (``translate.completion_list``) and the client parses them back
    (``client.answers``), so every caller describes an entry alike."""
    return Suggestion(
        name=snippet.name,
        value=snippet.value,
        source=snippet.source,
        rank=rank,
        preview=preview(snippet.value),
        insert_text=insert_text(snippet, expand_on_completion),
    )


def sort_text(rank: int) -> str:
    """The LSP ``sortText`` of the item at ``rank``: the rank zero-padded, so clients that
    sort by it keep Pi's order."""
    return f"{rank:04d}"


@dataclass(frozen=True, slots=True)
class Suggestions:
    """The popup for the snippet token that ends the text before the cursor.

    Accepting an item replaces ``text_before_cursor[replace_start:replace_end]`` (from the
    ``%`` to the cursor, code-point indices; text after the cursor stays) with its
    ``insert_text``. ``is_incomplete``: more names matched than the ``MAX_ITEMS`` listed.
    No ``items`` means a snippet token that matches nothing: show nothing, and let no
    other source fill in.
    """

    items: tuple[Suggestion, ...]
    is_incomplete: bool
    replace_start: int
    replace_end: int
    #: What follows the ``%`` (possibly empty).
    query: str


class Popup(NamedTuple):
    """What the popup lists for the snippet token that ends the text before the cursor,
    as the configured snippets themselves: the step before ``Suggestions``.

    The server keeps each snippet's encoded item from keystroke to keystroke, so it makes
    a ``Suggestion`` only for a snippet new to the popup, not twenty per keystroke;
    ``suggest`` makes them all for the in-process API. The fields mean what
    ``Suggestions``' do.
    """

    #: Best first, at most ``MAX_ITEMS``.
    snippets: list[Snippet]
    is_incomplete: bool
    replace_start: int
    replace_end: int
    query: str
    #: Whether accepting inserts the text (``insert_text``).
    expand_on_completion: bool


def popup(text_before_cursor: str, config: Config) -> Popup | None:
    """What ``textDocument/completion`` lists for the text before the cursor.

    None while no usable snippet is configured (the static provider's ``null``: Pi
    registers no completion provider then, so nothing of ours may show) or when the
    cursor is not in a snippet token (other completion sources answer); an empty,
    complete list when it is one but nothing matches (nothing falls through). Only the
    last line of ``text_before_cursor`` matters: a token never spans lines.
    """
    if not config.snippets:
        return None
    token = find_token(text_before_cursor)
    if token is None:
        return None
    ranked = config.name_index.rank(token.query, MAX_ITEMS)
    return Popup(
        snippets=list(map(config.snippets.__getitem__, ranked.indices)),
        is_incomplete=ranked.truncated,
        replace_start=token.start,
        replace_end=len(text_before_cursor),
        query=token.query,
        expand_on_completion=config.expand_on_completion,
    )


def suggest(text_before_cursor: str, config: Config) -> Suggestions | None:
    """``popup``'s list as ``Suggestions``: each snippet with its rank, preview and what
    accepting it inserts."""
    listed = popup(text_before_cursor, config)
    if listed is None:
        return None
    expand_on_completion = listed.expand_on_completion
    items = tuple(
        suggestion(snippet, rank, expand_on_completion)
        for rank, snippet in enumerate(listed.snippets)
    )
    return Suggestions(
        items=items,
        is_incomplete=listed.is_incomplete,
        replace_start=listed.replace_start,
        replace_end=listed.replace_end,
        query=listed.query,
    )
