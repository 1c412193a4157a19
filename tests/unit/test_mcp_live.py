"""The MCP server's live generation: where the layers come from, and reloads.

docs/mcp.md, "Live" and "Trust". No SDK: ``LiveSnippets`` is driven directly, with real
settings files in a temporary folder.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import json
import os
import weakref
from pathlib import Path

import pytest

from pi_snippets_lsp.core.config import Config, Layer, validate_layers
from pi_snippets_lsp.core.serving import MIN_POLL_INTERVAL
from pi_snippets_lsp.mcp import live
from pi_snippets_lsp.mcp.live import LiveSnippets, McpFlags
from pi_snippets_lsp.settings import files as settings_file


def write(path: Path, snippets: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"piSimpleSnippets": {"snippets": snippets}}), encoding="utf-8")


def config_of(snippets: dict[str, str], source: str = "s") -> Config:
    return validate_layers([Layer(source, {"piSimpleSnippets": {"snippets": snippets}})])


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        pytest.param({"a": "1"}, {"a": "1"}, False, id="same"),
        pytest.param({"a": "1"}, {"a": "2"}, True, id="value"),
        pytest.param({"a": "1"}, {"a": "1", "b": "1"}, True, id="added"),
        pytest.param({"a": "1"}, {}, True, id="removed"),
    ],
)
def test_a_change_is_any_snippet_added_removed_or_changed(
    before: dict[str, str], after: dict[str, str], changed: bool
) -> None:
    assert live.snippets_changed(config_of(before), config_of(after)) is changed
    assert live.snippets_changed(config_of(before), config_of(before, source="t")) is bool(before)


def test_the_changed_names() -> None:
    before = config_of({"a": "1", "b": "2", "c": "3"})
    after = config_of({"a": "1", "b": "two", "d": "4"})
    assert live.changed_names(before, after) == ["b", "c", "d"]
    assert live.changed_names(before, before) == []


class Recorder:
    def __init__(self) -> None:
        self.loads: list[tuple[Config, Config]] = []
        self.failures: list[str] = []

    async def on_load(self, previous: Config, current: Config) -> None:
        self.loads.append((previous, current))

    async def on_failure(self, message: str) -> None:
        self.failures.append(message)


def live_of(flags: McpFlags) -> tuple[LiveSnippets, Recorder]:
    recorder = Recorder()
    return LiveSnippets(flags, recorder.on_load, recorder.on_failure), recorder


def names(config: Config) -> list[str]:
    return [s.name for s in config.snippets]


async def test_a_reload_reads_the_user_file(tmp_path: Path) -> None:
    user = tmp_path / "settings.json"
    write(user, {"a": "A"})
    snippets, recorder = live_of(McpFlags(settings=str(user), project=str(tmp_path)))
    config = await snippets.reload()
    assert names(config) == ["a"] and snippets.generation == 1
    assert [names(c) for _, c in recorder.loads] == [["a"]]


async def test_a_half_written_save_keeps_the_last_good_list(tmp_path: Path) -> None:
    user = tmp_path / "settings.json"
    write(user, {"a": "A", "b": "B"})
    snippets, _ = live_of(McpFlags(settings=str(user)))
    await snippets.reload()
    user.write_text('{"piSimpleSnippets": {"snip', encoding="utf-8")
    config = await snippets.reload(settle=True)
    assert names(config) == ["a", "b"]
    assert any("keeping its last valid content" in w for w in config.warnings)
    user.write_text("", encoding="utf-8")
    assert names(await snippets.reload(settle=True)) == ["a", "b"]


async def test_a_failed_load_keeps_the_generation_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "settings.json"
    write(user, {"a": "A"})
    snippets, recorder = live_of(McpFlags(settings=str(user)))
    await snippets.reload()

    def broken(*args: object) -> Config:
        raise MemoryError("out of memory")

    monkeypatch.setattr(live, "load_config", broken)
    assert names(await snippets.reload()) == ["a"]
    assert snippets.generation == 1
    assert recorder.failures == [
        "pi-simple-snippets: loading the settings failed (out of memory); keeping the "
        "previous snippets"
    ]
    monkeypatch.undo()
    write(user, {"b": "B"})
    assert names(await snippets.reload()) == ["b"]  # the next load tries again


async def test_the_project_layer_only_when_trusted(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    write(user, {"a": "user"})
    project = tmp_path / "proj"
    write(project / ".pi" / "settings.json", {"a": "project", "p": "P"})
    untrusted, _ = live_of(McpFlags(settings=str(user), project=str(project)))
    config = await untrusted.reload()
    assert names(config) == ["a"] and config.values["a"] == "user"
    assert config.untrusted_project_files == (str(project / ".pi" / "settings.json"),)
    trusted, _ = live_of(McpFlags(settings=str(user), project=str(project), trust_project=True))
    config = await trusted.reload()
    assert config.values == {"a": "project", "p": "P"}


async def test_a_trusted_clients_root_moves_the_project_layer(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    write(user, {})
    root = tmp_path / "root"
    write(root / ".pi" / "settings.json", {"r": "R"})
    options = McpFlags(settings=str(user), project=str(tmp_path), trust_project=True)
    snippets, recorder = live_of(options)
    await snippets.reload()
    await snippets.set_root(str(root))
    assert names(snippets.config) == ["r"]
    await snippets.set_root(str(root))  # the same root: no reload
    assert len(recorder.loads) == 2
    untrusted, recorder = live_of(McpFlags(settings=str(user)))
    await untrusted.set_root(str(root))
    assert recorder.loads == [] and untrusted.root is None


def test_a_short_poll_interval_is_raised_to_the_floor() -> None:
    snippets, _ = live_of(McpFlags(poll_interval=0.01))
    assert snippets.watcher.interval == MIN_POLL_INTERVAL
    off, _ = live_of(McpFlags(poll_interval=0))
    assert off.watcher.interval == 0


async def test_the_watcher_reloads_on_a_save(tmp_path: Path) -> None:
    user = tmp_path / "settings.json"
    write(user, {"a": "A"})
    snippets, recorder = live_of(McpFlags(settings=str(user), poll_interval=0.25))
    await snippets.reload()
    snippets.start()
    try:
        write(user, {"a": "A", "b": "B"})
        for _ in range(200):
            if len(recorder.loads) >= 2:
                break
            await asyncio.sleep(0.05)
        assert names(snippets.config) == ["a", "b"]
    finally:
        snippets.stop()


async def test_each_generation_is_frozen_out_of_the_collectors_walks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process serves one client: a generation lives until the next load, so full
    collections must not walk it (they paused prompts/list for ~100 ms)."""
    frozen: list[int] = []
    user = tmp_path / "settings.json"
    write(user, {"a": "A"})
    snippets, _ = live_of(McpFlags(settings=str(user)))
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(snippets.generation))
    await snippets.reload()
    await snippets.reload()
    assert frozen == [1, 2]


