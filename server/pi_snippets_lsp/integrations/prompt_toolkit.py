"""Pi's ``%name`` snippets in a prompt_toolkit input: a completer and a submit hook.

docs/agent-frontends.md, "prompt_toolkit". Needs the optional extra
``pip install 'pi-snippets-lsp[prompt-toolkit]'``. Three lines give a frontend the popup
and the expansion::

    from pi_snippets_lsp.integrations.prompt_toolkit import SnippetPromptSession

    session = SnippetPromptSession("> ")
    prompt = session.prompt()        # what the user typed, every %name expanded

Rules (the server's, through a ``Backend``; nothing is re-implemented here):

- ``SnippetCompleter`` offers the snippets for the ``%`` token that ends the text before
  the cursor, in Pi's order, each shown as ``%name`` with its one-line preview as
  ``display_meta``. Accepting one replaces exactly the token (``%`` to the cursor) with
  the marker or, with ``expandOnCompletion``, the snippet's text. Outside a token
  (``x%name``, ``git log --format=%h``, no ``%`` at all) and with no snippets it offers
  nothing, so other completers merged with ``merge_completers`` keep working.
- ``expand_on_submit`` (which ``SnippetPromptSession`` installs) expands the whole buffer
  with ``snippets/expand``'s rules when it is accepted: the frontend receives the
  expanded prompt, the history keeps what was typed. If the expansion cannot be had (a
  server that exited), nothing is sent: the text stays in the input with the error under
  it.
- Live reload: the in-process backend reads the settings again when a file changed,
  checked at each completion and submit; a server watches its files itself.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterable, Mapping
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.shortcuts import PromptSession
from prompt_toolkit.validation import ValidationError

from pi_snippets_lsp.client import SnippetsClient, SnippetsClientError
from pi_snippets_lsp.core.completion import Suggestions
from pi_snippets_lsp.integrations.backend import Backend, backend_for

__all__ = ["SnippetCompleter", "SnippetPromptSession", "completions", "expand_on_submit"]


def completions(text_before_cursor: str, suggestions: Suggestions | None) -> list[Completion]:
    """The prompt_toolkit entries for a popup: ``%name``, its preview, what it inserts.

    ``start_position`` is relative to the cursor (prompt_toolkit's convention), so it is
    minus the length of the replaced token: ``replace_start`` is a code-point index of
    the text before the cursor, and so is the cursor.
    """
    if suggestions is None:
        return []
    start = suggestions.replace_start - len(text_before_cursor)
    return [
        Completion(
            item.insert_text,
            start_position=start,
            display=item.label,
            display_meta=item.preview,
        )
        for item in suggestions.items
    ]


class SnippetCompleter(Completer):
    """A prompt_toolkit ``Completer`` for Pi's ``%name`` snippets.

    ``SnippetCompleter()`` reads the user's settings as the server reads them
    (``$PI_CODING_AGENT_DIR/settings.json`` or ``~/.pi/agent/settings.json``), in this
    process; ``settings``, ``project``, ``trust_project`` and ``options`` are
    ``load_config``'s. ``SnippetCompleter(client)`` asks a running server through a
    ``SnippetsClient`` instead (the frontend starts and closes it); any ``Backend`` works.

    prompt_toolkit asks through ``get_completions_async``, which runs the backend in a
    worker thread, so a slow server never freezes the input.
    """

    def __init__(
        self,
        source: Backend | SnippetsClient | None = None,
        *,
        settings: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | None = None,
        trust_project: bool = False,
        options: Mapping[str, object] | None = None,
    ) -> None:
        self.backend = backend_for(
            source, settings=settings, project=project, trust_project=trust_project, options=options
        )

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        return completions(before, self.backend.complete(before))

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        before = document.text_before_cursor
        suggestions = await asyncio.to_thread(self.backend.complete, before)
        for completion in completions(before, suggestions):
            yield completion

    def expand(self, text: str) -> str:
        """The submitted ``text`` with every ``%name`` marker expanded (``snippets/expand``).

        Raises ``SnippetsClientError`` when a server backend cannot answer.
        """
        return self.backend.expand(text)

    def warnings(self) -> tuple[str, ...]:
        """The problems of the current configuration, for the frontend to show."""
        return self.backend.warnings()


def expand_on_submit(session: PromptSession[str], snippets: SnippetCompleter) -> None:
    """Make ``session.prompt()`` return the accepted text with its markers expanded.

    Replaces the accept handler of the session's input buffer; validation and history
    run as before (the history keeps the markers as typed, so recalling a prompt shows
    ``%review``, not its text). When the expansion fails the prompt is not accepted: the
    text stays, and the error shows in the session's validation toolbar.
    """

    def accept(buffer: Buffer) -> bool:
        try:
            text = snippets.expand(buffer.text)
        except SnippetsClientError as error:
            buffer.validation_error = ValidationError(
                cursor_position=buffer.cursor_position,
                message=f"pi-snippets: not sent, the %markers could not be expanded: {error}",
            )
            return True  # keep the text
        session.app.exit(result=text, style="class:accepted")
        return True  # keep the text: the session resets the buffer itself

    session.default_buffer.accept_handler = accept


class SnippetPromptSession(PromptSession[str]):
    """A ``PromptSession`` with the snippet completer and expansion on submit.

    ``snippets`` is the ``SnippetCompleter`` (default: ``SnippetCompleter()``, the user's
    settings in-process); ``completer`` defaults to it; pass
    ``merge_completers([snippets, other])`` to keep another completer. Every other
    argument is ``PromptSession``'s. ``prompt()`` and ``prompt_async()`` return the
    expanded text.
    """

    def __init__(
        self,
        message: AnyFormattedText = "",
        *,
        snippets: SnippetCompleter | None = None,
        completer: Completer | None = None,
        **kwargs: Any,
    ) -> None:
        self.snippets = snippets if snippets is not None else SnippetCompleter()
        super().__init__(
            message, completer=completer if completer is not None else self.snippets, **kwargs
        )
        expand_on_submit(self, self.snippets)
