"""``textDocument/codeAction`` and the ``pi-snippets.expandDocument`` command: "Expand
snippet markers" and "Save selection as snippet" in a prompt, quick fixes in a settings
file (docs/lsp.md, "Code actions").
"""

from __future__ import annotations

from typing import Any, Final

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from pi_snippets_lsp.core.code_actions import (
    EXPAND_COMMAND,
    EXPAND_KIND,
    QUICKFIX_KIND,
    SAVE_KIND,
    Action,
    expansion_edits,
    kind_wanted,
    prompt_actions,
)
from pi_snippets_lsp.core.documents import Document
from pi_snippets_lsp.lsp import translate
from pi_snippets_lsp.lsp.handlers import typo_hints
from pi_snippets_lsp.lsp.handlers.common import apply_edit, offsets, params_of
from pi_snippets_lsp.lsp.offload import off_loop
from pi_snippets_lsp.lsp.server import SnippetsServer
from pi_snippets_lsp.settings.diagnostics import settings_diagnostics
from pi_snippets_lsp.wire.messages import ExpandDocumentParams

ACTION_KINDS: Final = [QUICKFIX_KIND, SAVE_KIND, EXPAND_KIND]


def register(server: SnippetsServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=ACTION_KINDS)
    )
    async def code_action(
        ls: SnippetsServer, params: types.CodeActionParams
    ) -> list[types.CodeAction | types.Command] | None:
        uri = params.text_document.uri
        config = await ls.session.loaded_config_for(uri)
        document = ls.documents.get(uri)
        if document is None:
            return None
        if uri in ls.settings_documents:
            return quick_fixes(ls, document, params.context) or None
        start, end = offsets(ls, document, params.range)
        features = ls.session.features
        only, can_save = params.context.only, features.apply_edit
        text = document.text
        actions = await off_loop(
            ls, len(text), prompt_actions, text, config.values, start, end,
            only=only, uri=uri, can_save=can_save,
        )  # fmt: skip
        results = [translate.code_action(a, document, features) for a in actions]
        fixes = await typo_hints.quick_fixes(ls, document, config, params.context.diagnostics, only)
        return [*fixes, *(r for r in results if r is not None)] or None

    @server.command(EXPAND_COMMAND)
    async def expand_document(ls: SnippetsServer, *args: Any) -> dict[str, Any]:
        return await _expand_document(ls, args)


async def _expand_document(ls: SnippetsServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Expand the markers of a document (or of a range of it) through the client."""
    request = params_of(ExpandDocumentParams, args[0] if args else None, EXPAND_COMMAND)
    config = await ls.session.loaded_config_for(request.uri)
    document = ls.documents.get(request.uri)
    if document is None:
        raise JsonRpcInvalidParams(f"{EXPAND_COMMAND}: {request.uri} is not open")
    start, end = 0, len(document.text)
    if request.range is not None:
        start, end = offsets(ls, document, request.range)
    edits = expansion_edits(document.text, config.values, start, end)
    if not edits:
        return {"applied": False, "changed": 0}
    lsp_edits = translate.text_edits(document, edits, ls.encoding)
    edit = translate.workspace_edit(document.uri, document.version, lsp_edits, ls.session.features)
    applied = await apply_edit(ls, edit, "Expand snippet markers")
    return {"applied": applied, "changed": len(edits) if applied else 0}


def quick_fixes(
    ls: SnippetsServer, document: Document, context: types.CodeActionContext
) -> list[types.CodeAction | types.Command]:
    """The fixes of the request's diagnostics, recomputed from the current text: a
    diagnostic of the request is ours when its range and message are those of one."""
    if not kind_wanted(QUICKFIX_KIND, context.only):
        return []
    fixes: list[types.CodeAction | types.Command] = []
    for found in settings_diagnostics(document.text):
        if found.fix is None:
            continue
        ours = translate.diagnostic(document, found, ls.encoding)
        asked = context.diagnostics
        if not any(d.range == ours.range and d.message == ours.message for d in asked):
            continue
        action = Action(found.fix.title, QUICKFIX_KIND, found.fix.edits)
        fix = translate.code_action(action, document, ls.session.features, [ours])
        if fix is not None:
            fixes.append(fix)
    return fixes
