"""An ``llm`` plugin: Pi's ``%name`` snippets as fragments, ``llm pi list`` and ``llm pi expand``.

docs/agent-frontends.md, "The llm plugin". Installed with
``pip install 'pi-snippets-lsp[llm]'`` (or ``llm install pi-snippets-lsp``); ``llm``
finds it through the ``llm`` entry-point group. Three uses::

    llm -f pi:review "$(git diff)"       # the snippet `review` goes in as a fragment
    llm pi list                          # every snippet, its preview, its settings file
    llm pi expand "%use-mcp, then %brief" # the text with its markers expanded

Configuration is read by ``load_config``, with the server's layers and warnings: the
user file (``$PI_CODING_AGENT_DIR/settings.json``, else ``~/.pi/agent/settings.json``;
``--settings`` for the commands), then the current directory's ``.pi/settings.json``
*only when the project is trusted*. Pi reads a project's settings only for a project the
user trusts, and ``llm`` has no notion of trust, so trust is explicit and off by
default: ``PI_SNIPPETS_TRUST_PROJECT=1`` in the environment (the only way a fragment
loader, which gets no options, can be told) or ``--trust-project`` on the commands. A
project file that was skipped is named: by ``list`` and ``expand`` always, by the
fragment loader when the snippet asked for is not found.

An unknown name is an error naming the close matches (``core.catalog.closest_names``,
the rule every front end answers an unknown name by), else every name. Problems with the settings go
to stderr as ``pi-simple-snippets: ...``, worded as the server words them.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import click
import llm

from pi_snippets_lsp.core.catalog import (
    TRUST_FLAG_HINT,
    closest_names,
    snippet_named,
    untrusted_note,
)
from pi_snippets_lsp.core.config import MESSAGE_PREFIX, Config
from pi_snippets_lsp.core.expansion import expand
from pi_snippets_lsp.core.grammar import TRIGGER
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.settings.layers import LoadRequest, load_request
from pi_snippets_lsp.settings.layers import load_config as load_request_config

__all__ = [
    "PREFIX",
    "TRUST_ENV",
    "pi_fragment",
    "pi_group",
    "register_commands",
    "register_fragment_loaders",
]

#: The fragment prefix: ``llm -f pi:NAME``.
PREFIX: Final = "pi"
#: The environment variable that trusts the current directory's ``.pi/settings.json``.
TRUST_ENV: Final = "PI_SNIPPETS_TRUST_PROJECT"
#: How many close matches an unknown name's error offers.
MAX_MATCHES: Final = 3
#: How many names the error lists when nothing is close.
MAX_LISTED: Final = 10
#: How to trust the project: the fragment loader (which gets no options) and the commands.
_TRUST_BY_ENV: Final = f"set {TRUST_ENV}=1"
_TRUST_BY_FLAG_OR_ENV: Final = f"{TRUST_FLAG_HINT} or set {TRUST_ENV}=1"

_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"", "0", "false", "no", "off"})


class SnippetLookupError(LookupError):
    """A fragment that cannot be given; the message says why and what would work."""


def trusted_by_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``PI_SNIPPETS_TRUST_PROJECT`` trusts the current project.

    ``1``/``true``/``yes``/``on`` trust it, unset or ``0``/``false``/``no``/``off``
    (any case) do not; anything else is an error rather than a guess either way.
    """
    raw = (os.environ if environ is None else environ).get(TRUST_ENV, "")
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{TRUST_ENV} must be 1 or 0 (true/false, yes/no), not {raw!r}")


def load(
    settings: str | os.PathLike[str] | None = None, trust_project: bool = False
) -> tuple[Config, LoadRequest]:
    """The configuration for the current directory, and where it was read from.

    The project is trusted when ``trust_project`` is or ``PI_SNIPPETS_TRUST_PROJECT``
    says so.
    """
    request = load_request(
        settings=settings, project=Path.cwd(), trust_project=trust_project or trusted_by_env()
    )
    return load_request_config(request), request


def report_warnings(config: Config) -> None:
    """The generation's problems, on stderr, as the server's one warning words them."""
    message = config.warning_message()
    if message:
        click.echo(message, err=True)


def find_snippet(config: Config, name: str, request: LoadRequest) -> Snippet:
    """The snippet called ``name``, or ``SnippetLookupError`` saying what there is."""
    snippet = snippet_named(config, name)
    if snippet is None:
        raise SnippetLookupError(_unknown_message(config, name, request))
    return snippet


