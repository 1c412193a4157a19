"""Where an integration gets its snippets: in this process, or from a running server.

docs/agent-frontends.md, "prompt_toolkit". A frontend picks one; the integration asks it
for the completion at the cursor and for the expansion of a submitted prompt, and never
applies a snippet rule itself:

- ``InProcessBackend`` calls the in-process API (``complete``, ``expand``) on a live
  generation of the settings ``load_config`` reads (``settings.live``, the server's
  reload rules): each call looks at the files' stamps (a ``stat`` per file, no thread)
  and reads them again when one changed, or when the last read of one failed.
- ``ClientBackend`` sends the server's requests through a ``SnippetsClient``
  (``textDocument/completion``, ``snippets/expand``); the server watches the settings
  files itself, so a change reaches the next call with no help from here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from pi_snippets_lsp.client import SnippetsClient, SnippetsClientError
from pi_snippets_lsp.core.completion import Suggestions, suggest
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.expansion import expand
from pi_snippets_lsp.settings.layers import SettingsFiles, load_request
from pi_snippets_lsp.settings.layers import load_config as load_request_config
from pi_snippets_lsp.settings.live import ONLY, LiveSettings

log = logging.getLogger(__name__)

__all__ = ["Backend", "ClientBackend", "InProcessBackend", "backend_for"]


@runtime_checkable
class Backend(Protocol):
    """What an integration needs: the popup at the cursor, and a submitted prompt expanded."""

    def complete(self, text_before_cursor: str) -> Suggestions | None:
        """``textDocument/completion`` for the text before the cursor (None: no token)."""
        ...

    def expand(self, text: str) -> str:
        """``snippets/expand``: ``text`` with its ``%name`` markers expanded."""
        ...

    def warnings(self) -> tuple[str, ...]:
        """The problems of the current configuration, worded as the server words them."""
        ...


class InProcessBackend:
    """The in-process API over the settings ``load_config`` reads, reloaded on change.

    The arguments are ``load_config``'s: the user file (``settings``, else
    ``$PI_CODING_AGENT_DIR/settings.json``, else ``~/.pi/agent/settings.json``), the
    project's ``.pi/settings.json`` only when ``trust_project``, then ``options``.
    Safe to call from several threads (a completer may run in a worker thread).
    """

    def __init__(
        self,
        *,
        settings: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | None = None,
        trust_project: bool = False,
        options: Mapping[str, object] | None = None,
    ) -> None:
        self.request = load_request(
            settings=settings, project=project, trust_project=trust_project, options=options
        )
        self.live = LiveSettings(self._load, lambda: self.request.files)

    def _load(self, files: SettingsFiles) -> dict[str | None, Config]:
        return {ONLY: load_request_config(self.request, files)}

    @property
    def loads(self) -> int:
        """How many times the configuration was read (the first read included)."""
        return self.live.number

    @property
    def config(self) -> Config:
        """The current generation, read again first if a settings file changed on disk."""
        self.live.refresh()
        return self.live.config(ONLY)

    def complete(self, text_before_cursor: str) -> Suggestions | None:
        return suggest(text_before_cursor, self.config)

    def expand(self, text: str) -> str:
        return expand(text, self.config.values).text

    def warnings(self) -> tuple[str, ...]:
        return self.config.warnings


class ClientBackend:
    """A running server, through a ``SnippetsClient`` the frontend started and closes.

    ``uri`` is the in-memory document completion uses (default: the client's). A
    completion the server cannot answer (it exited, it timed out) is no completion,
    logged; an expansion it cannot answer raises ``SnippetsClientError``, so a caller
    never sends a prompt whose markers were silently left unexpanded.
    """

    def __init__(self, client: SnippetsClient, *, uri: str | None = None) -> None:
        self.client = client
        self.uri = uri

    def complete(self, text_before_cursor: str) -> Suggestions | None:
        try:
            return self.client.complete(text_before_cursor, uri=self.uri)
        except SnippetsClientError as error:
            log.info("pi-snippets: no completion from the server: %s", error)
            return None

    def expand(self, text: str) -> str:
        return self.client.expand(text, self.uri).text

    def warnings(self) -> tuple[str, ...]:
        return self.client.list(self.uri).warnings


def backend_for(
    source: Backend | SnippetsClient | None,
    *,
    settings: str | os.PathLike[str] | None = None,
    project: str | os.PathLike[str] | None = None,
    trust_project: bool = False,
    options: Mapping[str, object] | None = None,
) -> Backend:
    """The backend for what a frontend passed: nothing (in-process, with ``load_config``'s
    arguments), a ``SnippetsClient``, or a ``Backend`` of its own.

    The ``load_config`` arguments only make sense for the in-process backend; given with
    anything else they are a ``TypeError``, not silently ignored.
    """
    if source is None:
        return InProcessBackend(
            settings=settings, project=project, trust_project=trust_project, options=options
        )
    if settings is not None or project is not None or trust_project or options is not None:
        raise TypeError(
            "settings, project, trust_project and options configure the in-process "
            "backend; a SnippetsClient or a Backend brings its own configuration"
        )
    if isinstance(source, SnippetsClient):
        return ClientBackend(source)
    if isinstance(source, Backend):
        return source
    raise TypeError(f"expected a SnippetsClient or a Backend, not {type(source).__name__}")
