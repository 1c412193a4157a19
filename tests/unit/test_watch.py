"""In-process watching of settings files (docs/configuration.md, "When the configuration
is read again"): stamps, change detection, settling, polling."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest
from pi_snippets_lsp.settings.watch import SettingsWatcher, stamp, take_stamps

from pi_snippets_lsp.settings import watch


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


def test_a_path_that_cannot_be_stat_ed_has_no_stamp(tmp_path: Path) -> None:
    """Absent, or not a path the system accepts (a NUL byte): no stamp, no exception."""
    assert stamp(tmp_path / "absent.json") is None
    assert stamp(Path("settings\0.json")) is None


def test_a_stamp_is_mtime_size_and_inode(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{ }")
    os.utime(path, ns=(5, 7))
    assert stamp(path) == (7, 3, path.stat().st_ino)
    assert take_stamps([path, tmp_path / "absent"]) == {
        str(path): stamp(path),
        str(tmp_path / "absent"): None,
    }


def test_any_one_changed_file_among_several_is_a_change(tmp_path: Path) -> None:
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in files:
        path.write_text("{}")
    watcher = SettingsWatcher(files=lambda: files, on_change=_nothing, interval=0)
    watcher.seen(take_stamps(files))
    assert not watcher.changed()
    files[1].write_text("{ }")
    assert watcher.changed()


def test_a_file_never_seen_is_a_change_once_it_exists(tmp_path: Path) -> None:
    """A polled file missing from the stamps seen counts as seen absent: it is a change
    when it exists, not when it is still absent."""
    path = tmp_path / "settings.json"
    watcher = SettingsWatcher(files=lambda: [path], on_change=_nothing, interval=0)
    assert not watcher.changed()
    path.write_text("{}")
    assert watcher.changed()


async def test_settle_looks_for_at_most_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that never stops changing is waited for ``SETTLE_LIMIT`` seconds in all,
    one look per ``SETTLE_STEP``, then read as it is (the steps are powers of two so
    the sum is exact)."""
    looks = iter(range(10_000))
    seen: list[int] = []

    def always_new(paths: object) -> watch.Stamps:
        seen.append(1)
        return {"x": (next(looks), 0, 0)}

    monkeypatch.setattr(watch, "take_stamps", always_new)
    monkeypatch.setattr(watch, "SETTLE_STEP", 2**-7)
    monkeypatch.setattr(watch, "SETTLE_LIMIT", 2**-5)
    watcher = SettingsWatcher(files=list, on_change=_nothing, interval=0)
    await asyncio.wait_for(watcher.settle([]), 5)
    assert len(seen) == 1 + 4  # the first look, then one per step within the limit


async def test_start_twice_polls_once_and_stop_ends_the_poller(tmp_path: Path) -> None:
    watcher = SettingsWatcher(files=lambda: [tmp_path], on_change=_nothing, interval=60)
    watcher.start()
    task = watcher._task
    assert task is not None
    watcher.start()
    assert watcher._task is task
    watcher.stop()
    assert watcher._task is None
    await asyncio.sleep(0)
    assert task.cancelled()
    watcher.stop()  # stopping a stopped watcher is harmless


async def test_the_poller_keeps_looking_while_nothing_changes(tmp_path: Path) -> None:
    """Looks that find nothing changed do not end the polling: a change after several
    quiet looks is still noticed."""
    path = tmp_path / "settings.json"
    looks = 0
    quiet = asyncio.Event()
    changed = asyncio.Event()

    def files() -> list[Path]:
        nonlocal looks
        looks += 1
        if looks == 3:
            quiet.set()
        return [path]

    async def on_change() -> None:
        changed.set()

    watcher = SettingsWatcher(files=files, on_change=on_change, interval=0.001)
    watcher.seen(take_stamps([path]))
    watcher.start()
    try:
        await asyncio.wait_for(quiet.wait(), 10)
        assert not changed.is_set()
        path.write_text("{}")
        await asyncio.wait_for(changed.wait(), 10)
    finally:
        watcher.stop()


async def test_a_failing_reload_is_logged_with_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    failed = asyncio.Event()

    async def on_change() -> None:
        watcher.seen(take_stamps([path]))
        failed.set()
        raise RuntimeError("the reload fails")

    watcher = SettingsWatcher(files=lambda: [path], on_change=on_change, interval=0.001)
    watcher.seen(take_stamps([path]))
    with caplog.at_level(logging.ERROR, logger="pi_snippets_lsp.watch"):
        watcher.start()
        try:
            path.write_text("{}")
            await asyncio.wait_for(failed.wait(), 10)
            await asyncio.sleep(0.01)
        finally:
            watcher.stop()
    (record,) = caplog.records
    assert record.getMessage() == "reload after a file change failed"
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "the reload fails"
