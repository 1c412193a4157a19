"""Models of the custom messages: ``snippets/expand``, ``snippets/list``, ``snippets/reload``
and the ``snippets/didLoad`` notification (docs/lsp.md, "Custom requests").

Params are validated here, once, so a handler never sees a malformed request: anything
that does not fit becomes a JSON-RPC -32602 error with a message saying what is wrong.
The same models parse the answers on the client side (``pi_snippets_lsp.client``), so
server and client cannot disagree about a shape.
"""

from __future__ import annotations

from collections.abc import Mapping
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


class ExpandResult(NamedTuple):
    """``snippets/expand``'s result: the prompt expanded, and whether it changed.

    Unpacks as ``text, changed``.
    """

    text: str
    changed: bool


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
