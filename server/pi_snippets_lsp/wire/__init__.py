"""What crosses a connection, shared by the server, the client, the tests and the bench:
JSON-RPC framing, error codes, the ``snippets/*`` message models and the version.
Imports ``core`` only (the models are built from a generation)."""
