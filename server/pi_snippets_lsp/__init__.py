"""pi-snippets-lsp: Pi's ``%name`` prompt snippets for every LSP editor and agent frontend."""

__version__ = "0.1.0"
