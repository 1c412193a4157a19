"""JSON-RPC error codes the server answers with, beyond the ones pygls names.

docs/lsp.md, "Errors". One place for each code, so the server, the client and the tests
agree on what a number means.
"""

from typing import Final

#: A request before ``initialize`` (LSP's ServerNotInitialized).
SERVER_NOT_INITIALIZED: Final = -32002
#: A request after ``shutdown``, or a message that is no JSON-RPC request (InvalidRequest).
INVALID_REQUEST: Final = -32600
#: Params that do not fit the method (InvalidParams).
INVALID_PARAMS: Final = -32602
#: A body that is not JSON (ParseError).
PARSE_ERROR: Final = -32700
