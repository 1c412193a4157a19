"""What each MCP protocol revision asks of the server: pure functions, no I/O.

docs/mcp.md, "The wire". The server speaks two eras on one stdio stream, chosen by the
client's first request:

- the handshake revisions (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): the client
  sends ``initialize``; a revision the server does not know gets the latest it does;
  ``notifications/initialized`` opens the session. All four share one result shape.
- 2026-07-28: no handshake; every request carries its envelope in ``params._meta``
  (protocol version, client capabilities, optionally client info). Each result says
  ``resultType: "complete"`` and names the server in ``_meta``; the cacheable lists
  carry ``ttlMs`` and ``cacheScope``; ``ping`` and ``logging/setLevel`` are gone, and
  ``server/discover`` and ``subscriptions/listen`` are new.

The methods, errors and result fields are those the official SDK (v2) produced for
this server, so every client sees the same answers as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pi_snippets_lsp.mcp.jsonrpc import RpcError
from pi_snippets_lsp.wire.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)

HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: Final = ("2026-07-28",)
LATEST_HANDSHAKE: Final = HANDSHAKE_VERSIONS[-1]
LATEST_MODERN: Final = MODERN_VERSIONS[-1]

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"


#: The log levels, least severe first (RFC 5424).
LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

#: The requests a client may send, per era (what the revision defines; this server
#: answers the others with "Method not found").
HANDSHAKE_METHODS: Final = frozenset(
    {
        "completion/complete",
        "initialize",
        "logging/setLevel",
        "ping",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "resources/templates/list",
        "resources/unsubscribe",
        "tools/call",
        "tools/list",
    }
)
MODERN_METHODS: Final = frozenset(
    {
        "completion/complete",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "subscriptions/listen",
        "tools/call",
        "tools/list",
    }
)
#: The 2026-07-28 results that carry caching directives.
CACHEABLE: Final = frozenset(
    {
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "tools/list",
    }
)


def is_modern(params: object) -> bool:
    """Whether a request carries the 2026-07-28 envelope (its protocol-version key)."""
    if not isinstance(params, Mapping):
        return False
    meta = params.get("_meta")
    return isinstance(meta, Mapping) and PROTOCOL_VERSION_KEY in meta


def negotiate(requested: str) -> str:
    """The handshake revision answered to ``initialize``: the client's, when known,
    else the latest."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def capabilities(modern: bool) -> dict[str, object]:
    """What the server offers. On 2026-07-28 change notifications ride
    ``subscriptions/listen`` streams, which also follow single resources."""
    return {
        "completions": {},
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": modern},
        "tools": {"listChanged": modern},
    }


def initialize_result(
    version: str, server_info: dict[str, object], instructions: str
) -> dict[str, object]:
    return {
        "capabilities": capabilities(False),
        "instructions": instructions,
        "protocolVersion": version,
        "serverInfo": server_info,
    }


def discover_result(instructions: str) -> dict[str, object]:
    return {
        "capabilities": capabilities(True),
        "instructions": instructions,
        "supportedVersions": list(MODERN_VERSIONS),
    }


def modern_envelope(params: Mapping[str, Any]) -> tuple[str, object]:
    """The envelope of a 2026-07-28 request: (protocol version, client capabilities),
    or the error that refuses it."""
    meta = params.get("_meta")
    if not isinstance(meta, Mapping):
        raise RpcError(
            INVALID_PARAMS,
            "params._meta must be an object carrying the required "
            f"{PROTOCOL_VERSION_KEY!r} and {CLIENT_CAPABILITIES_KEY!r} envelope keys",
        )
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise RpcError(
            INVALID_PARAMS,
            f"params._meta is missing the required envelope key(s): {', '.join(missing)}",
        )
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, "the protocol-version envelope value must be a string")
    if version not in MODERN_VERSIONS:
        raise RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(MODERN_VERSIONS), "requested": version},
        )
    return version, meta[CLIENT_CAPABILITIES_KEY]


def allowed_levels(meta: object) -> tuple[str, ...]:
    """2026-07-28: the log levels a request asked to receive on its own stream (its
    ``_meta`` log level and above; none when it did not ask)."""
    requested = meta.get(LOG_LEVEL_KEY) if isinstance(meta, Mapping) else None
    if requested not in LEVELS:
        return ()
    return LEVELS[LEVELS.index(requested) :]


def shape_result(
    method: str, modern: bool, result: dict[str, object], server_info: dict[str, object]
) -> dict[str, object]:
    """A handler's result as the revision wants it on the wire."""
    if method == "tools/call" and "isError" not in result and "inputRequests" not in result:
        result = {**result, "isError": False}
    if not modern:
        return result
    shaped: dict[str, object] = {}
    if method in CACHEABLE:
        shaped["ttlMs"] = 0
        shaped["cacheScope"] = "private"
    shaped.update(result)
    shaped.setdefault("resultType", "complete")
    meta = shaped.get("_meta")
    if meta is None:
        shaped["_meta"] = {SERVER_INFO_KEY: server_info}
    elif isinstance(meta, dict) and meta.get(SERVER_INFO_KEY) is None:
        shaped["_meta"] = {**meta, SERVER_INFO_KEY: server_info}
    return shaped


