"""The LSP handlers, one module per concern, each with a ``register(server)``.

docs/lsp.md is the specification. A handler is a few lines: it converts positions with
the document's codec, calls the core with the generation the session holds, and
translates the answer (``lsp.translate``). ``lsp.setup`` registers every module listed
in ``HANDLERS``; the server itself imports none of them.
"""
