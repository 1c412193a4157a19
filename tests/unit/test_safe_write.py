"""Settings files are written whole or not at all (``safe_write``; docs/lsp.md, "Daemon:
who may connect, and what one client may cost", "Writing settings files")."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
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
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


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
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert listing(tmp_path) == ["settings.json"]


def test_a_long_file_name_is_written(tmp_path: Path) -> None:
    # 230 characters: the temporary file's name (26 more with a 7-digit pid) fits in 255.
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
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
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
    path = tmp_path / "settings.json"
    with pytest.raises(OSError, match="Input/output error"):
        write_settings_file(path, "{}")
    if not links:  # the name claimed, not given back: an empty file as private as any
        assert path.read_bytes() == b""
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


NOBODY = 65534


def dead_pid() -> int:
    """The pid of a process that has ended."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_the_next_write_removes_what_a_crashed_write_left(tmp_path: Path) -> None:
    """A write killed by SIGKILL cannot remove its temporary file; the next write to the
    folder removes those of processes that have ended, and leaves those of a live one
    (another save under way) and other files alone."""
    path = tmp_path / "settings.json"
    crashed = tmp_path / f".settings.json.{dead_pid()}.0123abcd.tmp"
    crashed.write_text('{"half')
    # A live process of our own (a look at whether a pid runs must never signal it: a
    # mutant that sends a real signal hits this child only).
    with subprocess.Popen(["sleep", "60"]) as sleeper:
        try:
            live = tmp_path / f".settings.json.{sleeper.pid}.0123abcd.tmp"
            live.write_text("{")
            other = tmp_path / ".other.json.1.0123abcd.tmp"
            other.write_text("{")
            write_settings_file(path, "{}")
            assert sleeper.poll() is None
        finally:
            sleeper.kill()
    assert listing(tmp_path) == sorted([live.name, other.name, "settings.json"])


def test_a_crash_mid_write_leaves_a_temporary_the_next_write_removes(tmp_path: Path) -> None:
    """A writer killed (SIGKILL) while writing: the next writer removes its leftover."""
    path = tmp_path / "settings.json"
    pid = os.fork()
    if pid == 0:  # the child: stops in the middle of writing, never to resume
        real_write = os.write

        def write(fd: int, data: bytes | memoryview) -> int:
            real_write(fd, bytes(data[:10]))
            os.kill(os.getpid(), 9)
            return 0

        safe_write.os.write = write  # type: ignore[assignment]
        try:
            write_settings_file(path, "{}" + " " * 100_000)
        finally:
            os._exit(1)
    os.waitpid(pid, 0)
    # Named after the writer's pid and 8 random hex digits: what the next write reads.
    leftovers = [n for n in listing(tmp_path) if n.endswith(".tmp")]
    assert len(leftovers) == 1, "the crash left its file"
    assert re.fullmatch(rf"\.settings\.json\.{pid}\.[0-9a-f]{{8}}\.tmp", leftovers[0])
    write_settings_file(tmp_path / "settings.json", "{}")
    assert listing(tmp_path) == ["settings.json"]


def test_missing_folders_are_made_private(tmp_path: Path) -> None:
    """In a folder others may write to (``/tmp``-like: sticky), the folders made are the
    user's and 0700, and the new file is 0600."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    path = shared / "a" / "b" / "settings.json"
    write_settings_file(path, "{}")
    for folder in (shared / "a", shared / "a" / "b"):
        st = folder.stat()
        assert (stat.S_IMODE(st.st_mode), st.st_uid) == (0o700, os.geteuid())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def as_root_chown(path: Path, uid: int) -> None:
    """Give ``path`` to ``uid`` (the tests run as root in CI; as anyone else the folder
    of another user is made by a child that becomes that user is not possible)."""
    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    os.chown(path, uid, uid, follow_symlinks=False)


@pytest.mark.parametrize("kind", ["folder", "symlink"])
def test_a_folder_another_user_made_is_never_written_into(tmp_path: Path, kind: str) -> None:
    """``--settings /shared/a/settings.json`` where another user made ``/shared/a`` first
    (or a symbolic link to a folder of theirs): nothing is written, and the error says
    why."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    as_root_chown(theirs, NOBODY)
    target = shared / "a"
    if kind == "folder":
        target.mkdir()
        os.chmod(target, 0o777)
    else:
        target.symlink_to(theirs)
    as_root_chown(target, NOBODY)
    with pytest.raises(SettingsWriteError, match=r"another user \(uid 65534\)") as raised:
        write_settings_file(target / "settings.json", "{}")
    if kind == "folder":
        assert str(raised.value) == (
            f"{target} belongs to another user (uid 65534), who could read and replace the "
            "settings file; not written"
        )
    else:
        assert str(raised.value) == (
            f"{target} is a symbolic link of another user (uid 65534); not writing {target} "
            "through it"
        )
    with pytest.raises(SettingsWriteError, match=r"another user \(uid 65534\)"):
        write_settings_file(target / "b" / "settings.json", "{}")
    assert listing(theirs) == []
    assert listing(target) == [] if kind == "folder" else True


def test_a_folder_others_may_write_to_without_the_sticky_bit_is_refused(
    tmp_path: Path,
) -> None:
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    os.chmod(open_folder, 0o777)
    with pytest.raises(
        SettingsWriteError, match=r"writable by other users \(mode 0777\)"
    ) as raised:
        write_settings_file(open_folder / "settings.json", "{}")
    assert str(raised.value) == (
        f"{open_folder} is writable by other users (mode 0777), who could replace the "
        "settings file; not written"
    )
    assert listing(open_folder) == []


