"""The daemon's folder and token file (``daemon_folder``; docs/lsp.md, "Daemon: who may
connect, and what one client may cost")."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from pi_snippets_lsp.wire.daemon_files import (
    UnsafeFolderError,
    ensure_private_folder,
    folder_problem,
    new_token,
    read_token,
    remove_if_holding,
    runtime_folder,
    write_private_file,
)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"XDG_RUNTIME_DIR": "/run/user/1000"}, "/run/user/1000/pi-snippets-lsp"),
        ({"XDG_RUNTIME_DIR": ""}, "{tmp}/pi-snippets-lsp-7"),
        ({"XDG_RUNTIME_DIR": "relative/dir"}, "{tmp}/pi-snippets-lsp-7"),
        ({}, "{tmp}/pi-snippets-lsp-7"),
    ],
)
def test_the_runtime_folder(env: dict[str, str], expected: str) -> None:
    assert str(runtime_folder(env, uid=7)) == expected.format(tmp=tempfile.gettempdir())


def fake_stat(mode: int, uid: int = 1000) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, uid, 0, 0, 0, 0))


@pytest.mark.parametrize(
    ("st", "problem"),
    [
        (fake_stat(stat.S_IFDIR | 0o700), None),
        (fake_stat(stat.S_IFDIR | 0o500), None),
        (fake_stat(stat.S_IFDIR | 0o750), "has mode 0750"),
        (fake_stat(stat.S_IFDIR | 0o701), "has mode 0701"),
        (fake_stat(stat.S_IFDIR | 0o700, uid=0), "belongs to uid 0"),
        (fake_stat(stat.S_IFLNK | 0o777), "is a symbolic link"),
        (fake_stat(stat.S_IFREG | 0o600), "is not a directory"),
    ],
)
def test_only_the_users_own_private_folder_is_used(st: os.stat_result, problem: str | None) -> None:
    found = folder_problem(st, 1000)
    assert found is None if problem is None else found is not None and problem in found


def test_a_missing_folder_is_created_private(tmp_path: Path) -> None:
    folder = ensure_private_folder(tmp_path / "f")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(UnsafeFolderError, match="symbolic link"):
        ensure_private_folder(tmp_path / "link")


def test_tokens_are_fresh_and_long() -> None:
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100
    assert all(len(t) >= 22 for t in tokens)  # 128 bits as base64 text


def test_the_token_file_is_0600_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "token"
    old = os.umask(0)  # the umask, whatever it is, must not matter
    try:
        write_private_file(path, "abc\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert read_token(path) == "abc"
    assert [p.name for p in tmp_path.iterdir()] == ["token"], "no temporary file is left"


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("abc")
    os.chmod(path, 0o644)
    with pytest.raises(UnsafeFolderError, match="0600"):
        read_token(path)


def test_the_token_file_is_removed_only_while_it_holds_our_token(tmp_path: Path) -> None:
    path = tmp_path / "token"
    write_private_file(path, "theirs\n")
    remove_if_holding(path, "ours")
    assert path.exists()
    remove_if_holding(path, "theirs")
    assert not path.exists()
