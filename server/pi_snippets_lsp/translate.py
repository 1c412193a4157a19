"""Plain results of the core, as lsprotocol values.

docs/lsp.md. The core modules answer in plain data and code-point offsets; this module
is the one place that turns them into LSP shapes with positions in the negotiated
encoding, so the handlers in ``server.py`` stay a few lines each.
"""

from __future__ import annotations

import re
from typing import Final

from lsprotocol import types

from .completion import Suggestion, Suggestions
from .documents import Encoding, units_length
from .options import ClientFeatures

TRIGGER_CHARACTERS: Final = ["%"]
#: The completion list default the server can send, when the client takes it.
INSERT_TEXT_MODE_DEFAULT: Final = "insertTextMode"

_BACKTICK_RUN: Final = re.compile("`+")


def literal_markdown(text: str) -> str:
    """``text`` as a fenced Markdown code block, so it shows exactly as written.

    A Markdown paragraph would join lines and turn ``*``, ``#`` or backticks into
    formatting. The fence is one backtick longer than the longest backtick run in the
    text (at least three), so no line of the text can close it (CommonMark: a closing
    fence is at least as long as the opening one). The info string ``text`` keeps
    renderers from highlighting it as code.
    """
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def documentation(value: str, markdown: bool) -> str | types.MarkupContent:
    """The whole snippet text, shown literally: fenced Markdown, or plain text."""
    if markdown:
        return types.MarkupContent(kind=types.MarkupKind.Markdown, value=literal_markdown(value))
    return value


def completion_item(
    item: Suggestion, token_range: types.Range, markdown: bool
) -> types.CompletionItem:
    """One LSP item (docs/lsp.md, "Completion").

    The insert is plain text with ``insertTextMode: asIs`` for every client, so the text
    arrives exactly as configured: snippet format would send it through snippet engines
    that re-indent later lines and turn tabs into spaces (``vim.snippet.expand``, which
    nvim-cmp and blink.cmp call whatever ``insertTextMode`` says), and a value has no
    tabstops for that format to serve. ``asIs`` stops clients that honor it (VS Code,
    lsp-mode) from adjusting indentation.
    """
    return types.CompletionItem(
        label=item.label,
        label_details=types.CompletionItemLabelDetails(description=item.preview),
        kind=types.CompletionItemKind.Snippet,
        detail=item.accept_summary,
        documentation=documentation(item.value, markdown),
        sort_text=item.sort_text,
        filter_text=item.label,
        insert_text_format=types.InsertTextFormat.PlainText,
        insert_text_mode=types.InsertTextMode.AsIs,
        text_edit=types.TextEdit(range=token_range, new_text=item.insert_text),
        data={"source": item.source},
    )


def completion_list(
    suggestions: Suggestions,
    line: int,
    before: str,
    encoding: Encoding,
    features: ClientFeatures,
) -> types.CompletionList:
    """LSP items: each edit replaces only the token, from its ``%`` to the cursor.

    ``before`` is the cursor line's text before the cursor; ``suggestions`` was computed
    on it, so its replace range indexes it. ``insertTextMode: asIs`` is also the list's
    default for clients that take ``itemDefaults.insertTextMode``.
    """
    token_range = types.Range(
        start=types.Position(line, units_length(before[: suggestions.replace_start], encoding)),
        end=types.Position(line, units_length(before[: suggestions.replace_end], encoding)),
    )
    defaults = (
        types.CompletionItemDefaults(insert_text_mode=types.InsertTextMode.AsIs)
        if INSERT_TEXT_MODE_DEFAULT in features.item_defaults
        else None
    )
    return types.CompletionList(
        is_incomplete=suggestions.is_incomplete,
        item_defaults=defaults,
        items=[
            completion_item(item, token_range, features.completion_markdown)
            for item in suggestions.items
        ],
    )
