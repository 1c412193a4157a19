"""What the client tells us at ``initialize``: its options and its capabilities.

docs/lsp.md, "Initialization options" and "Client capabilities". Both are parsed once,
at ``initialize``, into frozen values; nothing re-reads the raw JSON afterwards.

- ``InitializationOptions``: one typed model. A value of the wrong type is not silently
  dropped: ``parse_initialization_options`` names it in a problem (shown in the
  generation's warning) and uses that option's default, so one typo never disables the
  other options.
- ``ClientFeatures``: the few client capabilities the server acts on, read from the
  capabilities' JSON by pure functions, so every rule is a table test.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from pi_snippets_lsp.core.config import plain_json
from pi_snippets_lsp.core.documents import ENCODINGS, Encoding
from pi_snippets_lsp.core.serving import DEFAULT_POLL_INTERVAL

#: Seconds between looks at the settings files when nothing else watches them.
#: Server notifications a client may opt in to with ``notifications``.
OPT_IN_NOTIFICATIONS: Final = frozenset({"snippets/didLoad"})


class InitializationOptions(BaseModel):
    """``initializationOptions``, typed. Unknown keys are ignored (other tools may
    share the object)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    #: A value of the ``piSimpleSnippets`` namespace: the client layer, over the files.
    #: Validated with the rest of the configuration, so any JSON is accepted here.
    pi_simple_snippets: Any = Field(default=None, alias="piSimpleSnippets")
    #: Read the workspace folders' ``.pi/settings.json`` (Pi reads them only for
    #: trusted projects).
    trust_project_settings: StrictBool = Field(default=False, alias="trustProjectSettings")
    #: Seconds between looks at settings files the client does not watch; 0: never.
    poll_interval: float = Field(default=DEFAULT_POLL_INTERVAL, alias="pollInterval", ge=0)
    #: Server notifications the client wants (``snippets/didLoad``).
    notifications: frozenset[str] = frozenset()
    #: A Hint on an unknown marker that is a typo of a snippet's name (docs/lsp.md,
    #: "Unknown markers: did you mean").
    unknown_marker_hints: StrictBool = Field(default=True, alias="unknownMarkerHints")

    @field_validator("poll_interval", mode="before")
    @classmethod
    def _number(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("must be a number of seconds")
        if not math.isfinite(value):
            raise ValueError("must be a finite number of seconds")
        return value

    @field_validator("notifications", mode="before")
    @classmethod
    def _method_names(cls, value: object) -> object:
        if not isinstance(value, list | tuple | frozenset) or not all(
            isinstance(v, str) for v in value
        ):
            raise ValueError("must be a list of method names")
        return frozenset(value)


def parse_initialization_options(raw: object) -> tuple[InitializationOptions, tuple[str, ...]]:
    """The options, and one problem per value that could not be used.

    Each bad value is reported (``initializationOptions.pollInterval must be a number
    of seconds, not "fast"; using 1.0``) and replaced by its default; the good ones
    are kept.
    """
    data = plain_json(raw)
    if data is None:
        return InitializationOptions(), ()
    if not isinstance(data, dict):
        return InitializationOptions(), (
            f"initializationOptions must be an object, not {_show(data)}; ignoring it",
        )
    good: dict[str, object] = {}
    problems: list[str] = []
    for name, field in InitializationOptions.model_fields.items():
        key = field.alias or name
        if key not in data:
            continue
        try:
            InitializationOptions.model_validate({key: data[key]})
        except ValidationError as exc:
            reason = _reason(exc.errors()[0]["msg"])
            default = json.dumps(
                sorted(field.default) if isinstance(field.default, frozenset) else field.default
            )
            problems.append(
                f"initializationOptions.{key} {reason}, not {_show(data[key])}; using {default}"
            )
        else:
            good[key] = data[key]
    options = InitializationOptions.model_validate(good)
    unknown = options.notifications - OPT_IN_NOTIFICATIONS
    if unknown:
        problems.append(
            f"initializationOptions.notifications: ignoring unknown {', '.join(sorted(unknown))}"
            f" (known: {', '.join(sorted(OPT_IN_NOTIFICATIONS))})"
        )
        options = options.model_copy(update={"notifications": options.notifications - unknown})
    return options, tuple(problems)


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _reason(message: str) -> str:
    """pydantic's wording, as the end of "initializationOptions.x ..."."""
    message = message.removeprefix("Value error, ")
    if message == "Input should be a valid boolean":
        return "must be true or false"
    if message.startswith("Input should be"):
        return "must be" + message.removeprefix("Input should be")
    return message


# --------------------------------------------------------------------------- capabilities


@dataclass(frozen=True, slots=True)
class ClientFeatures:
    """The client capabilities the server acts on, read once at ``initialize``."""

    #: ``textDocument.completion.dynamicRegistration``: completion is registered only
    #: while snippets exist (docs/lsp.md, "Completion").
    completion_dynamic: bool = False
    #: The item documentation may be Markdown.
    completion_markdown: bool = False
    #: ``completionList.itemDefaults`` the client understands (the server uses
    #: ``insertTextMode``).
    item_defaults: frozenset[str] = frozenset()
    #: ``workspace.didChangeWatchedFiles.dynamicRegistration``.
    watchers_dynamic: bool = False
    #: ``workspace.configuration``: the server may pull ``piSimpleSnippets``.
    configuration: bool = False
    #: Hover contents may be Markdown.
    hover_markdown: bool = False
    #: ``workspace.applyEdit``: the server may ask the client to edit files.
    apply_edit: bool = False
    #: ``workspace.workspaceEdit.documentChanges`` (versioned edits, file creation).
    document_changes: bool = False
    #: ``workspace.workspaceEdit.resourceOperations`` includes ``create``.
    create_files: bool = False
    #: ``textDocument.semanticTokens``: the client asks for semantic tokens.
    semantic_tokens: bool = False
    #: ``workspace.semanticTokens.refreshSupport``: the server may ask it to ask again.
    semantic_tokens_refresh: bool = False
    #: ``textDocument.codeAction.codeActionLiteralSupport``: code actions may carry
    #: edits and kinds (otherwise only commands).
    code_action_literals: bool = False
    #: ``textDocument.publishDiagnostics``: the client shows pushed diagnostics.
    publish_diagnostics: bool = False
    #: ``textDocument.rename.prepareSupport``: the client sends ``prepareRename``.
    prepare_rename: bool = False
    #: ``textDocument.documentSymbol.hierarchicalDocumentSymbolSupport``.
    hierarchical_symbols: bool = False
    #: The position encoding negotiated (the client's first that we support).
    encoding: Encoding = "utf-16"

    @classmethod
    def from_json(cls, capabilities: object) -> ClientFeatures:
        """Read ``ClientCapabilities`` given as JSON (absent or malformed parts mean
        "no": ``_get`` finds nothing under a value that is not an object)."""
        caps = capabilities
        completion = _get(caps, "textDocument", "completion")
        item = _get(completion, "completionItem")
        watched = _get(caps, "workspace", "didChangeWatchedFiles")
        edit = _get(caps, "workspace", "workspaceEdit")
        return cls(
            completion_dynamic=_get(completion, "dynamicRegistration") is True,
            completion_markdown="markdown" in _strings(_get(item, "documentationFormat")),
            item_defaults=frozenset(_strings(_get(completion, "completionList", "itemDefaults"))),
            watchers_dynamic=_get(watched, "dynamicRegistration") is True,
            configuration=_get(caps, "workspace", "configuration") is True,
            hover_markdown="markdown"
            in _strings(_get(caps, "textDocument", "hover", "contentFormat")),
            apply_edit=_get(caps, "workspace", "applyEdit") is True,
            document_changes=_get(edit, "documentChanges") is True,
            create_files="create" in _strings(_get(edit, "resourceOperations")),
            semantic_tokens=isinstance(_get(caps, "textDocument", "semanticTokens"), Mapping),
            semantic_tokens_refresh=_get(caps, "workspace", "semanticTokens", "refreshSupport")
            is True,
            code_action_literals=isinstance(
                _get(caps, "textDocument", "codeAction", "codeActionLiteralSupport"), Mapping
            ),
            publish_diagnostics=isinstance(
                _get(caps, "textDocument", "publishDiagnostics"), Mapping
            ),
            prepare_rename=_get(caps, "textDocument", "rename", "prepareSupport") is True,
            hierarchical_symbols=_get(
                caps, "textDocument", "documentSymbol", "hierarchicalDocumentSymbolSupport"
            )
            is True,
            encoding=choose_encoding(_strings(_get(caps, "general", "positionEncodings"))),
        )


def choose_encoding(offered: tuple[str, ...]) -> Encoding:
    """The client's first offered encoding that we support; UTF-16 (LSP's default) else.

    pygls makes the same choice and reports it in ``capabilities.positionEncoding``.
    """
    for name in offered:
        for encoding in ENCODINGS:
            if name == encoding:
                return encoding
    return "utf-16"


def _get(data: object, *path: str) -> object:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v for v in value if isinstance(v, str))
