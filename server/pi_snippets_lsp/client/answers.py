"""The server's answers as the package's own values.

``SnippetsClient`` asks in LSP terms and hands back what the in-process API returns: a
completion list becomes ``Suggestions`` (the inverse of ``translate.completion_list``),
``snippets/list`` a ``SnippetsListing``, ``snippets/didLoad`` a ``LoadNotice``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError

from pi_snippets_lsp.client.errors import SnippetsClientError
from pi_snippets_lsp.core.completion import Suggestion, Suggestions
from pi_snippets_lsp.core.documents import Document, Position
from pi_snippets_lsp.core.grammar import find_token
from pi_snippets_lsp.wire.messages import DID_LOAD, LoadNotice, SnippetsListing

JSON = Any

#: The client declares no position encoding, so LSP positions are in UTF-16 units.
ENCODING: Final = "utf-16"


def parse_listing(method: str, result: JSON) -> SnippetsListing:
    try:
        return SnippetsListing.model_validate(result)
    except ValidationError as exc:
        raise SnippetsClientError(f"{method}: unexpected result {result!r}") from exc


def parse_notice(params: JSON) -> LoadNotice:
    try:
        return LoadNotice.model_validate(params)
    except ValidationError as exc:
        raise SnippetsClientError(f"{DID_LOAD}: unexpected params {params!r}") from exc


def parse_suggestions(result: JSON, document: Document, cursor: int) -> Suggestions:
    """An LSP completion answer as ``Suggestions``: the inverse of the server's items.

    The replaced range is the items' edit range; an empty list (a token that matches
    nothing) has none, so the token is found by the same grammar rule the server uses.
    """
    if isinstance(result, list):
        raw_items, incomplete = result, False
    else:
        raw_items, incomplete = result.get("items") or [], bool(result.get("isIncomplete"))
    items = tuple(_suggestion(item) for item in raw_items)
    if raw_items:
        edit = raw_items[0]["textEdit"]
        edit_range = edit.get("range") or edit["insert"]
        start = document.offset_at(_position(edit_range["start"]), ENCODING)
        end = document.offset_at(_position(edit_range["end"]), ENCODING)
    else:
        token = find_token(document.text[:cursor])
        start, end = (token.start, cursor) if token is not None else (cursor, cursor)
    return Suggestions(
        items=items,
        is_incomplete=incomplete,
        replace_start=start,
        replace_end=end,
        query=document.text[start + 1 : end],
    )


def _suggestion(item: Mapping[str, JSON]) -> Suggestion:
    documentation = item.get("documentation")
    if isinstance(documentation, dict):
        documentation = documentation.get("value")
    data = item.get("data")
    details = item.get("labelDetails") or {}
    return Suggestion(
        name=str(item["label"]).removeprefix("%"),
        value=str(documentation or ""),
        source=str(data.get("source", "")) if isinstance(data, dict) else "",
        rank=int(item.get("sortText") or 0),
        preview=str(details.get("description", "")),
        insert_text=str(item["textEdit"]["newText"]),
    )


def _position(data: Mapping[str, JSON]) -> Position:
    return Position(int(data["line"]), int(data["character"]))
