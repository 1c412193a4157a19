"""``SnippetCompleter`` and ``SnippetPromptSession`` in a real prompt_toolkit session.

Keys go in through ``create_pipe_input`` (parsed by prompt_toolkit's own VT100 parser),
the screen goes to ``DummyOutput``; completion runs the real async machinery of a
``PromptSession`` (``complete_while_typing``, Tab, Enter). Every session test runs twice:
with the in-process backend and with a real server behind a ``SnippetsClient``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from pi_snippets_lsp.core.completion import Suggestions
from prompt_toolkit.completion import (
    CompleteEvent,
    Completion,
    WordCompleter,
    merge_completers,
)
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from pi_snippets_lsp import complete, expand, load_config
from pi_snippets_lsp.client import SnippetsClient
from pi_snippets_lsp.integrations.backend import Backend, backend_for
from pi_snippets_lsp.integrations.prompt_toolkit import (
    SnippetCompleter,
    SnippetPromptSession,
)

from .conftest import SNIPPETS, TIMEOUT, USE_MCP, write_settings

REPO = Path(__file__).resolve().parents[2]
TAB = "\t"
ENTER = "\r"
LEFT = "\x1b[D"


class Spy:
    """A backend that remembers every text it answered a completion for."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.answered: list[str] = []

    def complete(self, text_before_cursor: str) -> Suggestions | None:
        result = self.inner.complete(text_before_cursor)
        self.answered.append(text_before_cursor)
        return result

    def expand(self, text: str) -> str:
        return self.inner.expand(text)

    def warnings(self) -> tuple[str, ...]:
        return self.inner.warnings()


@dataclass
class Frontend:
    """A completer over one backend kind, and how to wait for a settings edit."""

    kind: str
    spy: Spy
    completer: SnippetCompleter
    client: SnippetsClient | None

    @contextlib.contextmanager
    def editing(self) -> Iterator[None]:
        """Edit the settings inside; on leaving, the backend has seen the edit.

        In-process the next call looks at the files itself; a server polls them
        (every 0.05 s here), so wait for its next load.
        """
        loads = self.client.load_count if self.client is not None else 0
        yield
        if self.client is not None:
            self.client.wait_for_load(loads + 1, timeout=TIMEOUT)


@pytest.fixture(params=["in-process", "client"])
def frontend(request: pytest.FixtureRequest, home: Path) -> Iterator[Frontend]:
    client = None
    if request.param == "client":
        client = SnippetsClient.start(
            env={"PI_CODING_AGENT_DIR": str(home)},
            init_options={"pollInterval": 0.05},
            timeout=TIMEOUT,
        )
    try:
        spy = Spy(backend_for(client))
        yield Frontend(request.param, spy, SnippetCompleter(spy), client)
    finally:
        if client is not None:
            client.close()


