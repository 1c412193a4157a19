"""Plain results of the core, as lsprotocol values.

docs/lsp.md. The core modules answer in plain data and code-point offsets; this module
is the one place that turns them into LSP shapes with positions in the negotiated
encoding, so the handlers in ``server.py`` stay a few lines each.
"""

from __future__ import annotations

from typing import Final

from lsprotocol import types

from .completion import Suggestions
from .documents import Encoding, units_length
from .options import ClientFeatures

TRIGGER_CHARACTERS: Final = ["%"]


def escape_snippet(text: str) -> str:
    """Escape ``\\``, ``$`` and ``}`` so a snippet-format insert arrives literally."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def completion_list(
    suggestions: Suggestions,
    line: int,
    before: str,
    encoding: Encoding,
    features: ClientFeatures,
) -> types.CompletionList:
    """LSP items: each edit replaces only the token, from its ``%`` to the cursor.

    ``before`` is the cursor line's text before the cursor; ``suggestions`` was computed
    on it, so its replace range indexes it.
    """
    token_range = types.Range(
        start=types.Position(line, units_length(before[: suggestions.replace_start], encoding)),
        end=types.Position(line, units_length(before[: suggestions.replace_end], encoding)),
    )
    text_format = (
        types.InsertTextFormat.Snippet
        if features.snippet_support
        else types.InsertTextFormat.PlainText
    )
    items = []
    for item in suggestions.items:
        new_text = (
            escape_snippet(item.insert_text) if features.snippet_support else item.insert_text
        )
        items.append(
            types.CompletionItem(
                label=item.label,
                label_details=types.CompletionItemLabelDetails(description=item.preview),
                kind=types.CompletionItemKind.Snippet,
                detail=item.preview,
                documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=item.value)
                if features.completion_markdown
                else item.value,
                sort_text=item.sort_text,
                filter_text=item.label,
                insert_text_format=text_format,
                text_edit=types.TextEdit(range=token_range, new_text=new_text),
                data={"source": item.source},
            )
        )
    return types.CompletionList(is_incomplete=suggestions.is_incomplete, items=items)
