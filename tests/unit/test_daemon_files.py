"""The daemon's folder and token file (``daemon_folder``; docs/lsp.md, "Daemon: who may
connect, and what one client may cost")."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_snippets_lsp.wire import daemon_files
from pi_snippets_lsp.wire.daemon_files import (
    UnsafeFolderError,
    default_socket_path,
    default_token_path,
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


def test_the_runtime_folder_is_read_from_the_environment_and_the_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/4242")
    assert runtime_folder() == Path("/run/user/4242/pi-snippets-lsp")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    expected = Path(tempfile.gettempdir()) / f"pi-snippets-lsp-{os.geteuid()}"
    assert runtime_folder() == expected
    assert runtime_folder({}) == expected


def test_the_socket_and_the_token_are_in_the_runtime_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/4242")
    env = {"XDG_RUNTIME_DIR": "/run/user/1000"}
    assert default_socket_path(env) == Path("/run/user/1000/pi-snippets-lsp/lsp.sock")
    assert default_token_path(env) == Path("/run/user/1000/pi-snippets-lsp/token")
    assert default_socket_path() == Path("/run/user/4242/pi-snippets-lsp/lsp.sock")
    assert default_token_path() == Path("/run/user/4242/pi-snippets-lsp/token")


@pytest.mark.parametrize(
    ("st", "problem"),
    [
        (fake_stat(stat.S_IFDIR | 0o700), None),
        (fake_stat(stat.S_IFDIR | 0o500), None),
        (
            fake_stat(stat.S_IFDIR | 0o750),
            "has mode 0750: others may use it (it must be 0700)",
        ),
        (
            fake_stat(stat.S_IFDIR | 0o701),
            "has mode 0701: others may use it (it must be 0700)",
        ),
        (fake_stat(stat.S_IFDIR | 0o700, uid=0), "belongs to uid 0, not to uid 1000"),
        (fake_stat(stat.S_IFLNK | 0o777), "is a symbolic link"),
        (fake_stat(stat.S_IFREG | 0o600), "is not a directory"),
    ],
)
def test_only_the_users_own_private_folder_is_used(st: os.stat_result, problem: str | None) -> None:
    assert folder_problem(st, 1000) == problem


def test_a_missing_folder_is_created_private(tmp_path: Path) -> None:
    folder = ensure_private_folder(tmp_path / "f")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(UnsafeFolderError, match="symbolic link"):
        ensure_private_folder(tmp_path / "link")


def test_a_folder_that_cannot_be_examined_is_refused_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "f"

    def lstat(path: object) -> os.stat_result:  # removed right after it was made
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))

    monkeypatch.setattr(daemon_files.os, "lstat", lstat)
    with pytest.raises(UnsafeFolderError) as raised:
        ensure_private_folder(folder)
    assert str(raised.value) == f"cannot use {folder}: No such file or directory"


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


def test_the_token_file_is_written_in_its_own_folder_whatever_the_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    path = tmp_path / "run" / "token"
    path.parent.mkdir()
    write_private_file(path, "é\n")
    assert read_token(path) == "é"
    assert [p.name for p in path.parent.iterdir()] == ["token"]


def test_a_failed_write_of_the_token_file_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.mkdir()  # a folder where the file should be: the rename fails
    with pytest.raises(IsADirectoryError):
        write_private_file(path, "abc")
    assert [p.name for p in tmp_path.iterdir()] == ["token"]


def test_the_writes_error_is_the_one_reported_when_the_temporary_cannot_be_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "token"
    path.mkdir()

    def unlink(path: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(daemon_files.os, "unlink", unlink)
    with pytest.raises(IsADirectoryError):
        write_private_file(path, "abc")


def test_a_token_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.mkdir(mode=0o700)
    with pytest.raises(UnsafeFolderError) as raised:
        read_token(path)
    assert str(raised.value) == f"{path} is not a regular file"


def test_a_token_file_reached_through_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write_private_file(real, "abc")
    (tmp_path / "token").symlink_to(real)
    with pytest.raises(OSError, match="symbolic links"):
        read_token(tmp_path / "token")


def in_time(read: Callable[[], str], unblock: Callable[[], None]) -> str:
    """``read()`` on a thread; fails (after unblocking it) when it does not return: a
    guard against a hang, not a measure of time."""
    result: list[str] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(read())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10.0)
    if thread.is_alive():
        unblock()
        thread.join(10.0)
        pytest.fail("reading the token file blocked")
    if errors:
        raise errors[0]
    return result[0]


def test_a_fifo_as_the_token_file_is_refused_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / "token"
    os.mkfifo(path, 0o600)

    def unblock() -> None:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    with pytest.raises(UnsafeFolderError, match="not a regular file"):
        in_time(lambda: read_token(path), unblock)


def test_a_token_file_that_is_not_utf8_is_read_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    write_private_file(path, "")
    path.write_bytes(b"\xffabc\n")
    assert read_token(path) == "\ufffdabc"


def test_removing_the_token_file_never_fails(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    remove_if_holding(missing, "ours")  # already gone
    others = tmp_path / "token"
    others.write_text("ours")
    os.chmod(others, 0o644)  # not ours to trust, so not ours to remove
    remove_if_holding(others, "ours")
    assert others.read_text() == "ours"


# --------------------------------------------------------------------------- the token's lock


def test_a_token_file_is_locked_by_one_daemon_at_a_time(tmp_path: Path) -> None:
    token = tmp_path / "token"
    held = daemon_files.lock_token_file(token)
    try:
        lock = daemon_files.lock_path(token)
        assert lock == tmp_path / ".token.lock"
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        assert lock.read_text() == f"{os.getpid()}\n"
        with pytest.raises(UnsafeFolderError) as refused:
            daemon_files.lock_token_file(token)
        assert str(refused.value) == (
            f"another daemon (pid {os.getpid()}) uses the token file {token}: stop it, or "
            "give this one a token file of its own with --token-file FILE"
        )
    finally:
        daemon_files.unlock_token_file(token, held)
    assert not daemon_files.lock_path(token).exists()
    again = daemon_files.lock_token_file(token)  # free again
    daemon_files.unlock_token_file(token, again)


def test_a_lock_left_by_a_daemon_that_died_is_taken(tmp_path: Path) -> None:
    token = tmp_path / "token"
    daemon_files.lock_path(token).write_text("99999999\nold\n")
    held = daemon_files.lock_token_file(token)
    try:
        assert daemon_files.lock_path(token).read_text() == f"{os.getpid()}\n"
    finally:
        daemon_files.unlock_token_file(token, held)


def test_the_lock_is_never_taken_through_a_symbolic_link(tmp_path: Path) -> None:
    token = tmp_path / "token"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("")
    daemon_files.lock_path(token).symlink_to(elsewhere)
    with pytest.raises(OSError) as refused:
        daemon_files.lock_token_file(token)
    assert refused.value.errno == errno.ELOOP


def test_a_lock_file_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    token = tmp_path / "token"
    lock = daemon_files.lock_path(token)
    lock.write_text("")
    os.chown(lock, 65534, 65534)
    with pytest.raises(UnsafeFolderError, match="it is not the user's own file"):
        daemon_files.lock_token_file(token)


def test_unlocking_removes_only_our_own_lock_file(tmp_path: Path) -> None:
    """A lock file that is no longer the one we hold (removed and made again by another
    daemon) stays; ours goes."""
    token = tmp_path / "token"
    held = daemon_files.lock_token_file(token)
    lock = daemon_files.lock_path(token)
    lock.unlink()
    lock.write_text("another daemon's\n")
    daemon_files.unlock_token_file(token, held)
    assert lock.read_text() == "another daemon's\n"
    with pytest.raises(OSError):
        os.fstat(held)  # let go of


def test_a_lock_removed_while_being_taken_is_taken_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon that held the lock removed its file between our open and our flock:
    the lock we got is on a file nobody else will open; the lock is taken on a new one."""
    token = tmp_path / "token"
    lock = daemon_files.lock_path(token)
    real_flock = daemon_files.fcntl.flock
    calls = []

    def flock(fd: int, operation: int) -> None:
        if not calls:
            lock.unlink()  # the holder's end, at the worst moment
        calls.append(fd)
        real_flock(fd, operation)

    monkeypatch.setattr(daemon_files.fcntl, "flock", flock)
    held = daemon_files.lock_token_file(token)
    try:
        assert len(calls) == 2
        assert os.fstat(held).st_ino == lock.stat().st_ino
    finally:
        daemon_files.unlock_token_file(token, held)


