"""No state is ever poisoned, nothing a settings path leads to blocks the server
(docs/configuration.md, "Reading a settings file"; docs/lsp.md, "Lifecycle").

Every wait has a time limit: a server that hangs fails the test, it never hangs the
suite.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp.protocol import LanguageClientProtocol

from .conftest import OPT_IN, as_dict

#: Seconds any single answer may take before the test calls the server stuck.
STUCK = 15.0


async def answer(session, method: str, params: object) -> dict:
    return as_dict(await asyncio.wait_for(session.request(method, params), STUCK))


async def names(session) -> dict[str, str]:
    state = await answer(session, "snippets/list", {})
    return {s["name"]: s["value"] for s in state["snippets"]}


async def shut_down_cleanly(session) -> None:
    """shutdown answered, exit ends the process with 0."""
    await asyncio.wait_for(session.client.shutdown_session(), STUCK)
    process = session.client._server
    assert process is not None
    assert await asyncio.wait_for(process.wait(), STUCK) == 0


async def test_a_request_before_initialize_is_refused_and_changes_nothing(start):
    """The early request gets -32002; the first load still happens after ``initialized``,
    with the client's capabilities (here: pulling ``workspace/configuration``)."""
    session = await start(
        "visual-studio-code", initialize=False, configuration={"snippets": {"c": "pulled"}}
    )
    session.write_settings({"snippets": {"f": "file"}})
    # pytest-lsp refuses to send a request before initialize; its base class does not.
    early = super(LanguageClientProtocol, session.client.protocol).send_request_async(
        "snippets/expand", {"text": "%f"}
    )
    with pytest.raises(JsonRpcException) as refused:
        await asyncio.wait_for(early, STUCK)
    assert refused.value.code == -32002
    assert session.loads == []
    await asyncio.wait_for(
        session.client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    workspace=types.WorkspaceClientCapabilities(configuration=True)
                ),
                initialization_options={"pollInterval": 0, **OPT_IN},
            )
        ),
        STUCK,
    )
    await session.next_load(0)
    assert await names(session) == {"c": "pulled", "f": "file"}
    result = await answer(session, "snippets/expand", {"text": "%f %c"})
    assert result == {"text": "file pulled", "changed": True}


async def test_a_settings_fifo_is_a_warning_and_blocks_nothing(start):
    """The read of a FIFO used to block forever, ``shutdown`` and ``exit`` included."""
    session = await start("neovim", initialize=False)
    os.mkfifo(session.settings_file)
    await asyncio.wait_for(
        session.client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options={"pollInterval": 0, **OPT_IN},
            )
        ),
        STUCK,
    )
    load = await session.next_load(0, timeout=STUCK)
    assert load["count"] == 0
    assert load["warnings"] == [
        f"{session.settings_file} is a named pipe (FIFO), not a settings file"
    ]
    result = await answer(session, "snippets/expand", {"text": "%a"})
    assert result == {"text": "%a", "changed": False}
    await shut_down_cleanly(session)


async def test_a_file_that_becomes_a_fifo_keeps_the_last_snippets(start):
    """The in-process poller meets the FIFO: a warning, the snippets stay."""
    session = await start("neovim", settings={"snippets": {"a": "AAA"}})
    mark = session.mark()
    session.settings_file.unlink()
    os.mkfifo(session.settings_file)
    load = await session.next_load(mark, timeout=STUCK)
    assert load["count"] == 1
    assert "is a named pipe (FIFO)" in load["warnings"][0]
    assert "keeping its last valid content" in load["warnings"][0]
    result = await answer(session, "snippets/expand", {"text": "%a"})
    assert result == {"text": "AAA", "changed": True}
    await shut_down_cleanly(session)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
async def test_a_settings_file_that_never_ends_is_not_read(start, device):
    session = await start("neovim", initialize=False)
    session.settings_file.symlink_to(device)
    await asyncio.wait_for(
        session.client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options={"pollInterval": 0, **OPT_IN},
            )
        ),
        STUCK,
    )
    load = await session.next_load(0, timeout=STUCK)
    assert load["warnings"] == [f"{session.settings_file} is a device, not a settings file"]
    await shut_down_cleanly(session)


async def test_a_trusted_project_symlink_loop_is_a_warning_and_heals(start, tmp_path: Path):
    """The loop used to make every later request fail with -32603, even once removed."""
    project = tmp_path / "project"
    loop = project / ".pi" / "settings.json"
    loop.parent.mkdir(parents=True)
    loop.symlink_to(loop)
    session = await start(
        "plain",
        settings={"snippets": {"u": "user"}},
        init={"trustProjectSettings": True, "pollInterval": 0},
        folders=[project],
    )
    assert session.loads[0]["warnings"] == [f"{loop} is a symbolic link loop"]
    assert await names(session) == {"u": "user"}
    loop.unlink()
    loop.write_text(json.dumps({"piSimpleSnippets": {"snippets": {"p": "project"}}}))
    state = await answer(session, "snippets/reload", {})
    assert {s["name"] for s in state["snippets"]} == {"p", "u"}
    assert state["warnings"] == []
    result = await answer(session, "snippets/expand", {"text": "%p %u"})
    assert result == {"text": "project user", "changed": True}


@pytest.mark.parametrize("content", [b"", b"\n", b'{"piSimpleSnippets": {"sni'])
async def test_an_empty_or_broken_file_met_on_a_reload_keeps_the_last_generation(start, content):
    session = await start("plain", settings={"snippets": {"a": "AAA"}}, init={"pollInterval": 0})
    mark = session.mark()
    session.settings_file.write_bytes(content)
    state = await answer(session, "snippets/reload", {})
    assert [s["name"] for s in state["snippets"]] == ["a"]
    (warning,) = state["warnings"]
    assert warning.startswith(str(session.settings_file))
    assert warning.endswith("; keeping its last valid content")
    load = await session.next_load(mark)
    assert load["count"] == 1
    (shown,) = session.warnings_shown()
    assert shown == f"pi-simple-snippets: {warning}"
