"""Where a snippet is defined: the span of its key in a settings file's text.

docs/lsp.md, "Go to definition". The key is looked up the way ``JSON.parse`` resolves it,
so with a duplicated key the span is that of the last occurrence: the one whose value
counts. The span covers the key token as written, quotes and escapes included.
"""

from __future__ import annotations

from pi_snippets_lsp.core.config import SETTINGS_KEY
from pi_snippets_lsp.settings.jsontree import JsonParseError, parse


def snippet_key_span(text: str, name: str) -> tuple[int, int] | None:
    """(start, end) code points of ``name``'s key under ``piSimpleSnippets.snippets`` in
    the settings ``text``; None when the text does not define it (or does not parse)."""
    try:
        root = parse(text)
    except JsonParseError:
        return None
    table = root.find((SETTINGS_KEY, "snippets"))
    member = table.member(name) if table is not None else None
    if member is None:
        return None
    return member.key_start, member.key_end
