"""Configuration layers, live reload and what the user is told (docs/configuration.md,
"Layers" and "When the configuration is read again")."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from .conftest import CLIENTS, OPT_IN, as_dict


async def names(session, uri=None):
    params = {"uri": uri} if uri else {}
    state = as_dict(await session.request("snippets/list", params))
    return {s["name"]: s["value"] for s in state["snippets"]}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_problems_of_one_load_are_one_warning(start, kind):
    session = await start(
        kind,
        settings={
            "snippets": {"ok": "fine", "Bad": "x", "empty": ""},
            "shortcut": "ctrl + shift + s",
            "expandOnCompletion": "yes",
        },
    )
    warnings = session.warnings_shown()
    assert len(warnings) == 1
    (message,) = warnings
    assert message.startswith("pi-simple-snippets: ")
    assert "ignored 2 snippet entries" in message
    assert "`shortcut`" in message and "`expandOnCompletion`" in message
    assert await names(session) == {"ok": "fine"}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_absent_namespace_sends_nothing(start, kind):
    session = await start(kind)
    session.settings_file.write_text(json.dumps({"pi-simple-snippets": {"snippets": {"a": "b"}}}))
    await session.request("snippets/reload", {})
    assert session.client.messages == []
    assert await names(session) == {}


async def test_client_options_layer_over_files(start):
    session = await start(
        "visual-studio-code",
        settings={"snippets": {"a": "from file", "b": "file b"}},
        init={"piSimpleSnippets": {"snippets": {"b": "from init"}}},
        configuration={"snippets": {"c": "from configuration"}},
    )
    assert await names(session) == {"a": "from file", "b": "from init", "c": "from configuration"}
    state = as_dict(await session.request("snippets/list", {}))
    sources = {s["name"]: s["source"] for s in state["snippets"]}
    assert sources == {
        "a": str(session.settings_file),
        "b": "initializationOptions",
        "c": "workspace/configuration",
    }


async def test_did_change_configuration_pulls_the_section(start):
    session = await start("visual-studio-code", configuration={"snippets": {"a": "one"}})
    assert await names(session) == {"a": "one"}
    session.client.set_configuration({"snippets": {"a": "two"}}, section="piSimpleSnippets")
    mark = session.mark()
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    await session.next_load(mark)
    assert await names(session) == {"a": "two"}


async def test_did_change_configuration_push_for_clients_without_pull(start):
    session = await start("plain")
    mark = session.mark()
    session.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"piSimpleSnippets": {"snippets": {"p": "push"}}}
        )
    )
    await session.next_load(mark)
    assert await names(session) == {"p": "push"}


async def test_watched_file_event_reloads(start):
    session = await start(
        "visual-studio-code", settings={"snippets": {"a": "one"}}, init={"pollInterval": 0}
    )
    watcher = session.registrations.get("pi-snippets-settings-watcher")
    assert watcher is not None and watcher.method == "workspace/didChangeWatchedFiles"
    patterns = [w["globPattern"] for w in watcher.register_options["watchers"]]
    assert str(session.settings_file) in patterns
    session.write_settings({"snippets": {"a": "two"}})
    mark = session.mark()
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=session.settings_file.as_uri(), type=types.FileChangeType.Changed
                )
            ]
        )
    )
    await session.next_load(mark)
    assert await names(session) == {"a": "two"}


@pytest.mark.parametrize("kind", ["neovim", "plain"])
async def test_in_process_watcher_reloads_when_client_cannot_watch(start, kind):
    session = await start(kind, settings={"snippets": {"a": "one"}})
    assert "pi-snippets-settings-watcher" not in session.registrations
    mark = session.mark()
    session.write_settings({"snippets": {"a": "two", "b": "new"}})
    load = await session.next_load(mark)
    assert load["count"] == 2
    assert await names(session) == {"a": "two", "b": "new"}


async def test_settings_file_outside_every_folder_is_watched_while_the_client_holds_a_watcher(
    start,
):
    """Some clients accept the watcher registration but watch only inside their
    workspace folders; the user settings file usually lies outside them."""
    session = await start("visual-studio-code", settings={"snippets": {"a": "one"}})
    watcher = session.registrations.get("pi-snippets-settings-watcher")
    assert watcher is not None  # the client took the registration ...
    patterns = [w["globPattern"] for w in watcher.register_options["watchers"]]
    assert str(session.settings_file) in patterns
    assert not session.settings_file.is_relative_to(session.workspace)
    mark = session.mark()
    # ... and never sends workspace/didChangeWatchedFiles for the edit.
    session.write_settings({"snippets": {"a": "two"}})
    await session.next_load(mark)
    assert await names(session) == {"a": "two"}


@pytest.mark.parametrize("kind", CLIENTS)
async def test_half_written_file_keeps_last_good_snippets(start, kind):
    session = await start(kind, settings={"snippets": {"a": "one"}})
    mark = session.mark()
    session.settings_file.write_text('{"piSimpleSnippets": {"snippets": {"a": "tw')
    await session.request("snippets/reload", {})
    await session.next_load(mark)
    assert await names(session) == {"a": "one"}
    (warning,) = session.warnings_shown()
    assert str(session.settings_file) in warning and "last valid content" in warning
    result = as_dict(await session.request("snippets/expand", {"text": "%a"}))
    assert result["text"] == "one"


async def test_invalid_file_at_start_counts_as_empty_and_is_reported(start):
    session = await start("neovim", initialize=False)
    session.settings_file.write_text("{not json")
    await session.client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"pollInterval": 0, **OPT_IN},
        )
    )
    await session.next_load(0)
    assert await names(session) == {}
    (warning,) = session.warnings_shown()
    assert warning.startswith("pi-simple-snippets: ") and "is not valid JSON" in warning


async def test_untrusted_project_file_is_skipped_and_named_once(start):
    session = await start("neovim", settings={"snippets": {"a": "user"}}, initialize=False)
    project = session.workspace / ".pi" / "settings.json"
    session.write_settings({"snippets": {"a": "project"}}, path=project)
    await session.client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"pollInterval": 0, **OPT_IN},
            workspace_folders=[types.WorkspaceFolder(uri=session.workspace.as_uri(), name="ws")],
        )
    )
    await session.next_load(0)
    assert await names(session) == {"a": "user"}
    await session.request("snippets/reload", {})
    infos = session.infos_shown()
    assert len(infos) == 1 and str(project) in infos[0]


async def test_trusted_project_wins_per_snippet_name(start):
    session = await start(
        "neovim", settings={"snippets": {"a": "user", "b": "user b"}}, initialize=False
    )
    project = session.workspace / ".pi" / "settings.json"
    session.write_settings({"snippets": {"a": "project"}}, path=project)
    await session.client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"pollInterval": 0, "trustProjectSettings": True, **OPT_IN},
            workspace_folders=[types.WorkspaceFolder(uri=session.workspace.as_uri(), name="ws")],
        )
    )
    await session.next_load(0)
    assert await names(session) == {"a": "project", "b": "user b"}
    assert session.infos_shown() == []


async def test_multi_root_documents_use_their_own_folder(start, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, value in ((one, "first"), (two, "second")):
        (folder / ".pi").mkdir(parents=True)
        (folder / ".pi" / "settings.json").write_text(
            json.dumps({"piSimpleSnippets": {"snippets": {"where": value}}})
        )
    session = await start("neovim", folders=[one, two], init={"trustProjectSettings": True})
    uri_one = (one / "a.md").as_uri()
    uri_two = (two / "sub" / "b.md").as_uri()
    for uri, expected in ((uri_one, "first"), (uri_two, "second")):
        result = as_dict(await session.request("snippets/expand", {"text": "%where", "uri": uri}))
        assert result["text"] == expected
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri_two, language_id="markdown", version=1, text="%wh"
            )
        )
    )
    result = await session.complete(uri_two, 0, 3)
    assert result is not None
    assert result.items[0].documentation.value == "```text\nsecond\n```"


async def test_folder_change_reloads(start, tmp_path):
    extra = tmp_path / "extra"
    (extra / ".pi").mkdir(parents=True)
    (extra / ".pi" / "settings.json").write_text(
        json.dumps({"piSimpleSnippets": {"snippets": {"x": "extra"}}})
    )
    session = await start("neovim", init={"trustProjectSettings": True, "pollInterval": 0})
    mark = session.mark()
    session.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=extra.as_uri(), name="extra")], removed=[]
            )
        )
    )
    await session.next_load(mark)
    result = as_dict(
        await session.request("snippets/expand", {"text": "%x", "uri": (extra / "f.md").as_uri()})
    )
    assert result["text"] == "extra"


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_bad_initialization_option_is_named_and_its_default_used(start, kind):
    session = await start(
        kind,
        settings={"snippets": {"a": "one"}},
        init={
            "trustProjectSettings": "yes",
            "piSimpleSnippets": {"snippets": {"b": "from options"}},
        },
    )
    (warning,) = session.warnings_shown()
    assert warning == (
        "pi-simple-snippets: initializationOptions.trustProjectSettings must be true or "
        'false, not "yes"; using false'
    )
    # The other options still apply: the client layer and the poll interval.
    assert await names(session) == {"a": "one", "b": "from options"}