async def until(condition: Callable[[], object], what: str) -> None:
    """Wait for ``condition`` (a hang guard, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def offered(session: SnippetPromptSession, text: str, count: int) -> list[Completion]:
    """The completions the session shows for ``text`` once all ``count`` arrived."""
    buffer = session.default_buffer

    def ready() -> bool:
        state = buffer.complete_state
        return (
            state is not None
            and state.original_document.text == text
            and len(state.completions) == count
        )

    await until(ready, f"{count} completions for {text!r}")
    state = buffer.complete_state
    assert state is not None
    return list(state.completions)


def shown(completions: list[Completion]) -> list[tuple[str, str, str, int]]:
    return [(c.text, c.display_text, c.display_meta_text, c.start_position) for c in completions]


def session_for(frontend: Frontend, pipe: PipeInput) -> SnippetPromptSession:
    return SnippetPromptSession("> ", snippets=frontend.completer, input=pipe, output=DummyOutput())


async def test_type_accept_first_completion_submit(frontend: Frontend) -> None:
    with create_pipe_input() as pipe:
        session = session_for(frontend, pipe)
        answer = asyncio.create_task(session.prompt_async())
        pipe.send_text("please %us")

        completions = await offered(session, "please %us", 3)
        # Pi's order (not the settings' A-Z), the preview as meta, the token replaced.
        assert shown(completions) == [
            ("%use-mcp", "%use-mcp", USE_MCP, -3),
            ("%focus", "%focus", "Focus on the failing test first.", -3),
            ("%status", "%status", "Report the status in one line.", -3),
        ]
        api = complete("please %us", load_config())
        assert api is not None
        assert [(c.display_text, c.display_meta_text) for c in completions] == [
            (item.label, item.preview) for item in api.items
        ]

        pipe.send_text(TAB)
        await until(lambda: session.default_buffer.text == "please %use-mcp", "the accept")
        pipe.send_text(ENTER)
        assert await asyncio.wait_for(answer, TIMEOUT) == f"please {USE_MCP}"
    # The history keeps what was typed, so recalling it shows the marker.
    assert list(session.history.get_strings()) == ["please %use-mcp"]


async def test_expand_on_completion_replaces_exactly_the_token(
    frontend: Frontend, home: Path
) -> None:
    with frontend.editing():
        write_settings(home / "settings.json", {"snippets": SNIPPETS, "expandOnCompletion": True})
    with create_pipe_input() as pipe:
        session = session_for(frontend, pipe)
        answer = asyncio.create_task(session.prompt_async())
        pipe.send_text("please %us and more" + LEFT * len(" and more"))

        completions = await offered(session, "please %us and more", 3)
        assert shown(completions)[0] == (USE_MCP, "%use-mcp", USE_MCP, -3)

        pipe.send_text(TAB)
        expected = f"please {USE_MCP} and more"
        await until(lambda: session.default_buffer.text == expected, "the accept")
        pipe.send_text(ENTER)
        assert await asyncio.wait_for(answer, TIMEOUT) == expected


async def test_nothing_outside_a_token(frontend: Frontend) -> None:
    with create_pipe_input() as pipe:
        session = session_for(frontend, pipe)
        answer = asyncio.create_task(session.prompt_async())
        buffer = session.default_buffer
        pipe.send_text("x%us")
        await until(lambda: "x%us" in frontend.spy.answered, "the completer to answer")
        # prompt_toolkit holds a completion state from the moment it asks until it has
        # the answer, and drops it only when the answer holds no completion.
        await until(lambda: buffer.complete_state is None, "an empty answer")
        assert buffer.text == "x%us"
        pipe.send_text(ENTER)
        assert await asyncio.wait_for(answer, TIMEOUT) == "x%us"

    for text in ("x%us", "git log --format=%h", "no token", "%us "):
        assert list(frontend.completer.get_completions(Document(text), CompleteEvent())) == []


async def test_settings_edit_between_two_prompts_is_seen(frontend: Frontend, home: Path) -> None:
    with create_pipe_input() as pipe:
        session = session_for(frontend, pipe)

        answer = asyncio.create_task(session.prompt_async())
        pipe.send_text("%us")
        await offered(session, "%us", 3)
        pipe.send_text(TAB + ENTER)
        assert await asyncio.wait_for(answer, TIMEOUT) == USE_MCP

        with frontend.editing():
            write_settings(
                home / "settings.json",
                {"snippets": {"use-mcp": "Use the new tools.", "plus": "Add one more test."}},
            )

        answer = asyncio.create_task(session.prompt_async())
        pipe.send_text("%us")
        completions = await offered(session, "%us", 2)
        assert shown(completions) == [
            ("%use-mcp", "%use-mcp", "Use the new tools.", -3),
            ("%plus", "%plus", "Add one more test.", -3),
        ]
        pipe.send_text(TAB + ENTER)
        assert await asyncio.wait_for(answer, TIMEOUT) == "Use the new tools."


async def test_the_whole_buffer_is_expanded_on_submit(frontend: Frontend) -> None:
    typed = "%review this\n(%focus) x%status %%status %nope"
    with create_pipe_input() as pipe:
        session = session_for(frontend, pipe)
        answer = asyncio.create_task(session.prompt_async(default=typed))
        pipe.send_text(ENTER)
        received = await asyncio.wait_for(answer, TIMEOUT)
    assert received == (f"{SNIPPETS['review']} this\n({SNIPPETS['focus']}) x%status %status %nope")
    assert received == expand(typed, load_config()).text  # snippets/expand's rules


async def test_a_server_that_died_sends_nothing_and_keeps_the_text(home: Path) -> None:
    client = SnippetsClient.start(
        env={"PI_CODING_AGENT_DIR": str(home)}, init_options={"pollInterval": 0}, timeout=TIMEOUT
    )
    try:
        assert client.process is not None
        client.process.kill()
        client.process.wait(TIMEOUT)
        with create_pipe_input() as pipe:
            session = SnippetPromptSession(
                snippets=SnippetCompleter(client), input=pipe, output=DummyOutput()
            )
            answer = asyncio.create_task(session.prompt_async())
            pipe.send_text("%review" + ENTER)
            buffer = session.default_buffer
            await until(lambda: buffer.validation_error is not None, "the error")
            assert buffer.validation_error is not None
            assert "not sent" in buffer.validation_error.message
            assert buffer.text == "%review"
            assert not answer.done()
            # (Ctrl-C would raise KeyboardInterrupt through the event loop itself.)
            session.app.exit(result="closed by the test")
            assert await asyncio.wait_for(answer, TIMEOUT) == "closed by the test"
    finally:
        client.close()


def test_merged_with_another_completer_each_answers_its_own_text(home: Path) -> None:
    snippets = SnippetCompleter()  # no arguments: the user's settings
    merged = merge_completers([snippets, WordCompleter(["alpha", "usage"])])

    def texts(text: str) -> list[str]:
        return [c.text for c in merged.get_completions(Document(text), CompleteEvent())]

    assert texts("al") == ["alpha"]
    assert texts("x%us") == ["usage"]  # not a snippet token: only the other completer
    assert texts("please %us") == ["%use-mcp", "%focus", "%status", "usage"]


async def test_async_completion_matches_sync(home: Path) -> None:
    snippets = SnippetCompleter()
    document = Document("see (%st")
    sync = shown(list(snippets.get_completions(document, CompleteEvent())))
    asynchronous = shown(
        [c async for c in snippets.get_completions_async(document, CompleteEvent())]
    )
    assert sync == asynchronous == [("%status", "%status", "Report the status in one line.", -3)]


def test_defaults_read_the_user_settings(home: Path) -> None:
    session = SnippetPromptSession(output=DummyOutput())
    assert isinstance(session.completer, SnippetCompleter)
    assert session.snippets.expand("%focus") == SNIPPETS["focus"]
    assert session.snippets.warnings() == ()


def test_settings_arguments_only_for_in_process(home: Path, tmp_path: Path) -> None:
    other = write_settings(tmp_path / "other.json", {"snippets": {"brief": "Be brief."}})
    assert SnippetCompleter(settings=other).expand("%brief %focus") == "Be brief. %focus"
    assert SnippetCompleter(options={"snippets": {"x1": "one"}}).expand("%x1") == "one"
    with pytest.raises(TypeError, match="in-process"):
        SnippetCompleter(SnippetCompleter().backend, settings=other)
    with pytest.raises(TypeError, match="SnippetsClient or a Backend"):
        SnippetCompleter("settings.json")  # type: ignore[arg-type]


def test_warnings_are_the_servers(home: Path) -> None:
    (home / "settings.json").write_text(
        json.dumps({"piSimpleSnippets": {"snippets": {"Bad": "x", "ok": "fine"}}}),
        encoding="utf-8",
    )
    assert SnippetCompleter().warnings() == load_config().warnings
    assert SnippetCompleter().warnings() != ()


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "prompt_toolkit_repl", REPO / "examples" / "prompt_toolkit_repl.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("server", [False, True])
def test_example_repl(home: Path, server: bool, capsys: pytest.CaptureFixture[str]) -> None:
    example = _example()
    args = ["--settings", str(REPO / "examples" / "settings.json")]
    if server:
        args.append("--server")
    with create_pipe_input() as pipe:
        pipe.send_text("please %use-mcp" + ENTER)
        pipe.send_text("\x04")  # Ctrl-D: the end
        assert example.main(args, input=pipe, output=DummyOutput()) == 0
    out = capsys.readouterr().out
    assert "agent received:\nplease Use your MCP tools to find the information\n" in out
