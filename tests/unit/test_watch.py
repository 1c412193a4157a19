"""In-process watching of settings files (docs/configuration.md, "When the configuration
is read again"): stamps, change detection, settling, polling."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from pi_snippets_lsp import watch
from pi_snippets_lsp.watch import SettingsWatcher, stamp, take_stamps


def test_a_stamp_changes_with_the_content_and_is_none_without_a_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert stamp(path) is None
    path.write_text("{}")
    first = stamp(path)
    assert first is not None
    path.write_text("{ }")  # one byte longer: the size alone tells
    assert stamp(path) != first


def test_a_rename_over_the_file_changes_its_stamp(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    before = stamp(path)
    other = tmp_path / "new.json"
    other.write_text("{}")
    os.utime(other, ns=(before[0], before[0]) if before else None)
    other.replace(path)
    assert stamp(path) != before  # same size and time, another inode


def test_changed_compares_with_the_stamps_last_seen(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    watcher = SettingsWatcher(files=lambda: [path], on_change=_nothing, interval=0)
    watcher.seen(take_stamps([path]))
    assert not watcher.changed()
    path.write_text("{}")
    assert watcher.changed()
    watcher.seen(take_stamps([path]))
    assert not watcher.changed()
    path.unlink()
    assert watcher.changed()


async def _nothing() -> None:
    return None


async def test_settle_waits_until_two_looks_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    path.write_text("")
    writes = iter(["{", '{"a"', '{"a": 1}'])
    looks = 0
    real = watch.take_stamps

    def take_and_write(paths: object) -> watch.Stamps:
        nonlocal looks
        looks += 1
        stamps = real(paths)  # type: ignore[arg-type]
        text = next(writes, None)
        if text is not None:
            path.write_text(text)  # a save still in progress at each look
        return stamps

    monkeypatch.setattr(watch, "take_stamps", take_and_write)
    monkeypatch.setattr(watch, "SETTLE_STEP", 0.001)
    watcher = SettingsWatcher(files=lambda: [path], on_change=_nothing, interval=0)
    await watcher.settle([path])
    assert path.read_text() == '{"a": 1}'
    assert looks == 5  # three looks saw the file change, then two agreed


async def test_settle_gives_up_after_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = iter(range(10_000))
    monkeypatch.setattr(watch, "take_stamps", lambda paths: {"x": (next(counter), 0, 0)})
    monkeypatch.setattr(watch, "SETTLE_STEP", 0.001)
    monkeypatch.setattr(watch, "SETTLE_LIMIT", 0.01)
    watcher = SettingsWatcher(files=list, on_change=_nothing, interval=0)
    await asyncio.wait_for(watcher.settle([]), 5)


async def test_the_poller_calls_back_on_a_change_and_survives_a_failing_callback(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    calls: list[int] = []
    changed = asyncio.Event()

    async def on_change() -> None:
        calls.append(1)
        watcher.seen(take_stamps([path]))
        changed.set()
        if len(calls) == 1:
            raise RuntimeError("the first reload fails")

    watcher = SettingsWatcher(files=lambda: [path], on_change=on_change, interval=0.01)
    watcher.seen(take_stamps([path]))
    watcher.start()
    try:
        path.write_text("{}")
        await asyncio.wait_for(changed.wait(), 10)
        changed.clear()
        path.write_text('{"a": 1}')
        await asyncio.wait_for(changed.wait(), 10)
    finally:
        watcher.stop()
    assert len(calls) == 2


async def test_an_interval_of_zero_never_polls(tmp_path: Path) -> None:
    watcher = SettingsWatcher(files=lambda: [tmp_path], on_change=_nothing, interval=0)
    watcher.start()
    assert watcher._task is None