def admit(
    method: str, params: object, modern: bool, *, served: bool, opened: bool
) -> Mapping[str, Any]:
    """A request's checked params, or the ``RpcError`` that refuses it: in the era the
    session is in (``modern``), for a method the server has a handler for (``served``),
    once the handshake opened the session (``opened``; ``ping`` may come before)."""
    if modern:
        if method == "initialize":
            requested = params.get("protocolVersion") if isinstance(params, Mapping) else None
            data: dict[str, object] = {"supported": list(MODERN_VERSIONS)}
            if isinstance(requested, str):
                data["requested"] = requested
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "connection is serving the 2026-07-28 protocol; the initialize handshake "
                "is not accepted",
                data,
            )
        modern_envelope(params if isinstance(params, Mapping) else {})
    elif is_modern(params):
        raise RpcError(
            INVALID_REQUEST,
            "this connection serves the handshake protocol era; requests carrying the "
            "2026-07-28 envelope are not accepted on it",
        )
    if method not in (MODERN_METHODS if modern else HANDSHAKE_METHODS) or not served:
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)
    if not modern and not opened and method != "ping":
        raise RpcError(
            INVALID_PARAMS,
            "Invalid request: the session is not initialized (send initialize first)",
        )
    return check_params(method, params, modern)


# --------------------------------------------------------------------------- params


def _bad(method: str, what: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params for {method}: {what}")


def _string(method: str, params: Mapping[str, Any], key: str, required: bool = True) -> None:
    if key not in params or params[key] is None:
        if required:
            raise _bad(method, f"{key!r} is required")
        return
    if not isinstance(params[key], str):
        raise _bad(method, f"{key!r} must be a string")


def _object(method: str, value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(method, f"{what} must be an object")
    return value


def _strings(method: str, value: object, what: str) -> None:
    for key, item in _object(method, value, what).items():
        if not isinstance(item, str):
            raise _bad(method, f"{what}.{key} must be a string")


def check_params(method: str, params: object, modern: bool) -> Mapping[str, Any]:
    """The request's params (``{}`` when absent), checked against the method's
    schema, or ``INVALID_PARAMS`` saying what does not fit."""
    if params is None:
        params = {}
    params = _object(method, params, "params")
    meta = params.get("_meta")
    if meta is not None:
        meta = _object(method, meta, "params._meta")
        token = meta.get("progressToken")
        if token is not None and not (
            isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool))
        ):
            raise _bad(method, "_meta.progressToken must be a string or an integer")
        if modern and LOG_LEVEL_KEY in meta and meta[LOG_LEVEL_KEY] not in LEVELS:
            raise _bad(method, f"_meta[{LOG_LEVEL_KEY!r}] must be one of {', '.join(LEVELS)}")
    if method in ("prompts/list", "resources/list", "resources/templates/list", "tools/list"):
        _string(method, params, "cursor", required=False)
    elif method == "prompts/get":
        _string(method, params, "name")
        if params.get("arguments") is not None:
            _strings(method, params["arguments"], "arguments")
    elif method == "resources/read":
        _string(method, params, "uri")
    elif method == "tools/call":
        _string(method, params, "name")
        if params.get("arguments") is not None:
            _object(method, params["arguments"], "arguments")
    elif method == "completion/complete":
        _check_completion(method, params)
    elif method == "logging/setLevel":
        if params.get("level") not in LEVELS:
            raise _bad(method, f"'level' must be one of {', '.join(LEVELS)}")
    elif method == "initialize":
        _string(method, params, "protocolVersion")
        _object(method, params.get("capabilities"), "capabilities")
        info = _object(method, params.get("clientInfo"), "clientInfo")
        _string(method, info, "name")
        _string(method, info, "version")
    elif method == "subscriptions/listen":
        wanted = _object(method, params.get("notifications"), "notifications")
        for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged"):
            if wanted.get(key) is not None and not isinstance(wanted[key], bool):
                raise _bad(method, f"notifications.{key} must be a boolean")
        uris = wanted.get("resourceSubscriptions")
        if uris is not None and not (
            isinstance(uris, list) and all(isinstance(u, str) for u in uris)
        ):
            raise _bad(method, "notifications.resourceSubscriptions must be a list of strings")
    return params


def _check_completion(method: str, params: Mapping[str, Any]) -> None:
    ref = _object(method, params.get("ref"), "ref")
    kind = ref.get("type")
    if kind == "ref/prompt":
        _string(method, ref, "name")
    elif kind == "ref/resource":
        _string(method, ref, "uri")
    else:
        raise _bad(method, "ref.type must be 'ref/prompt' or 'ref/resource'")
    argument = _object(method, params.get("argument"), "argument")
    _string(method, argument, "name")
    _string(method, argument, "value")
    context = params.get("context")
    if context is not None and _object(method, context, "context").get("arguments") is not None:
        _strings(method, context["arguments"], "context.arguments")


def text_size(params: Mapping[str, Any]) -> int:
    """The length of the text a request carries (``prompts/get``'s and a tool's)."""
    arguments = params.get("arguments")
    text = arguments.get("text") if isinstance(arguments, Mapping) else None
    return len(text) if isinstance(text, str) else 0


def listen_filter(params: Mapping[str, Any]) -> dict[str, object]:
    """The part of a ``subscriptions/listen`` filter the server honors (all of it:
    whether an event ever fires depends on what changes); false flags and an empty
    list are left out."""
    wanted = params["notifications"]
    honored: dict[str, object] = {
        key: True
        for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
        if wanted.get(key)
    }
    if wanted.get("resourceSubscriptions"):
        honored["resourceSubscriptions"] = list(wanted["resourceSubscriptions"])
    return honored


def client_name(params: Mapping[str, Any], modern: bool, handshake: str | None) -> str | None:
    """The name the client gave itself: ``handshake``, its ``initialize``'s
    ``clientInfo.name`` (the handshake revisions), or this request's ``_meta``
    (2026-07-28, where every request names its client)."""
    if not modern:
        return handshake
    meta = params.get("_meta")
    info = meta.get(CLIENT_INFO_KEY) if isinstance(meta, Mapping) else None
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) else None
