"""Models of the custom messages: ``snippets/expand``, ``snippets/list``, ``snippets/reload``
and the ``snippets/didLoad`` notification (docs/lsp.md, "Custom requests").

Params are validated here, once, so a handler never sees a malformed request: anything
that does not fit becomes a JSON-RPC -32602 error with a message saying what is wrong.
The same models write the answers on the server side and parse them on the client side
(``pi_snippets_lsp.client``), so server and client cannot disagree about a shape.

This module is the one place the ``snippets/*`` shapes are written: ``MESSAGES`` lists
each method with its params and result, and ``wire_shapes`` describes their fields in
JSON terms. The editors' copies (the VS Code extension's ``src/protocol.ts``, the Neovim
plugin's ``lua/pi_snippets/protocol.lua``) are generated from that description by
``scripts/wire_types.py``, and a test fails when they, or a field the Lua plugin reads,
disagree with it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    ValidationError,
    field_serializer,
    field_validator,
)

from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.snippet import Snippet

EXPAND: Final = "snippets/expand"
LIST: Final = "snippets/list"
RELOAD: Final = "snippets/reload"
DID_LOAD: Final = "snippets/didLoad"


class InvalidParams(ValueError):
    """Params that do not fit a custom request; the message is for the client."""


class _Params(BaseModel):
    # defer_build: a model's validator is built when it is first used, not when the
    # server starts (no custom request is needed to answer ``initialize``).
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


P = TypeVar("P", bound=_Params)


class ExpandParams(_Params):
    text: StrictStr
    uri: StrictStr | None = None


class ListParams(_Params):
    uri: StrictStr | None = None


class PositionParams(_Params):
    line: int = Field(ge=0, strict=True)
    character: int = Field(ge=0, strict=True)


class RangeParams(_Params):
    start: PositionParams
    end: PositionParams


class ExpandDocumentParams(_Params):
    """``pi-snippets.expandDocument``: the document, and optionally the part of it."""

    uri: StrictStr
    range: RangeParams | None = None


class SaveSnippetParams(_Params):
    """``pi-snippets.saveSnippet``: the snippet's text, its name (derived when absent) and
    the document it came from (whose folder's snippets the name must not shadow)."""

    text: StrictStr
    name: StrictStr | None = None
    uri: StrictStr | None = None


class EditSnippetParams(_Params):
    """``pi-snippets.editSnippet``: the snippet by ``name``, or the marker or settings key
    at ``position`` of the document ``uri`` (whose folder's layers decide which snippet
    Pi takes)."""

    name: StrictStr | None = None
    uri: StrictStr | None = None
    position: PositionParams | None = None


class SetSnippetValueParams(_Params):
    """``pi-snippets.setSnippetValue``: the snippet's new value, and the value the edit
    was made from (``previous``: refused when the file now holds another)."""

    name: StrictStr
    value: StrictStr
    previous: StrictStr | None = None
    uri: StrictStr | None = None


class ExpandResult(NamedTuple):
    """``snippets/expand``'s result: the prompt expanded, and whether it changed.

    Unpacks as ``text, changed``.
    """

    text: str
    changed: bool

    def to_json(self) -> dict[str, Any]:
        return self._asdict()

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ExpandResult:
        """The answer as a client reads it; a missing field raises ``KeyError``."""
        return cls(str(value["text"]), bool(value["changed"]))


class SnippetsListing(BaseModel):
    """One generation as ``snippets/list`` and ``snippets/reload`` describe it:
    the usable snippets (each with its preview and source), the normalized shortcut,
    ``expandOnCompletion`` and the problems of that load."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, defer_build=True)

    snippets: tuple[Snippet, ...] = ()
    shortcut: str | None = None
    expand_on_completion: bool = Field(default=False, alias="expandOnCompletion")
    warnings: tuple[str, ...] = ()

    @property
    def values(self) -> dict[str, str]:
        """Snippet name -> text."""
        return {s.name: s.value for s in self.snippets}

    @field_validator("snippets", mode="before")
    @classmethod
    def _snippets_from_json(cls, value: object) -> object:
        """A listing read back from JSON has objects with a preview; a snippet is its
        name, value and source (the preview follows from the value)."""
        if not isinstance(value, list | tuple):
            return value
        return tuple(
            Snippet(item.get("name"), item.get("value"), item.get("source"))  # type: ignore[arg-type]
            if isinstance(item, Mapping)
            else item
            for item in value
        )

    @field_serializer("snippets")
    def _snippets_with_previews(self, snippets: tuple[Snippet, ...]) -> list[dict[str, str]]:
        return [snippet.to_json() for snippet in snippets]

    @classmethod
    def of(cls, config: Config) -> SnippetsListing:
        # A generation is validated already: no second validation of every snippet.
        return cls.model_construct(
            snippets=config.snippets,
            shortcut=config.shortcut,
            expand_on_completion=config.expand_on_completion,
            warnings=config.warnings,
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


class LoadNotice(BaseModel):
    """The ``snippets/didLoad`` notification: a generation was loaded.

    Sent only to clients that opt in (``initializationOptions.notifications``), and
    slim: what a client acts on at once (bind the shortcut, show the warnings, know how
    many snippets there are), without the values. A client that needs them calls
    ``snippets/list``. Describes the default folder, as ``snippets/list`` without a
    ``uri`` does.
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True, defer_build=True)

    #: The generation number: 1 for the first load, one more for every reload.
    generation: int
    #: How many usable snippets the default folder has.
    count: int
    shortcut: str | None = None
    expand_on_completion: bool = Field(default=False, alias="expandOnCompletion")
    warnings: tuple[str, ...] = ()

    @classmethod
    def of(cls, generation: int, config: Config) -> LoadNotice:
        return cls(
            generation=generation,
            count=len(config.snippets),
            shortcut=config.shortcut,
            expand_on_completion=config.expand_on_completion,
            warnings=config.warnings,
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


def parse_params(model: type[P], params: object, method: str) -> P:
    """Validate raw JSON params; absent params are an empty object."""
    if params is None or params == []:
        # Absent params, or an empty Lua table that Neovim encodes as `[]`.
        params = {}
    if not isinstance(params, Mapping):
        raise InvalidParams(f"{method}: params must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise InvalidParams(f"{method}: {describe_errors(exc)}") from None


def describe_errors(exc: ValidationError) -> str:
    """pydantic's errors as one line: `` `field`: message; ... ``."""
    return "; ".join(
        f"`{'.'.join(str(p) for p in err['loc']) or 'params'}`: {err['msg']}"
        for err in exc.errors()
    )


# --------------------------------------------------------------------------- the wire


@dataclass(frozen=True)
class Message:
    """A ``snippets/*`` method: its params, and its result (``None`` for a notification)."""

    method: str
    params: type[BaseModel]
    result: type[BaseModel] | type[ExpandResult] | None


#: Every ``snippets/*`` message, in the order docs/lsp.md lists them.
MESSAGES: Final = (
    Message(EXPAND, ExpandParams, ExpandResult),
    Message(LIST, ListParams, SnippetsListing),
    Message(RELOAD, ListParams, SnippetsListing),
    Message(DID_LOAD, LoadNotice, None),
)


def wire_shapes() -> dict[str, Any]:
    """The ``snippets/*`` messages in JSON terms, for the editors' copies and their test.

    ``{"methods": {method: {"params": type, "result": type or None}}, "types": {type:
    [{"name", "type", "optional"}]}}``. A field's name is its JSON name (the alias); its
    type is ``string``, ``integer``, ``boolean``, a type of this description, ``T[]`` or
    ``T | null``. ``optional`` marks a field a sender may leave out: the fields with a
    default in the params the server reads. What the server writes always has every
    field. A snippet is what ``Snippet.to_json`` writes.
    """
    read_by_server = {m.params for m in MESSAGES if m.result is not None}
    models = dict.fromkeys(
        model for m in MESSAGES for model in (m.params, m.result) if model is not None
    )
    sample = Snippet("", "", "")  # pragma: no mutate (only the keys of its JSON count)
    shapes: dict[str, list[dict[str, Any]]] = {
        "Snippet": [{"name": key, "type": "string", "optional": False} for key in sample.to_json()]
    }
    for model in models:
        if issubclass(model, BaseModel):
            shapes[model.__name__] = [
                {
                    "name": info.alias or name,
                    "type": _json_type(info.annotation),
                    "optional": model in read_by_server and not info.is_required(),
                }
                for name, info in model.model_fields.items()
            ]
        else:  # a NamedTuple: its annotations are its fields, in order
            shapes[model.__name__] = [
                {"name": name, "type": _json_type(hint), "optional": False}
                for name, hint in typing.get_type_hints(model).items()
            ]
    methods = {
        m.method: {
            "params": m.params.__name__,
            "result": m.result.__name__ if m.result is not None else None,
        }
        for m in MESSAGES
    }
    return {"methods": methods, "types": shapes}


_SCALARS: Final[Mapping[object, str]] = {str: "string", int: "integer", bool: "boolean"}


def _json_type(annotation: object) -> str:
    """A Python annotation of a message field in the terms of ``wire_shapes``."""
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:  # StrictStr: the type, without its validation
        return _json_type(arguments[0])
    optional = origin in (typing.Union, types.UnionType) and len(arguments) == 2
    if optional and arguments[1] is type(None):  # written ``X | None``, as this module does
        return f"{_json_type(arguments[0])} | null"
    if (origin is list and len(arguments) == 1) or (
        origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis
    ):
        return f"{_json_type(arguments[0])}[]"
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if annotation is Snippet:
        return "Snippet"
    raise TypeError(f"no wire type for {annotation!r}")
