"""The backends: the in-process one reloads when a settings file changes, as the server does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pi_snippets_lsp.settings.layers import load_config as load_request_config
from pi_snippets_lsp.settings.layers import load_request

from pi_snippets_lsp import load_config
from pi_snippets_lsp.client import ServerExitedError, SnippetsClient
from pi_snippets_lsp.integrations.backend import (
    Backend,
    ClientBackend,
    InProcessBackend,
    backend_for,
)

from .conftest import SNIPPETS, TIMEOUT, USE_MCP, write_settings


def names(backend: InProcessBackend) -> list[str]:
    return [s.name for s in backend.config.snippets]


def test_reads_once_until_a_file_changes(home: Path) -> None:
    backend = InProcessBackend()
    assert names(backend) == sorted(SNIPPETS)
    assert backend.expand("%use-mcp") == USE_MCP
    backend.complete("%us")
    assert backend.loads == 1  # nothing changed: no second read

    write_settings(home / "settings.json", {"snippets": {"fresh": "Just added."}})
    assert backend.expand("%fresh %use-mcp") == "Just added. %use-mcp"
    assert backend.loads == 2


def test_a_file_that_appears_later_is_read(tmp_path: Path) -> None:
    settings = tmp_path / "later.json"
    backend = InProcessBackend(settings=settings)
    assert backend.complete("%a") is None
    assert backend.warnings() == (f"settings file {settings} does not exist",)

    write_settings(settings, {"snippets": {"abc": "Alphabet."}})
    popup = backend.complete("%a")
    assert popup is not None and [i.label for i in popup.items] == ["%abc"]
    assert backend.warnings() == ()


def test_a_half_written_save_keeps_the_last_good_snippets(home: Path) -> None:
    backend = InProcessBackend()
    assert backend.expand("%focus") == SNIPPETS["focus"]

    (home / "settings.json").write_text('{"piSimpleSnippets": {"snip', encoding="utf-8")
    assert backend.expand("%focus") == SNIPPETS["focus"]
    [warning] = backend.warnings()
    assert "is not valid JSON" in warning and "keeping its last valid content" in warning
    # A fresh load (no memory of the last good content) has lost them: the backend
    # really kept them, the file alone would not have.
    assert load_config().snippets == ()


def test_project_file_only_when_trusted_and_then_watched(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project_file = write_settings(project / ".pi" / "settings.json", {"snippets": {"p1": "One."}})

    untrusted = InProcessBackend(project=project)
    assert untrusted.expand("%p1") == "%p1"
    assert untrusted.config.untrusted_project_files == (str(project_file),)

    trusted = InProcessBackend(project=project, trust_project=True)
    assert trusted.expand("%p1 %focus") == f"One. {SNIPPETS['focus']}"
    write_settings(project_file, {"snippets": {"p1": "One, edited."}})
    assert trusted.expand("%p1") == "One, edited."


def test_options_layer_over_the_files(home: Path) -> None:
    backend = InProcessBackend(options={"snippets": {"focus": "Overridden."}})
    assert backend.expand("%focus %status") == f"Overridden. {SNIPPETS['status']}"
    assert {s.name: s.source for s in backend.config.snippets}["focus"] == "options"


def test_load_request_is_what_load_config_reads(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    write_settings(project / ".pi" / "settings.json", {"snippets": {"p1": "One."}})
    kwargs = {"project": project, "trust_project": True, "options": {"snippets": {"o": "O."}}}
    request = load_request(**kwargs)  # type: ignore[arg-type]
    assert load_request_config(request) == load_config(**kwargs)  # type: ignore[arg-type]
    assert request.files == [home / "settings.json", project / ".pi" / "settings.json"]
    assert load_request(project=project).files == [home / "settings.json"]


def test_a_stamp_change_without_new_content_is_harmless(home: Path) -> None:
    backend = InProcessBackend()
    before = backend.config
    settings = home / "settings.json"
    stat = settings.stat()
    os.utime(settings, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert backend.config == before
    assert backend.loads == 2


def test_client_backend(home: Path) -> None:
    with SnippetsClient.start(
        env={"PI_CODING_AGENT_DIR": str(home)}, init_options={"pollInterval": 0}, timeout=TIMEOUT
    ) as client:
        backend = backend_for(client)
        assert isinstance(backend, ClientBackend)
        assert backend.expand("%use-mcp!") == f"{USE_MCP}!"
        popup = backend.complete("%us")
        assert popup is not None and popup.items[0].label == "%use-mcp"
        assert backend.warnings() == ()

        assert client.process is not None
        client.process.kill()
        client.process.wait(TIMEOUT)
        assert backend.complete("%us") is None  # no popup, and no crash
        with pytest.raises(ServerExitedError):
            backend.expand("%use-mcp")  # never a prompt sent with its markers unexpanded


def test_backend_for(home: Path) -> None:
    backend = InProcessBackend(options={"snippets": {"a": "A"}})
    assert backend_for(backend) is backend
    assert isinstance(backend_for(None), InProcessBackend)
    assert isinstance(backend, Backend)
    with pytest.raises(TypeError, match="in-process"):
        backend_for(backend, trust_project=True)
    with pytest.raises(TypeError, match="not dict"):
        backend_for(json.loads("{}"))