@pytest.mark.parametrize(
    ("content", "shown"),
    [
        pytest.param(b"", "?", id="empty"),
        pytest.param(b" 12\xff\n", "12\ufffd", id="not-text"),
        pytest.param(b"7" * 40, "7" * 32, id="long"),
    ],
)
def test_the_refusal_names_the_holder_as_its_lock_file_says(
    tmp_path: Path, content: bytes, shown: str
) -> None:
    token = tmp_path / "token"
    held = daemon_files.lock_token_file(token)
    try:
        daemon_files.lock_path(token).write_bytes(content)
        with pytest.raises(UnsafeFolderError) as refused:
            daemon_files.lock_token_file(token)
        assert str(refused.value).startswith(f"another daemon (pid {shown}) uses")
    finally:
        daemon_files.unlock_token_file(token, held)


def test_a_lock_whose_file_keeps_being_removed_is_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "token"
    lock = daemon_files.lock_path(token)
    calls = []

    def flock(fd: int, operation: int) -> None:
        calls.append(fd)
        lock.unlink()

    monkeypatch.setattr(daemon_files.fcntl, "flock", flock)
    with pytest.raises(UnsafeFolderError) as refused:
        daemon_files.lock_token_file(token)
    assert str(refused.value) == f"cannot lock {lock}: it keeps being replaced"
    assert len(calls) == daemon_files.LOCK_ATTEMPTS == 8
    for fd in calls:  # every try's descriptor was closed
        with pytest.raises(OSError):
            os.fstat(fd)


def test_unlocking_after_the_lock_file_is_gone_or_the_descriptor_closed(tmp_path: Path) -> None:
    token = tmp_path / "token"
    held = daemon_files.lock_token_file(token)
    daemon_files.lock_path(token).unlink()
    daemon_files.unlock_token_file(token, held)  # no file: nothing to remove
    daemon_files.unlock_token_file(token, held)  # closed already: nothing to close
