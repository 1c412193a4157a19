"""Models of the custom messages: ``snippets/expand``, ``snippets/list``, ``snippets/reload``
and the ``snippets/didLoad`` notification (lsp-design.md, "Custom requests").

Params are validated here, once, so a handler never sees a malformed request: anything
that does not fit becomes a JSON-RPC -32602 error with a message saying what is wrong.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from .completion import preview
from .config import Config

EXPAND: Final = "snippets/expand"
LIST: Final = "snippets/list"
RELOAD: Final = "snippets/reload"
DID_LOAD: Final = "snippets/didLoad"


class InvalidParams(ValueError):
    """Params that do not fit a custom request; the message is for the client."""


class _Params(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


P = TypeVar("P", bound=_Params)


class ExpandParams(_Params):
    text: StrictStr
    uri: StrictStr | None = None


class ListParams(_Params):
    uri: StrictStr | None = None


class ExpandResult(BaseModel):
    text: str
    changed: bool


class SnippetInfo(BaseModel):
    name: str
    value: str
    preview: str
    source: str


class SnippetsState(BaseModel):
    """The result of ``snippets/list`` and ``snippets/reload``, and ``snippets/didLoad``."""

    snippets: list[SnippetInfo]
    shortcut: str | None
    expand_on_completion: bool = Field(serialization_alias="expandOnCompletion")
    warnings: list[str]

    @classmethod
    def of(cls, config: Config) -> SnippetsState:
        return cls(
            snippets=[
                SnippetInfo(name=s.name, value=s.value, preview=preview(s.value), source=s.source)
                for s in config.snippets
            ],
            shortcut=config.shortcut,
            expand_on_completion=config.expand_on_completion,
            warnings=list(config.warnings),
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


def parse_params(model: type[P], params: object, method: str) -> P:
    """Validate raw JSON params; absent params are an empty object."""
    if params is None or params == []:
        # Absent params, or an empty Lua table that Neovim encodes as `[]`.
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams(f"{method}: params must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(
            f"`{'.'.join(str(p) for p in err['loc']) or 'params'}`: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidParams(f"{method}: {problems}") from None
