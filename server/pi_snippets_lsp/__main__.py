"""``python -m pi_snippets_lsp``: the same as the ``pi-snippets-lsp`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
