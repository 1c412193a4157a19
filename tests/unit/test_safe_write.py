"""Settings files are written whole or not at all (``safe_write``; docs/lsp.md, "Daemon:
who may connect, and what one client may cost", "Writing settings files")."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from pi_snippets_lsp.settings import safe_write
from pi_snippets_lsp.settings.files import MAX_SETTINGS_BYTES
from pi_snippets_lsp.settings.safe_write import SettingsWriteError, write_settings_file

OLD = '{"piSimpleSnippets": {"snippets": {"old": "kept"}}}\n'


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def disk_full_after(monkeypatch: pytest.MonkeyPatch, allowed: int) -> None:
    """``os.write`` writes ``allowed`` bytes in all, then fails as a full disk does."""
    real_write = os.write
    left = [allowed]

    def write(fd: int, data: bytes | memoryview) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        written = real_write(fd, bytes(data[: left[0]]))
        left[0] -= written
        return written

    monkeypatch.setattr(safe_write.os, "write", write)


def test_a_new_file_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "settings.json"
    write_settings_file(path, "中文 {}\r\n")
    assert path.read_bytes() == "中文 {}\r\n".encode()
    assert listing(path.parent) == ["settings.json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()


def test_a_full_disk_leaves_no_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    disk_full_after(monkeypatch, 8192)
    with pytest.raises(OSError, match="No space left"):
        write_settings_file(path, "x" * 100_000)
    assert listing(tmp_path) == []


def test_a_full_disk_leaves_the_old_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(OLD)
    os.chmod(path, 0o640)
    disk_full_after(monkeypatch, 100)
    with pytest.raises(OSError, match="No space left"):
        write_settings_file(path, "y" * 100_000, replace=True)
    assert path.read_text() == OLD
    assert listing(tmp_path) == ["settings.json"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(OLD)
    os.chmod(path, 0o600)
    write_settings_file(path, "{}", replace=True)
    assert path.read_text() == "{}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_file_is_never_overwritten_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(OLD)
    with pytest.raises(FileExistsError):
        write_settings_file(path, "{}")
    assert path.read_text() == OLD
    assert listing(tmp_path) == ["settings.json"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{"a": "\ud800"}',
            "the text for {} is not valid Unicode (a lone surrogate at character 7); not written",
            id="a lone surrogate",
        ),
        pytest.param(
            "x" * (MAX_SETTINGS_BYTES + 1),
            "{} would be 16.0 MiB, over the 16 MiB limit of a settings file (it could not "
            "be read back); not written",
            id="too large",
        ),
    ],
)
def test_what_cannot_be_written_touches_nothing_and_says_why(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "settings.json"
    with pytest.raises(SettingsWriteError) as raised:
        write_settings_file(path, text)
    assert str(raised.value) == message.format(path)
    assert listing(tmp_path) == []


def test_a_file_of_exactly_the_limit_is_written(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write_settings_file(path, "x" * MAX_SETTINGS_BYTES)
    assert path.stat().st_size == MAX_SETTINGS_BYTES


def test_the_folders_of_a_new_file_are_made(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".pi" / "agent" / "settings.json"
    write_settings_file(path, "{}")
    assert path.read_text() == "{}"
    assert listing(path.parent) == ["settings.json"]


def test_replacing_a_file_that_does_not_exist_creates_it(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write_settings_file(path, "{}", replace=True)
    assert path.read_text() == "{}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    assert listing(tmp_path) == ["settings.json"]


def test_a_long_file_name_is_written(tmp_path: Path) -> None:
    # 230 characters: the temporary file's name (19 more) still fits the usual 255.
    path = tmp_path / ("s" * 225 + ".json")
    write_settings_file(path, "{}")
    assert path.read_text() == "{}"
    assert listing(tmp_path) == [path.name]


def no_hard_links(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.link`` fails as on a file system without hard links (FAT, some network ones)."""

    def link(source: object, target: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(safe_write.os, "link", link)


def failing(monkeypatch: pytest.MonkeyPatch, name: str, error: OSError) -> None:
    """``os.<name>`` fails with ``error``."""

    def fail(*args: object) -> None:
        raise error

    monkeypatch.setattr(safe_write.os, name, fail)


def test_without_hard_links_a_new_file_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_hard_links(monkeypatch)
    path = tmp_path / "settings.json"
    write_settings_file(path, "中文 {}")
    assert path.read_text() == "中文 {}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    assert listing(tmp_path) == ["settings.json"]


def test_without_hard_links_an_existing_file_is_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_hard_links(monkeypatch)
    path = tmp_path / "settings.json"
    path.write_text(OLD)
    with pytest.raises(FileExistsError):
        write_settings_file(path, "{}")
    assert path.read_text() == OLD
    assert listing(tmp_path) == ["settings.json"]


def test_without_hard_links_a_failed_rename_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_hard_links(monkeypatch)
    failing(monkeypatch, "replace", OSError(errno.EIO, "Input/output error"))
    path = tmp_path / "settings.json"
    with pytest.raises(OSError, match="Input/output error"):
        write_settings_file(path, "{}")
    assert listing(tmp_path) == []


@pytest.mark.parametrize("links", [True, False], ids=["hard links", "no hard links"])
def test_the_disks_error_is_the_one_reported_when_nothing_can_be_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    if links:
        failing(monkeypatch, "fsync", OSError(errno.EIO, "Input/output error"))
    else:
        no_hard_links(monkeypatch)
        failing(monkeypatch, "replace", OSError(errno.EIO, "Input/output error"))
    failing(monkeypatch, "unlink", OSError(errno.EACCES, "Permission denied"))
    with pytest.raises(OSError, match="Input/output error"):
        write_settings_file(tmp_path / "settings.json", "{}")


def _umask() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    return 0o022
