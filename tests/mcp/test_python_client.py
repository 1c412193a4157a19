"""The server driven by the official Python SDK's ``Client`` over stdio, in both eras.

``legacy``: the ``initialize`` handshake (2025-11-25, what today's agents speak);
``auto``: the client discovers 2026-07-28 and uses it (per-request envelope,
``subscriptions/listen``). docs/mcp.md is the surface checked here.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from mcp import Client

from .conftest import PATIENCE, SNIPPETS, Setup, settings_text

MODES = ["legacy", "auto"]
VERSIONS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


class Inbox:
    """Server notifications as they arrive (the handshake era's ``message_handler``)."""

    def __init__(self) -> None:
        self.items: list[types.ServerNotification] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: object) -> None:
        if isinstance(message, Exception):
            return
        self.items.append(message)  # type: ignore[arg-type]
        self._arrived.set()
        self._arrived = anyio.Event()

    def of(self, kind: type[Any]) -> list[Any]:
        return [item for item in self.items if isinstance(item, kind)]

    def logs(self) -> list[types.LoggingMessageNotificationParams]:
        return [item.params for item in self.of(types.LoggingMessageNotification)]

    async def wait_for(self, kind: type[Any], count: int = 1) -> list[Any]:
        with anyio.fail_after(PATIENCE):
            while len(self.of(kind)) < count:
                await self._arrived.wait()
        return self.of(kind)


@contextlib.asynccontextmanager
async def connect(
    setup: Setup,
    mode: str,
    *extra: str,
    settings: Path | None = None,
    cwd: Path | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    command = setup.command(*extra, settings=settings)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=setup.env, cwd=cwd or setup.root / "work"
    )
    with anyio.fail_after(PATIENCE * 3):
        async with Client(params, mode=mode, read_timeout_seconds=PATIENCE, **options) as client:
            yield client


def prompt_text(result: types.GetPromptResult) -> str:
    (message,) = result.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    return message.content.text


