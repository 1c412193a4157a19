"""What the out-of-process client raises: every error derives from ``SnippetsClientError``."""

from __future__ import annotations

from typing import Any

# The codes a ``SnippetsError`` may carry, from the one table (``wire.errors``).
from pi_snippets_lsp.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SERVER_NOT_INITIALIZED,
)

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "SERVER_NOT_INITIALIZED",
    "ServerExitedError",
    "ServerUnavailableError",
    "SnippetsClientError",
    "SnippetsError",
    "SnippetsTimeoutError",
]


class SnippetsClientError(Exception):
    """Base of every error this client raises."""


class SnippetsError(SnippetsClientError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: JSON-RPC error {code}: {message}")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class SnippetsTimeoutError(SnippetsClientError, TimeoutError):
    """No answer in time (the request was cancelled with ``$/cancelRequest``)."""


class ServerUnavailableError(SnippetsClientError, ConnectionError):
    """Nothing accepted the connection (no server listens at that address)."""


class ServerExitedError(SnippetsClientError, ConnectionError):
    """The server process ended, or the connection to it closed."""

    def __init__(self, message: str, returncode: int | None = None, stderr: str = "") -> None:
        details = message
        if returncode is not None:
            details += f" (exit code {returncode})"
        if stderr.strip():
            details += "\n--- server stderr (last lines) ---\n" + stderr.rstrip()
        super().__init__(details)
        self.returncode = returncode
        self.stderr = stderr