async def test_a_replaced_generation_is_freed_by_its_counts(tmp_path: Path) -> None:
    """Frozen objects are never collected, only freed when nothing refers to them: a
    generation must hold no reference cycle, or each reload would leak it."""
    user = tmp_path / "settings.json"
    write(user, {"a": "A"})
    snippets, recorder = live_of(McpFlags(settings=str(user)))
    first = weakref.ref(await snippets.reload())
    gc.disable()
    try:
        write(user, {"b": "B"})
        await snippets.reload()
        recorder.loads.clear()
        assert first() is None
    finally:
        gc.enable()


async def test_a_read_that_failed_is_read_again_and_told_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A settings file the server could not read (no permission, until a ``chmod`` that
    leaves its stamp as it was) is looked at again at every poll and read once it can
    be; a retry meeting the same problem tells it no second time."""
    user = tmp_path / "settings.json"
    write(user, {"a": "A"})
    snippets, recorder = live_of(McpFlags(settings=str(user)))
    real_open = os.open
    failing = [True]

    def flaky_open(path: object, *args: object, **kwargs: object) -> int:
        if failing[0] and os.fspath(path) == str(user):  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_file.os, "open", flaky_open)
    await snippets.reload()
    assert names(snippets.config) == [] and "Permission denied" in (snippets.warning or "")
    assert snippets.watcher.changed(), "the failed file is looked at again"
    await snippets.watcher.on_change()  # still failing: read again, not told again
    assert snippets.generation == 2 and snippets.warning is None
    failing[0] = False
    assert snippets.watcher.changed()
    await snippets.watcher.on_change()
    assert names(snippets.config) == ["a"] and snippets.warning is None
    assert not snippets.watcher.changed(), "read: its stamp is seen now"
    assert [names(current) for _, current in recorder.loads] == [[], [], ["a"]]
