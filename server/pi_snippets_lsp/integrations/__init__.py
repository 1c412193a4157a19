"""Pi's ``%name`` snippets inside agent frontends, where those frontends live.

docs/agent-frontends.md, "prompt_toolkit" and "The ``llm`` plugin". Each integration is a
module of its own whose third-party library is an optional extra, so importing this
package (or ``backend``) needs nothing beyond the core dependencies:

- ``prompt_toolkit`` (``pip install 'pi-snippets-lsp[prompt-toolkit]'``):
  ``SnippetCompleter``, a prompt_toolkit ``Completer`` for the ``%`` token before the
  cursor, and ``SnippetPromptSession`` / ``expand_on_submit``, which expand the whole
  prompt when it is submitted;
- ``llm`` (``pip install 'pi-snippets-lsp[llm]'``): a plugin for Simon Willison's ``llm``
  CLI, registered through the ``llm`` entry-point group: ``llm -f pi:NAME``,
  ``llm pi list`` and ``llm pi expand``;
- ``backend``: where an integration gets its answers, the in-process API
  (``InProcessBackend``, which reloads when a settings file changes) or a running server
  (``ClientBackend`` around a ``SnippetsClient``). Neither re-implements a rule: they
  call ``complete`` / ``expand`` or the server's own requests.
"""
