#!/usr/bin/env python3
"""A minimal agent REPL with Pi's ``%name`` snippets, on prompt_toolkit.

Type ``%`` and the snippets show up, ranked as in Pi, with their previews; Tab or the
arrows pick one; Enter sends the prompt with every ``%name`` expanded. The "agent" here
only prints what it receives. Ctrl-D quits. Needs ``pip install
'pi-snippets-lsp[prompt-toolkit]'``; from the root of the repository::

    python examples/prompt_toolkit_repl.py --settings examples/settings.json
    python examples/prompt_toolkit_repl.py --server   # ask a pi-snippets-lsp process

Without ``--settings`` it reads your own settings, as Pi does
(``$PI_CODING_AGENT_DIR/settings.json`` or ``~/.pi/agent/settings.json``); edit them while
it runs and the next ``%`` shows the change.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from pi_snippets_lsp.client import SnippetsClient
from pi_snippets_lsp.integrations.prompt_toolkit import SnippetCompleter, SnippetPromptSession


def main(
    argv: Sequence[str] | None = None,
    *,
    input: Input | None = None,  # prompt_toolkit's own name for it
    output: Output | None = None,
) -> int:
    parser = argparse.ArgumentParser(
        description="A minimal agent REPL with Pi's %name snippets, on prompt_toolkit."
    )
    parser.add_argument("--settings", metavar="FILE", help="user settings file")
    parser.add_argument(
        "--server", action="store_true", help="ask a pi-snippets-lsp process (SnippetsClient)"
    )
    args = parser.parse_args(argv)

    with contextlib.ExitStack() as stack:
        if args.server:
            client = stack.enter_context(SnippetsClient.start(settings=args.settings))
            snippets = SnippetCompleter(client)
        else:
            snippets = SnippetCompleter(settings=args.settings)
        for warning in snippets.warnings():
            print(f"warning: {warning}", file=sys.stderr)

        session = SnippetPromptSession("you> ", snippets=snippets, input=input, output=output)
        while True:
            try:
                prompt = session.prompt()
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
            print(f"agent received:\n{prompt}")


if __name__ == "__main__":
    sys.exit(main())
