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
    ("text", "words"),
    [
        pytest.param('{"a": "\ud800"}', "not valid Unicode", id="a lone surrogate"),
        pytest.param("x" * (MAX_SETTINGS_BYTES + 1), "over the 16 MiB limit", id="too large"),
    ],
)
def test_what_cannot_be_written_touches_nothing(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "settings.json"
    with pytest.raises(SettingsWriteError, match=words):
        write_settings_file(path, text)
    assert listing(tmp_path) == []


def test_a_file_of_exactly_the_limit_is_written(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write_settings_file(path, "x" * MAX_SETTINGS_BYTES)
    assert path.stat().st_size == MAX_SETTINGS_BYTES


def _umask() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    return 0o022