def _unknown_message(config: Config, name: str, request: LoadRequest) -> str:
    quoted = json.dumps(name, ensure_ascii=False)
    asked = f"no snippet named {quoted}" if name else "no snippet name given (use pi:NAME)"
    if not config.snippets:
        looked = ", ".join(str(path) for path in request.files)
        message = f"{asked}: no snippets are configured (settings read from {looked})"
    else:
        matches = closest_names(config, name, MAX_MATCHES)
        if matches:
            message = f"{asked}; did you mean {_names(matches, 'or')}?"
        else:
            listed = _names([s.name for s in config.snippets[:MAX_LISTED]], "and")
            more = len(config.snippets) - MAX_LISTED
            rest = f" and {more} more (llm pi list)" if more > 0 else ""
            message = f"{asked}; the snippets are {listed}{rest}"
    for path in config.untrusted_project_files:
        message += f"; {untrusted_note(path, _TRUST_BY_ENV)}"
    return message


def _names(names: Sequence[str], conjunction: str) -> str:
    labels = [TRIGGER + name for name in names]
    if len(labels) == 1:
        return labels[0]
    return ", ".join(labels[:-1]) + f" {conjunction} " + labels[-1]


def pi_fragment(argument: str) -> llm.Fragment:
    """Pi's %name prompt snippets (pi-snippets-lsp): pi:NAME is the text of snippet NAME.

    Read from $PI_CODING_AGENT_DIR/settings.json or ~/.pi/agent/settings.json, and the
    current directory's .pi/settings.json when PI_SNIPPETS_TRUST_PROJECT=1.
    `llm pi list` shows the snippets.
    """
    config, request = load()
    report_warnings(config)
    name = argument.strip().removeprefix(TRIGGER)
    snippet = find_snippet(config, name, request)
    # llm.Fragment (a str with a `source`) has an unannotated __init__.
    return llm.Fragment(snippet.value, f"{PREFIX}:{snippet.name}")  # type: ignore[no-untyped-call]


# `llm fragments loaders` dedents the docstring as a whole, so its first line must not
# be the only unindented one.
pi_fragment.__doc__ = inspect.cleandoc(pi_fragment.__doc__ or "")


@llm.hookimpl
def register_fragment_loaders(register: Callable[[str, Callable[[str], Any]], None]) -> None:
    register(PREFIX, pi_fragment)


# --------------------------------------------------------------------------- commands

_settings_option = click.option(
    "--settings",
    type=click.Path(dir_okay=False),
    help="User settings file (default: $PI_CODING_AGENT_DIR/settings.json "
    "or ~/.pi/agent/settings.json).",
)
_trust_option = click.option(
    "--trust-project",
    is_flag=True,
    help=f"Also read ./.pi/settings.json (Pi reads it only for trusted projects; "
    f"{TRUST_ENV}=1 does the same).",
)


def _load_for_command(settings: str | None, trust_project: bool) -> Config:
    try:
        config, _ = load(settings, trust_project)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    report_warnings(config)
    for path in config.untrusted_project_files:
        click.echo(f"{MESSAGE_PREFIX} {untrusted_note(path, _TRUST_BY_FLAG_OR_ENV)}", err=True)
    return config


@click.group(name=PREFIX)
def pi_group() -> None:
    """Pi's %name prompt snippets (pi-snippets-lsp).

    Use one as a fragment with `llm -f pi:NAME`.
    """


@pi_group.command(name="list")
@_settings_option
@_trust_option
def list_command(settings: str | None, trust_project: bool) -> None:
    """List the snippets: %name and preview, under the settings file that defines them."""
    config = _load_for_command(settings, trust_project)
    if not config.snippets:
        read = ", ".join(config.sources) or "no settings file found"
        click.echo(f"{MESSAGE_PREFIX} no snippets are configured ({read})", err=True)
        return
    width = max(len(s.name) for s in config.snippets) + len(TRIGGER)
    by_source: dict[str, list[Snippet]] = {}
    for snippet in config.snippets:
        by_source.setdefault(snippet.source, []).append(snippet)
    for number, (source, snippets) in enumerate(by_source.items()):
        if number:
            click.echo("")
        click.echo(source)
        for snippet in snippets:
            click.echo(f"  {(TRIGGER + snippet.name).ljust(width)}  {snippet.preview}")


@pi_group.command(name="expand")
@click.argument("text", required=False)
@_settings_option
@_trust_option
def expand_command(text: str | None, settings: str | None, trust_project: bool) -> None:
    """Print TEXT (or stdin) with its %name markers expanded, as Pi expands a prompt.

    Unknown markers stay as typed and %%name gives a literal %name. Use the result as a
    prompt: llm "$(llm pi expand '%review the diff')".
    """
    config = _load_for_command(settings, trust_project)
    if text is None:
        text = sys.stdin.read()
    result = expand(text, config.values).text
    click.echo(result, nl=not result.endswith("\n"))


@llm.hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(pi_group)