def test_only_our_leftovers_of_ended_processes_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept: a name whose process part is no pid, and one of another user's process (it
    cannot be told whether it runs: another user's pid answers EPERM)."""
    path = tmp_path / "settings.json"
    no_pid = tmp_path / ".settings.json.abc.0123abcd.tmp"
    no_pid.write_text("{")
    other = tmp_path / ".settings.json.4242.0123abcd.tmp"
    other.write_text("{")

    def kill(pid: int, signum: int) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(safe_write.os, "kill", kill)
    safe_write.remove_stale_temporaries(path)
    assert listing(tmp_path) == sorted([no_pid.name, other.name])


def test_a_leftover_of_another_user_stays(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    theirs = tmp_path / f".settings.json.{dead_pid()}.0123abcd.tmp"
    theirs.write_text("{")
    os.chown(theirs, NOBODY, NOBODY)
    safe_write.remove_stale_temporaries(tmp_path / "settings.json")
    assert listing(tmp_path) == [theirs.name]


def test_a_folder_made_meanwhile_by_us_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another save of ours made the folder between our look and our mkdir: it is ours
    and private, so the save goes on."""
    real_mkdir = os.mkdir

    def mkdir(path: object, mode: int = 0o777) -> None:
        real_mkdir(path, 0o700)  # type: ignore[arg-type]
        raise FileExistsError(errno.EEXIST, "File exists")

    monkeypatch.setattr(safe_write.os, "mkdir", mkdir)
    path = tmp_path / "new" / "settings.json"
    write_settings_file(path, "{}")
    assert path.read_text() == "{}"


def test_a_folder_made_meanwhile_open_to_others_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def mkdir(path: object, mode: int = 0o777) -> None:
        real_mkdir(path, 0o700)  # type: ignore[arg-type]
        os.chmod(path, 0o755)  # type: ignore[arg-type]
        raise FileExistsError(errno.EEXIST, "File exists")

    monkeypatch.setattr(safe_write.os, "mkdir", mkdir)
    with pytest.raises(SettingsWriteError, match="appeared meanwhile and is not this user's"):
        write_settings_file(tmp_path / "new" / "settings.json", "{}")


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    with pytest.raises(SettingsWriteError, match="is not a folder"):
        write_settings_file(tmp_path / "plain" / "settings.json", "{}")


def test_our_own_symbolic_link_on_the_way_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    write_settings_file(tmp_path / "link" / "a" / "settings.json", "{}")
    assert (real / "a" / "settings.json").read_text() == "{}"


def test_leftovers_of_other_files_stay(tmp_path: Path) -> None:
    """Only ``.settings.json.PID.HEX.tmp`` is a leftover of a write to ``settings.json``:
    not another file's of a name as long, nor one of its own prefix not ending ``.tmp``."""
    pid = dead_pid()
    others = [f".snippets.json.{pid}.0123abcd.tmp", f".settings.json.{pid}.0123abcd.bak"]
    for name in others:
        (tmp_path / name).write_text("{")
    safe_write.remove_stale_temporaries(tmp_path / "settings.json")
    assert listing(tmp_path) == sorted(others)


def test_every_leftover_of_an_ended_process_goes_whatever_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name kept (no pid) or gone meanwhile (another writer removed it between the
    listing and the look) does not end the sweep: the leftovers after it go."""
    pid = dead_pid()
    no_pid = ".settings.json.abc.0123abcd.tmp"
    vanished = f".settings.json.{pid}.00000000.tmp"
    stale = f".settings.json.{pid}.0123abcd.tmp"
    for name in (no_pid, stale):
        (tmp_path / name).write_text("{")
    with monkeypatch.context() as patch:  # the order a folder lists in is the file system's
        patch.setattr(safe_write.os, "listdir", lambda folder: [no_pid, vanished, stale])
        safe_write.remove_stale_temporaries(tmp_path / "settings.json")
    assert listing(tmp_path) == [no_pid]


def acting_as_another_user(monkeypatch: pytest.MonkeyPatch, *owned: Path) -> None:
    """This process as a user who is not root (CI runs as root): ``owned`` become that
    user's, and ``os.geteuid`` answers that user's uid."""
    if os.geteuid() == 0:
        for path in owned:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        monkeypatch.setattr(safe_write.os, "geteuid", lambda: NOBODY)


@pytest.mark.parametrize("missing", [False, True], ids=["folder exists", "folder made"])
def test_a_folder_of_the_user_who_is_not_root_is_written_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: bool
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    acting_as_another_user(monkeypatch, mine)
    safe_write.make_private_folders(mine / "new" if missing else mine)
    assert (mine / "new").is_dir() == missing


def test_root_s_folders_and_symbolic_links_are_trusted_by_any_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root can replace any file anyway: root's folder, or root's symbolic link on the
    way, is no risk to another user's settings."""
    if os.geteuid() != 0:
        pytest.skip("making a file of root needs root")
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setattr(safe_write.os, "geteuid", lambda: NOBODY)
    safe_write.make_private_folders(tmp_path / "link")


def test_a_private_folder_another_user_made_meanwhile_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made between our look and our mkdir by another user, even 0700: theirs, refused."""
    real_mkdir = os.mkdir

    def mkdir(path: Path, mode: int = 0o777) -> None:
        real_mkdir(path, 0o700)
        as_root_chown(path, NOBODY)
        raise FileExistsError(errno.EEXIST, "File exists")

    monkeypatch.setattr(safe_write.os, "mkdir", mkdir)
    new = tmp_path / "new"
    with pytest.raises(SettingsWriteError) as raised:
        write_settings_file(new / "settings.json", "{}")
    assert str(raised.value) == (
        f"{new} appeared meanwhile and is not this user's private folder; not written"
    )
    assert listing(new) == []
