"""The tools that change the snippets (docs/mcp.md, "Writing snippets"), driven by the
official Python SDK's ``Client`` against the real server, in both eras: ``legacy``
(2025-11-25: the server sends ``elicitation/create``) and ``auto`` (2026-07-28: the
server answers ``input_required`` and the client retries with the user's answer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from pi_snippets_lsp.mcp import writes
from pi_snippets_lsp.mcp.write_tools import DELETE_TOOL, RENAME_TOOL, SAVE_TOOL, WRITE_TOOLS

from .conftest import SNIPPETS, Setup
from .test_hostile import Raw
from .test_python_client import MODES, Inbox, connect, project_with

WRITES = "--allow-writes"
#: A user file as a person writes it: CRLF, four-space indent, another key first.
PRETTY = (
    '{\r\n    "theme": "dark",\r\n    "piSimpleSnippets": {\r\n        "snippets": {\r\n'
    '            "review": "Review this code.",\r\n            "brief": "Be brief."\r\n'
    "        }\r\n    }\r\n}\r\n"
)


class Asker:
    """An elicitation callback: answers every question with ``action`` (and ``confirm``
    when accepting), and keeps what it was asked."""

    def __init__(self, action: str = "accept", confirm: bool = True) -> None:
        self.action = action
        self.confirm = confirm
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: object, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params)
        content = {"confirm": self.confirm} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


def pretty(setup: Setup) -> bytes:
    setup.settings.write_bytes(PRETTY.encode())
    return PRETTY.encode()


def snippets_in(path: Path) -> dict[str, str]:
    table = json.loads(path.read_text(encoding="utf-8"))["piSimpleSnippets"]["snippets"]
    assert isinstance(table, dict)
    return table


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


# --------------------------------------------------------------------------- the flag


@pytest.mark.parametrize("mode", MODES)
async def test_without_the_flag_the_tools_are_absent_and_refused(setup: Setup, mode: str) -> None:
    before = setup.settings.read_bytes()
    async with connect(setup, mode, elicitation_callback=Asker()) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert not set(names) & set(WRITE_TOOLS)
        for name, arguments in [
            (DELETE_TOOL, {"name": "brief"}),
            (SAVE_TOOL, {"name": "x", "text": "X"}),
            (RENAME_TOOL, {"name": "brief", "new_name": "short"}),
        ]:
            with pytest.raises(MCPError) as refused:
                await client.call_tool(name, arguments)
            assert refused.value.error.code == -32602
            assert "--allow-writes" in refused.value.error.message
    assert setup.settings.read_bytes() == before


@pytest.mark.parametrize("mode", MODES)
async def test_the_tools_are_listed_annotated(setup: Setup, mode: str) -> None:
    async with connect(setup, mode, WRITES) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(WRITE_TOOLS) < set(tools)
    hints = {}
    for name in WRITE_TOOLS:
        notes = tools[name].annotations
        assert notes is not None and notes.title and tools[name].output_schema is not None
        assert (notes.read_only_hint, notes.open_world_hint) == (False, False)
        hints[name] = (notes.destructive_hint, notes.idempotent_hint)
    assert hints == {
        SAVE_TOOL: (False, True),
        RENAME_TOOL: (True, True),
        DELETE_TOOL: (True, False),
    }


# --------------------------------------------------------------------------- confirmed


@pytest.mark.parametrize("mode", MODES)
async def test_confirmed_writes_keep_the_files_format_and_go_live(setup: Setup, mode: str) -> None:
    pretty(setup)
    asker = Asker()
    async with connect(setup, mode, WRITES, elicitation_callback=asker) as client:
        saved = await client.call_tool(SAVE_TOOL, {"name": "%tests", "text": "Add tests.\r\nNow."})
        assert not saved.is_error
        assert saved.structured_content == {"name": "tests", "source": str(setup.settings)}
        text = setup.settings.read_bytes().decode()
        assert text == PRETTY.replace(
            '"Be brief."\r\n', '"Be brief.",\r\n            "tests": "Add tests.\\nNow."\r\n'
        )
        # The answer comes after the reload: the lists have it at once.
        assert "tests" in [p.name for p in (await client.list_prompts()).prompts]

        renamed = await client.call_tool(RENAME_TOOL, {"name": "brief", "new_name": "short"})
        assert renamed.structured_content == {
            "name": "short",
            "previous": "brief",
            "source": str(setup.settings),
        }
        assert setup.settings.read_bytes().decode() == text.replace('"brief"', '"short"')

        deleted = await client.call_tool(DELETE_TOOL, {"name": "review"})
        assert deleted.structured_content == {
            "name": "review",
            "source": str(setup.settings),
            "now_from": None,
        }
        assert list(snippets_in(setup.settings)) == ["short", "tests"]
        assert [p.name for p in (await client.list_prompts()).prompts] == ["short", "tests"]
    assert [a.message.split("?")[0] for a in asker.asked] == [
        f"Save the snippet %tests in {setup.settings}",
        f"Rename the snippet %brief to %short in {setup.settings}",
        f"Delete the snippet %review from {setup.settings}",
    ]
    for asked in asker.asked:
        assert asked.mode == "form"
        schema = asked.requested_schema
        assert schema["required"] == ["confirm"]
        assert schema["properties"]["confirm"]["type"] == "boolean"


async def test_a_write_sends_list_changed_handshake(setup: Setup) -> None:
    inbox = Inbox()
    async with connect(
        setup, "legacy", WRITES, elicitation_callback=Asker(), message_handler=inbox
    ) as client:
        await client.list_prompts()
        await client.call_tool(DELETE_TOOL, {"name": "brief"})
        await inbox.wait_for(types.PromptListChangedNotification)
        await inbox.wait_for(types.ResourceListChangedNotification)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "confirm"), [("decline", False), ("cancel", False), ("accept", False)]
)
async def test_a_declined_confirmation_writes_nothing(
    setup: Setup, mode: str, action: str, confirm: bool
) -> None:
    before = setup.settings.read_bytes()
    asker = Asker(action, confirm)
    async with connect(setup, mode, WRITES, elicitation_callback=asker) as client:
        for name, arguments in [
            (DELETE_TOOL, {"name": "brief"}),
            (SAVE_TOOL, {"name": "x", "text": "X"}),
            (RENAME_TOOL, {"name": "brief", "new_name": "short"}),
        ]:
            result = await client.call_tool(name, arguments)
            assert "the user did not confirm" in error_text(result)
            assert "nothing was written" in error_text(result)
        assert len((await client.list_prompts()).prompts) == len(SNIPPETS)
    assert len(asker.asked) == 3
    assert setup.settings.read_bytes() == before


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_elicitation_gets_the_write_done(setup: Setup, mode: str) -> None:
    async with connect(setup, mode, WRITES) as client:
        result = await client.call_tool(DELETE_TOOL, {"name": "brief"})
        assert not result.is_error
    assert "brief" not in snippets_in(setup.settings)


async def test_a_forged_request_state_is_refused_2026(setup: Setup) -> None:
    before = setup.settings.read_bytes()
    async with connect(setup, "auto", WRITES, elicitation_callback=Asker()) as client:
        first = await client.session.call_tool(
            DELETE_TOOL, {"name": "brief"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None and list(first.input_requests) == ["confirm"]
        assert first.request_state
        yes = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
        for state in [first.request_state[:-1] + "0", None]:
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    DELETE_TOOL,
                    {"name": "brief"},
                    input_responses=yes,  # type: ignore[arg-type]
                    request_state=state,
                    allow_input_required=True,
                )
            assert "requestState" in refused.value.error.message
        # Made for other arguments: refused too.
        with pytest.raises(MCPError):
            await client.session.call_tool(
                DELETE_TOOL,
                {"name": "review"},
                input_responses=yes,  # type: ignore[arg-type]
                request_state=first.request_state,
                allow_input_required=True,
            )
        assert setup.settings.read_bytes() == before
        done = await client.session.call_tool(
            DELETE_TOOL,
            {"name": "brief"},
            input_responses=yes,  # type: ignore[arg-type]
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(done, types.CallToolResult) and not done.is_error
    assert "brief" not in snippets_in(setup.settings)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("mode", MODES)
async def test_bad_names_are_the_tools_errors(setup: Setup, mode: str) -> None:
    before = setup.settings.read_bytes()
    asker = Asker()
    async with connect(setup, mode, WRITES, elicitation_callback=asker) as client:
        cases = [
            (
                SAVE_TOOL,
                {"name": "Bad Name", "text": "X"},
                '"Bad Name" is not a valid snippet name',
            ),
            (SAVE_TOOL, {"name": "brief", "text": "X"}, 'a snippet named "brief" already exists'),
            (SAVE_TOOL, {"name": "x", "text": "  "}, "`text` is empty"),
            (SAVE_TOOL, {"name": "x"}, "needs a string argument `text`"),
            (RENAME_TOOL, {"name": "brief", "new_name": "review"}, "already exists"),
            (RENAME_TOOL, {"name": "brief", "new_name": "-x"}, "is not a valid snippet name"),
            (RENAME_TOOL, {"name": "brief", "new_name": "brief"}, "named brief already"),
            (RENAME_TOOL, {"name": "breif", "new_name": "b"}, 'unknown snippet "breif"; closest'),
            (DELETE_TOOL, {"name": "reveiw"}, "closest: review"),
            (DELETE_TOOL, {}, "needs a string argument `name`"),
        ]
        for name, arguments, message in cases:
            text = error_text(await client.call_tool(name, arguments))
            assert message in text, (name, arguments, text)
            assert text.startswith(f"{name}: ") and text.endswith("; nothing was written")
            assert text.count(name) == 1
    assert asker.asked == []  # refused before anyone is asked
    assert setup.settings.read_bytes() == before


@pytest.mark.parametrize("mode", MODES)
async def test_a_broken_settings_file_is_refused_and_left_as_it_is(setup: Setup, mode: str) -> None:
    async with connect(setup, mode, WRITES, elicitation_callback=Asker()) as client:
        assert len((await client.list_prompts()).prompts) == len(SNIPPETS)
        broken = b'{"piSimpleSnippets": {"snippets": {"brief": "B",}}}'
        setup.settings.write_bytes(broken)
        for name, arguments in [
            (DELETE_TOOL, {"name": "brief"}),
            (RENAME_TOOL, {"name": "brief", "new_name": "short"}),
            (SAVE_TOOL, {"name": "new", "text": "N"}),
        ]:
            text = error_text(await client.call_tool(name, arguments))
            assert f"{setup.settings} is not valid JSON (" in text
            assert "at line 1 column" in text and "fix it first" in text
        setup.settings.write_bytes(b'{"piSimpleSnippets": {"snippets": []}}')
        text = error_text(await client.call_tool(SAVE_TOOL, {"name": "new", "text": "N"}))
        assert '"piSimpleSnippets.snippets" in' in text
        assert setup.settings.read_bytes() == b'{"piSimpleSnippets": {"snippets": []}}'
        setup.settings.write_bytes(broken)
    assert setup.settings.read_bytes() == broken


# --------------------------------------------------------------------------- which file


async def test_rename_and_delete_change_the_layer_pi_takes_the_snippet_from(
    setup: Setup,
) -> None:
    project = project_with(setup.root / "proj", {"brief": "Project brief.", "local": "L"})
    project_file = project / ".pi" / "settings.json"
    user_before = setup.settings.read_bytes()
    extra = ["--project", str(project), "--trust-project", WRITES]
    async with connect(setup, "auto", *extra, elicitation_callback=Asker()) as client:
        renamed = await client.call_tool(RENAME_TOOL, {"name": "local", "new_name": "here"})
        assert renamed.structured_content["source"] == str(project_file)  # type: ignore[index]
        deleted = await client.call_tool(DELETE_TOOL, {"name": "brief"})
        assert deleted.structured_content == {
            "name": "brief",
            "source": str(project_file),
            "now_from": str(setup.settings),
        }
        (content,) = deleted.content
        assert isinstance(content, types.TextContent)
        assert f"still defined in {setup.settings}, which is used now" in content.text
        got = await client.call_tool("get_snippet", {"name": "brief"})
        assert got.structured_content["value"] == SNIPPETS["brief"]  # type: ignore[index]
        # A save goes to the user file, as save-as-snippet does.
        saved = await client.call_tool(SAVE_TOOL, {"name": "mine", "text": "M"})
        assert saved.structured_content["source"] == str(setup.settings)  # type: ignore[index]
    assert snippets_in(project_file) == {"here": "L"}
    assert snippets_in(setup.settings) == {
        **json.loads(user_before)["piSimpleSnippets"]["snippets"],
        "mine": "M",
    }


async def test_a_save_creates_a_missing_user_file(setup: Setup) -> None:
    missing = setup.root / "new" / "settings.json"
    async with connect(setup, "legacy", WRITES, settings=missing) as client:
        result = await client.call_tool(SAVE_TOOL, {"name": "first", "text": "F"})
        assert not result.is_error
        assert [p.name for p in (await client.list_prompts()).prompts] == ["first"]
    assert snippets_in(missing) == {"first": "F"}
    assert os.stat(missing).st_mode & 0o777 == 0o600


async def test_a_linked_settings_file_is_written_through_its_link(setup: Setup) -> None:
    real = setup.root / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_bytes(("\ufeff" + PRETTY).encode())
    os.chmod(real, 0o640)
    link = setup.root / "linked.json"
    link.symlink_to(real)
    async with connect(setup, "legacy", WRITES, settings=link) as client:
        result = await client.call_tool(DELETE_TOOL, {"name": "brief"})
        assert not result.is_error, result
    assert link.is_symlink()
    text = real.read_bytes().decode()
    assert text.startswith("\ufeff")  # the byte-order mark stays
    assert text[1:] == PRETTY.replace(',\r\n            "brief": "Be brief."', "")
    assert os.stat(real).st_mode & 0o777 == 0o640


async def test_a_client_that_fails_to_ask_writes_nothing_handshake(setup: Setup) -> None:
    before = setup.settings.read_bytes()

    async def fails(context: object, params: Any) -> types.ErrorData:
        return types.ErrorData(code=-32603, message="no terminal to ask in")

    async with connect(setup, "legacy", WRITES, elicitation_callback=fails) as client:
        text = error_text(await client.call_tool(DELETE_TOOL, {"name": "brief"}))
    assert "the client could not ask: no terminal to ask in" in text
    assert setup.settings.read_bytes() == before


def test_2025_06_18_is_asked_without_a_mode_on_the_wire(setup: Setup) -> None:
    raw = Raw(setup, WRITES)
    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        raw.request(1, "initialize", hello)
        assert raw.answer(1)["result"]["protocolVersion"] == "2025-06-18"  # type: ignore[index]
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        raw.request(7, "tools/call", {"name": DELETE_TOOL, "arguments": {"name": "brief"}})
        deadline = time.monotonic() + 20
        asked = []
        while not asked and time.monotonic() < deadline:
            asked = [m for m in raw.lines if m.get("method") == "elicitation/create"]
            time.sleep(0.02)
        (question,) = asked
        params = question["params"]
        assert isinstance(params, dict) and "mode" not in params
        assert params["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
        answer = {"action": "accept", "content": {"confirm": True}}
        reply = {"jsonrpc": "2.0", "id": question["id"], "result": answer}
        raw.send(json.dumps(reply).encode() + b"\n")
        result = raw.answer(7)["result"]
        assert result["isError"] is False  # type: ignore[index]
        assert "brief" not in snippets_in(setup.settings)
    finally:
        raw.close()


def test_the_server_loads_the_write_machinery_only_when_a_write_is_called() -> None:
    """Agents wait for the first answers: the path to them imports the tools' list, not
    what writes files (``writes``, the safe writer, save-as-snippet's rules)."""
    code = (
        "import sys, json, pi_snippets_lsp.mcp.server, pi_snippets_lsp.mcp.live; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(json.loads(done.stdout))
    assert "pi_snippets_lsp.mcp.write_tools" in loaded
    heavy = {
        "pi_snippets_lsp.mcp.writes",
        "pi_snippets_lsp.settings.safe_write",
        "pi_snippets_lsp.settings.save_snippet",
        "pi_snippets_lsp.settings.snippet_rename",
        "hmac",
        "secrets",
    }
    assert loaded & heavy == set()


# --------------------------------------------------------------------------- the rules, alone


def test_elicitation_is_asked_only_where_the_client_takes_forms() -> None:
    assert writes.elicits({"elicitation": {}}, "2025-06-18")
    assert writes.elicits({"elicitation": {"form": {}}}, "2025-11-25")
    assert writes.elicits({"elicitation": {"form": {}, "url": {}}}, "2026-07-28")
    assert not writes.elicits({"elicitation": {"url": {}}}, "2025-11-25")
    assert not writes.elicits({}, "2025-11-25")
    assert not writes.elicits({"elicitation": True}, "2025-11-25")
    assert not writes.elicits(None, "2026-07-28")
    # Revisions before elicitation existed.
    assert not writes.elicits({"elicitation": {}}, "2025-03-26")
    assert not writes.elicits({"elicitation": {}}, "2024-11-05")


def test_the_question_names_its_mode_where_the_revision_has_modes(tmp_path: Path) -> None:
    change = writes.Change(DELETE_TOOL, "brief", tmp_path / "s.json", b"", "", "Delete?")
    assert "mode" not in writes.elicit_params(change, "2025-06-18")
    for version in ("2025-11-25", "2026-07-28"):
        params = writes.elicit_params(change, version)
        assert params["mode"] == "form" and params["message"] == "Delete?"


def test_only_an_accepted_ticked_form_confirms() -> None:
    assert writes.confirmed({"action": "accept", "content": {"confirm": True}}) is None
    assert writes.confirmed({"action": "accept", "content": {"confirm": "true"}})
    assert writes.confirmed({"action": "accept"})
    assert writes.confirmed({"action": "decline"}) == "decline"
    assert writes.confirmed({}) == "no answer"
    assert writes.confirmed(None) == "no answer"


def test_a_request_state_holds_for_its_call_until_it_expires() -> None:
    state = writes.request_state(DELETE_TOOL, {"name": "a"}, now=1000)
    assert writes.state_valid(state, DELETE_TOOL, {"name": "a"}, now=1000)
    assert writes.state_valid(state, DELETE_TOOL, {"name": "a"}, now=1000 + writes.STATE_SECONDS)
    assert not writes.state_valid(
        state, DELETE_TOOL, {"name": "a"}, now=1001 + writes.STATE_SECONDS
    )
    assert not writes.state_valid(state, DELETE_TOOL, {"name": "b"}, now=1000)
    assert not writes.state_valid(state, RENAME_TOOL, {"name": "a"}, now=1000)
    expires = state.partition(".")[0]
    forged = f"{int(expires) + 100}.{state.partition('.')[2]}"
    assert not writes.state_valid(forged, DELETE_TOOL, {"name": "a"}, now=1000)
    assert not writes.state_valid(None, DELETE_TOOL, {"name": "a"}, now=1000)
    assert not writes.state_valid("x.y", DELETE_TOOL, {"name": "a"}, now=1000)
