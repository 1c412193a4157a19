"""lsprotocol values as plain JSON, by lsprotocol's own rule, without cattrs.

pygls turns a handler's lsprotocol result into JSON through lsprotocol's cattrs
converter, which generates (and compiles) an unstructuring function for every class the
first time it meets one. Answering ``initialize`` meets about thirty at once (the
server's capabilities): most of the time between the framework's import and the answer.
This walks the value instead, by the rule those generated functions follow
(``lsprotocol._hooks``): every attrs field under its camelCase name (a trailing ``_``
dropped), left out when it equals its default unless lsprotocol marks the property as
special (``is_special_property``: e.g. a ``documentSelector`` that must be sent as
``null``); enums as their values; lists and dicts item by item. The unit tests compare it
with lsprotocol's converter on every kind of result the server sends.
"""

from __future__ import annotations

import enum
import functools
from typing import Any, NamedTuple

import attrs
from lsprotocol.types import is_special_property


class _Field(NamedTuple):
    name: str
    json_name: str
    #: ``attrs.NOTHING`` for a required field (never left out).
    default: Any
    factory: bool
    #: Sent even when it equals its default.
    always: bool


def _json_name(name: str) -> str:
    parts = name.removesuffix("_").split("_")
    return parts[0] + "".join(part.title() for part in parts[1:])


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    fields = []
    for field in attrs.fields(cls):
        factory = isinstance(field.default, attrs.Factory)  # type: ignore[arg-type]
        default = field.default.factory if factory else field.default
        always = is_special_property(cls, field.name)
        fields.append(_Field(field.name, _json_name(field.name), default, factory, always))
    return tuple(fields)


def lsp_json(value: Any) -> Any:
    """``value`` (an lsprotocol object, or lists and dicts of them) as plain JSON."""
    cls = type(value)
    if attrs.has(cls):
        out: dict[str, Any] = {}
        for field in _fields(cls):
            item = getattr(value, field.name)
            if not field.always and field.default is not attrs.NOTHING:
                default = field.default() if field.factory else field.default
                if item == default:
                    continue
            out[field.json_name] = lsp_json(item)
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [lsp_json(item) for item in value]
    if isinstance(value, dict):
        return {key: lsp_json(item) for key, item in value.items()}
    return value
