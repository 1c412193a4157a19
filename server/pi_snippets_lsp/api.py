"""The in-process API: the server's configuration, expansion and completion as plain calls.

For agent frontends written in Python (chat UIs, CLIs, coding agents) that want Pi's exact
``%name`` expansion for the prompts they submit, and the same ``%`` completion in their
own input boxes, without starting a process::

    from pi_snippets_lsp import complete, expand, load_config

    config = load_config()                      # ~/.pi/agent/settings.json, as Pi reads it
    prompt = expand("%review the diff", config).text
    popup = complete("please %rev", config)     # None, or the items the server would send

Contract (docs/agent-frontends.md, docs/configuration.md):

- ``load_config`` reads the same layers with the same trust rule and the same warnings as
  the server: the user file (``settings`` or ``$PI_CODING_AGENT_DIR/settings.json`` or
  ``~/.pi/agent/settings.json``), the project's ``.pi/settings.json`` only when
  ``trust_project`` is true, then ``options`` (a value of the ``piSimpleSnippets``
  namespace, the client layer the server gets from ``initializationOptions``).
- ``expand`` is the server's ``snippets/expand``.
- ``complete`` is the server's ``textDocument/completion``: the same core functions rank
  the names (``completion.popup``) and make each entry (``completion.suggestion``); the
  server encodes those entries as LSP items and the client parses them back into the
  same ``Suggestions``, so the three cannot drift.

Nothing here touches the network, starts a thread or keeps state between calls; a
``Config`` is immutable and may be shared between threads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pi_snippets_lsp.core.completion import Suggestion, Suggestions, suggest
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.expansion import Expansion
from pi_snippets_lsp.core.expansion import expand as _expand
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.settings.layers import OPTIONS_SOURCE, load_request
from pi_snippets_lsp.settings.layers import load_config as load_request_config

__all__ = [
    "OPTIONS_SOURCE",
    "Config",
    "Expansion",
    "Snippet",
    "Suggestion",
    "Suggestions",
    "complete",
    "expand",
    "load_config",
]


def load_config(
    *,
    settings: str | os.PathLike[str] | None = None,
    project: str | os.PathLike[str] | None = None,
    trust_project: bool = False,
    options: Mapping[str, object] | None = None,
) -> Config:
    """Load one generation of configuration exactly as the server does.

    Layers, lowest first, merged the Pi way and only then validated:

    1. the user settings file: ``settings`` when given (the server's ``--settings``),
       else ``$PI_CODING_AGENT_DIR/settings.json`` when that variable is set and
       non-empty, else ``~/.pi/agent/settings.json`` (``~`` is expanded);
    2. ``<project>/.pi/settings.json``, only when ``project`` is given and
       ``trust_project`` is true (Pi reads a project file only for a trusted project;
       an untrusted one that exists is listed in ``Config.untrusted_project_files``);
    3. ``options``: a value of the ``piSimpleSnippets`` namespace (what a client sends as
       ``initializationOptions.piSimpleSnippets``); ``None`` means no such layer. Its
       snippets get the source ``"options"``.

    Never raises for a bad file or a bad value: every problem is one entry of
    ``Config.warnings``, worded as the server words it (``Config.warning_message()`` is
    the text of the server's one ``window/showMessage``). A missing file at the default
    location is no problem; a ``settings`` file that does not exist is one.
    """
    return load_request_config(
        load_request(
            settings=settings, project=project, trust_project=trust_project, options=options
        )
    )


def expand(text: str, config: Config) -> Expansion:
    """Expand every ``%name`` marker of ``text``: the server's ``snippets/expand``.

    Returns an ``Expansion`` with ``text`` (the expanded prompt), ``changed`` (whether it
    differs from the input) and ``replacements`` (what changed, as code-point ranges of
    the input). Works whatever ``expandOnCompletion`` says; with no usable snippet the
    text comes back unchanged, ``%%name`` included, as in Pi.
    """
    return _expand(text, config.values)


def complete(text_before_cursor: str, config: Config) -> Suggestions | None:
    """The completion the server would answer for ``text_before_cursor``.

    ``text_before_cursor`` is the input box's text up to the cursor (only its last line
    matters; lines end at ``\\n``, ``\\r\\n`` or ``\\r`` as in LSP). Returns None when
    the server answers ``null``: no usable snippet is configured, or the cursor is not
    at the end of a snippet token (Pi's boundary rule: start of line, whitespace or CJK
    punctuation, optional ``( [ { < ```` wrappers, ``%``, a partial name). Items are
    filtered and ordered with Pi's fuzzy rule, at most 20: the server's completion
    handler lists the same snippets in the same order (``completion.popup``), each item
    made from the same ``Suggestion`` (``completion.suggestion``).
    """
    return suggest(text_before_cursor, config)
