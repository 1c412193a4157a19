"""JSON-RPC error codes: the one table the server, the MCP server, the client and the
tests read.

docs/lsp.md, "Errors". One place for each code, so every side agrees on what a number
means (``client.errors`` re-exports them for the client's users).
"""

from typing import Final

#: A body that is not JSON (ParseError).
PARSE_ERROR: Final = -32700
#: A request after ``shutdown``, or a message that is no JSON-RPC request (InvalidRequest).
INVALID_REQUEST: Final = -32600
#: A method the other side does not have (MethodNotFound).
METHOD_NOT_FOUND: Final = -32601
#: Params that do not fit the method (InvalidParams); MCP's answer for an unknown
#: prompt, resource or tool.
INVALID_PARAMS: Final = -32602
#: A handler that failed (InternalError).
INTERNAL_ERROR: Final = -32603
#: A request before ``initialize`` (LSP's ServerNotInitialized).
SERVER_NOT_INITIALIZED: Final = -32002
#: A request the client cancelled (LSP's RequestCancelled).
REQUEST_CANCELLED: Final = -32800
#: A request understood but that cannot be done (LSP's RequestFailed: a rename refused).
REQUEST_FAILED: Final = -32803
#: The daemon's answer to an ``initialize`` without the right token.
UNAUTHORIZED: Final = -32001
#: MCP: the connection closed before the answer (the SDKs' ConnectionClosed).
CONNECTION_CLOSED: Final = -32000
#: MCP: a request the server gave up waiting for (the SDKs' RequestTimeout; the same
#: number as ``UNAUTHORIZED``, in another protocol).
REQUEST_TIMEOUT: Final = -32001
#: MCP: the server does not speak the protocol revision a request asked for.
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
