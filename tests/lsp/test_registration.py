"""Completion is registered only while usable snippets exist (docs/lsp.md,
"Completion registration": the analogue of "registers no completion provider")."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pytest_lsp import client_capabilities

COMPLETION = "pi-snippets-completion"


async def test_dynamic_client_registers_completion_on_percent(start):
    session = await start("visual-studio-code", settings={"snippets": {"a": "b"}})
    assert COMPLETION in session.registrations
    reg = session.registrations[COMPLETION]
    assert reg.method == "textDocument/completion"
    assert reg.register_options["triggerCharacters"] == ["%"]


async def test_static_provider_for_clients_without_dynamic_registration(start):
    session = await start("neovim", initialize=False)
    result = await session.client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options={"pollInterval": 0}
        )
    )
    assert result.capabilities.completion_provider is not None
    assert list(result.capabilities.completion_provider.trigger_characters) == ["%"]
    assert result.server_info is not None and result.server_info.name == "pi-snippets-lsp"


async def test_dynamic_capabilities_omit_static_provider(start):
    session = await start("visual-studio-code", initialize=False)
    result = await session.client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"pollInterval": 0},
        )
    )
    assert result.capabilities.completion_provider is None


async def test_no_snippets_no_registration(start):
    session = await start("visual-studio-code", settings={"snippets": {"Bad": "x"}})
    assert COMPLETION not in session.registrations
    assert ("register", "textDocument/completion") not in session.registration_log


async def test_registration_follows_snippets_appearing_and_disappearing(start):
    session = await start("visual-studio-code", init={"pollInterval": 0})
    assert COMPLETION not in session.registrations

    session.write_settings({"snippets": {"a": "b"}})
    await session.request("snippets/reload", {})
    assert COMPLETION in session.registrations

    session.write_settings({"snippets": {"a": "c"}})
    await session.request("snippets/reload", {})
    await session.request("snippets/reload", {})

    session.write_settings({"snippets": {}})
    await session.request("snippets/reload", {})
    assert COMPLETION not in session.registrations

    session.write_settings({"snippets": {"z": "again"}})
    await session.request("snippets/reload", {})
    completion_log = [e for e in session.registration_log if e[1] == "textDocument/completion"]
    # never two registrations at once: strictly alternating
    assert completion_log == [
        ("register", "textDocument/completion"),
        ("unregister", "textDocument/completion"),
        ("register", "textDocument/completion"),
    ]


async def test_repeated_initialized_does_not_duplicate(start):
    session = await start("visual-studio-code", settings={"snippets": {"a": "b"}})
    session.client.initialized(types.InitializedParams())
    await session.request("snippets/list", {})
    methods = [m for kind, m in session.registration_log if kind == "register"]
    assert methods.count("textDocument/completion") == 1
    assert methods.count("workspace/didChangeWatchedFiles") == 1
    assert len(session.loads) == 1


async def test_shutdown_unregisters_everything(start):
    session = await start("visual-studio-code", settings={"snippets": {"a": "b"}})
    await session.client.shutdown_async(None)
    # the unregistration is sent before the shutdown response
    for _ in range(50):
        if not session.registrations:
            break
        await asyncio.sleep(0.05)
    assert session.registrations == {}
    session.client.exit(None)
    assert await session.client._server.wait() == 0