# --------------------------------------------------------------------------- the surface


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_resources_tools_and_completion(setup: Setup, mode: str) -> None:
    async with connect(setup, mode) as client:
        assert client.protocol_version == VERSIONS[mode]
        info = client.server_info
        assert info is not None and info.name == "pi-snippets"
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None and capabilities.prompts.list_changed
        assert capabilities.resources is not None and capabilities.resources.list_changed
        assert capabilities.completions is not None

        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == sorted(SNIPPETS)
        review = prompts[2]
        assert (review.title, review.description) == (
            "%review",
            "Review this code. List the bugs first.",
        )
        assert review.arguments is not None
        assert [(a.name, a.required) for a in review.arguments] == [("text", False)]

        result = await client.get_prompt("review", {"text": "then %brief, %%brief"})
        assert prompt_text(result) == (
            SNIPPETS["review"] + "\n\nthen " + SNIPPETS["brief"] + ", %brief"
        )
        assert prompt_text(await client.get_prompt("refactor")) == SNIPPETS["refactor"]

        resources = (await client.list_resources()).resources
        assert [(r.uri, r.mime_type) for r in resources] == [
            (f"snippet://{n}", "text/plain") for n in sorted(SNIPPETS)
        ]
        (template,) = (await client.list_resource_templates()).resource_templates
        assert template.uri_template == "snippet://{name}"
        (content,) = (await client.read_resource("snippet://review")).contents
        assert isinstance(content, types.TextResourceContents)
        assert content.text == SNIPPETS["review"]

        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert sorted(tools) == ["expand_snippets", "get_snippet", "list_snippets"]
        for tool in tools.values():
            assert tool.annotations is not None and tool.annotations.read_only_hint is True
            assert tool.output_schema is not None
        called = await client.call_tool("expand_snippets", {"text": "%brief!"})
        assert called.structured_content == {"text": SNIPPETS["brief"] + "!", "changed": True}
        assert called.content == [types.TextContent(type="text", text=SNIPPETS["brief"] + "!")]
        listed = await client.call_tool("list_snippets", {})
        assert [s["name"] for s in listed.structured_content["snippets"]] == sorted(SNIPPETS)
        got = await client.call_tool("get_snippet", {"name": "review"})
        assert got.structured_content["value"] == SNIPPETS["review"]

        completion = await client.complete(
            types.PromptReference(name="review"), {"name": "text", "value": "see %re"}
        )
        assert completion.completion.values == ["see %refactor", "see %review", "see %brief"]
        completion = await client.complete(
            types.ResourceTemplateReference(uri="snippet://{name}"),
            {"name": "name", "value": "rev"},
        )
        assert completion.completion.values == ["review"]


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_names_are_invalid_params_naming_the_closest(setup: Setup, mode: str) -> None:
    async with connect(setup, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("revew")
        assert caught.value.error.code == -32602
        assert caught.value.error.message == 'unknown snippet "revew"; closest: review'
        with pytest.raises(MCPError) as caught:
            await client.read_resource("snippet://brif")
        assert caught.value.error.code == -32602
        assert caught.value.error.message == 'unknown snippet "brif"; closest: brief'
        with pytest.raises(MCPError) as caught:
            await client.call_tool("rm_rf", {})
        assert caught.value.error.code == -32602
        bad = await client.call_tool("get_snippet", {"name": "revew"})
        assert bad.is_error
        # Still serving.
        assert len((await client.list_prompts()).prompts) == 3


# --------------------------------------------------------------------------- live


async def test_a_save_sends_list_changed_and_the_next_list_has_it_handshake(setup: Setup) -> None:
    inbox = Inbox()
    async with connect(setup, "legacy", message_handler=inbox) as client:
        assert len((await client.list_prompts()).prompts) == 3
        setup.write({**SNIPPETS, "added": "A new one"})
        await inbox.wait_for(types.PromptListChangedNotification)
        await inbox.wait_for(types.ResourceListChangedNotification)
        assert [p.name for p in (await client.list_prompts()).prompts] == [
            "added",
            "brief",
            "refactor",
            "review",
        ]
        assert len((await client.list_resources()).resources) == 4


async def test_a_save_reaches_a_listen_stream_2026(setup: Setup) -> None:
    async with connect(setup, "auto") as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(prompts_list_changed=True, resources_list_changed=True) as events:
            setup.write({"only": "One left"})
            seen: set[str] = set()
            with anyio.fail_after(PATIENCE):
                async for event in events:
                    seen.add(type(event).__name__)
                    if seen >= {"PromptsListChanged", "ResourcesListChanged"}:
                        break
        assert [p.name for p in (await client.list_prompts()).prompts] == ["only"]


async def test_a_save_that_changes_nothing_announces_nothing(setup: Setup) -> None:
    inbox = Inbox()
    async with connect(setup, "legacy", message_handler=inbox) as client:
        setup.write(SNIPPETS)  # a new file, the same snippets
        setup.write({**SNIPPETS, "x": "X"})
        await inbox.wait_for(types.PromptListChangedNotification)
        assert len(inbox.of(types.PromptListChangedNotification)) == 1
        assert len((await client.list_prompts()).prompts) == 4


# --------------------------------------------------------------------------- warnings


async def test_one_warning_message_per_load_with_problems_handshake(setup: Setup) -> None:
    setup.write({**SNIPPETS, "Bad Name": "x", "empty": ""})
    inbox = Inbox()
    async with connect(setup, "legacy", message_handler=inbox) as client:
        (first,) = await inbox.wait_for(types.LoggingMessageNotification)
        assert first.params.level == "warning"
        assert first.params.logger == "pi-simple-snippets"
        assert first.params.data == (
            'pi-simple-snippets: ignored 2 snippet entries: "Bad Name" (invalid name), '
            '"empty" (value must be a non-empty string)'
        )
        listed = await client.call_tool("list_snippets", {})
        assert listed.structured_content["warnings"] == [first.params.data.split(": ", 1)[1]]
        setup.write({"ok": "fine"}, shortcut="nope")
        logs = await inbox.wait_for(types.LoggingMessageNotification, 2)
        assert '`shortcut` "nope"' in logs[1].params.data
        setup.write({"ok": "fine", "more": "fine"})
        await inbox.wait_for(types.PromptListChangedNotification, 2)
        assert len(inbox.of(types.LoggingMessageNotification)) == 2  # a clean load says nothing


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_set_level_above_warning_silences_the_warnings(setup: Setup) -> None:
    inbox = Inbox()
    async with connect(setup, "legacy", message_handler=inbox) as client:
        await client.set_logging_level("error")
        setup.write({"Bad Name": "x", "ok": "y"})
        await inbox.wait_for(types.PromptListChangedNotification)
        await client.list_prompts()
        assert inbox.of(types.LoggingMessageNotification) == []


async def test_the_warning_rides_a_request_that_asked_for_it_2026(setup: Setup) -> None:
    setup.write({**SNIPPETS, "Bad Name": "x"})
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with connect(setup, "auto", logging_callback=on_log, log_level="warning") as client:
        await client.list_prompts()
        await client.list_prompts()
    assert [(log.level, log.logger) for log in logs] == [("warning", "pi-simple-snippets")]
    assert '"Bad Name" (invalid name)' in logs[0].data


# --------------------------------------------------------------------------- trust


def project_with(folder: Path, snippets: dict[str, str]) -> Path:
    (folder / ".pi").mkdir(parents=True)
    (folder / ".pi" / "settings.json").write_text(settings_text(snippets), encoding="utf-8")
    return folder


async def test_an_untrusted_project_is_noted_never_read(setup: Setup) -> None:
    project = project_with(setup.root / "proj", {"secret": "from the project"})
    inbox = Inbox()
    async with connect(setup, "legacy", "--project", str(project), message_handler=inbox) as client:
        assert "secret" not in [p.name for p in (await client.list_prompts()).prompts]
        (note,) = await inbox.wait_for(types.LoggingMessageNotification)
        assert note.params.level == "info"
        assert "skipped project settings" in note.params.data


async def test_a_trusted_project_is_read(setup: Setup) -> None:
    project = project_with(setup.root / "proj", {"local": "from the project"})
    async with connect(setup, "auto", "--project", str(project), "--trust-project") as client:
        assert "local" in [p.name for p in (await client.list_prompts()).prompts]


@pytest.mark.parametrize("trusted", [True, False])
async def test_the_clients_root_is_the_project_only_when_trusted(
    setup: Setup, trusted: bool
) -> None:
    project = project_with(setup.root / "rooted", {"rooted": "from the root"})
    asked: list[bool] = []

    async def roots(context: object) -> types.ListRootsResult:
        asked.append(True)
        return types.ListRootsResult(roots=[types.Root(uri=project.as_uri(), name="rooted")])

    inbox = Inbox()
    extra = ["--trust-project"] if trusted else []
    async with connect(
        setup, "legacy", *extra, list_roots_callback=roots, message_handler=inbox
    ) as client:
        if trusted:
            await inbox.wait_for(types.PromptListChangedNotification)
            assert "rooted" in [p.name for p in (await client.list_prompts()).prompts]
        else:
            await client.list_prompts()
            assert "rooted" not in [p.name for p in (await client.list_prompts()).prompts]
    assert bool(asked) is trusted
