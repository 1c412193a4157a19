"""``python -m pi_snippets_lsp``: the same as the ``pi-snippets-lsp`` command."""

from pi_snippets_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
