"""Reading settings files safely: nothing a path leads to can block, exhaust memory or
raise (docs/configuration.md, "Reading a settings file").

Each hostile file runs the read on a worker thread with a time limit, so a read that
blocks (the old behaviour with a FIFO) fails the test instead of hanging the suite.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pi_snippets_lsp.core.config import SETTINGS_KEY, Config
from pi_snippets_lsp.settings import files as settings_file
from pi_snippets_lsp.settings.files import MAX_SETTINGS_BYTES
from pi_snippets_lsp.settings.layers import LoadRequest, SettingsFiles, load_config

from .other_user import as_other_user

#: Seconds a read may take before the test calls it blocked (it takes milliseconds).
BLOCKED = 10.0


def write_json(path: Path, settings: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings), encoding="utf-8")
    return path


def snippets(name: str, value: str) -> dict[str, object]:
    return {SETTINGS_KEY: {"snippets": {name: value}}}


def within_limit(read: Callable[[], Config], unblock: Callable[[], None] = lambda: None) -> Config:
    """``read()`` on a thread; fails (after unblocking it) when it does not return."""
    result: list[Config] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(read())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BLOCKED)
    if thread.is_alive():
        unblock()
        thread.join(BLOCKED)
        pytest.fail("reading the settings file blocked")
    if errors:
        raise errors[0]
    return result[0]


def load_user_file(path: Path, files: SettingsFiles | None = None) -> Config:
    return within_limit(lambda: load_config(LoadRequest(user_file=path), files))


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "settings.json"
    os.mkfifo(path)
    yield path


def feed_fifo(path: Path) -> Callable[[], None]:
    """Unblock a reader stuck on the FIFO (what a writer would do)."""

    def unblock() -> None:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)

    return unblock


# --------------------------------------------------------------------------- kinds of file


def test_a_fifo_is_a_warning_and_never_blocks(fifo: Path) -> None:
    config = within_limit(lambda: load_config(LoadRequest(user_file=fifo)), feed_fifo(fifo))
    assert config.warnings == (f"{fifo} is a named pipe (FIFO), not a settings file",)
    assert config.snippets == ()


def test_a_fifo_replacing_a_good_file_keeps_its_last_content(tmp_path: Path) -> None:
    path = write_json(tmp_path / "settings.json", snippets("a", "A"))
    files = SettingsFiles()
    load_user_file(path, files)
    path.unlink()
    os.mkfifo(path)
    config = within_limit(lambda: load_config(LoadRequest(user_file=path), files), feed_fifo(path))
    assert {s.name: s.value for s in config.snippets} == {"a": "A"}
    assert config.warnings == (
        f"{path} is a named pipe (FIFO), not a settings file; keeping its last valid content",
    )


def test_a_file_swapped_for_a_fifo_after_the_stat_is_refused_without_blocking(
    fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the path is a regular file when stat-ed and a FIFO when opened. The
    open does not block (O_NONBLOCK) and the opened file is checked again."""
    regular = fifo.with_name("regular.json")
    regular.write_text("{}", encoding="utf-8")
    real_stat = os.stat

    def stat_sees_a_regular_file(path: object, *args: object, **kwargs: object) -> object:
        if os.fspath(path) == os.fspath(fifo):  # type: ignore[arg-type]
            return real_stat(regular)
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_file.os, "stat", stat_sees_a_regular_file)
    config = within_limit(lambda: load_config(LoadRequest(user_file=fifo)), feed_fifo(fifo))
    assert config.warnings == (f"{fifo} is a named pipe (FIFO), not a settings file",)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_link_to_a_device_is_a_warning_and_is_not_read(tmp_path: Path, device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    path = tmp_path / "settings.json"
    path.symlink_to(device)
    config = load_user_file(path)
    assert config.warnings == (f"{path} is a device, not a settings file",)


def test_a_socket_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        config = load_user_file(path)
    assert config.warnings == (f"{path} is a socket, not a settings file",)


# --------------------------------------------------------------------------- size


def test_a_file_over_the_size_limit_is_a_warning_naming_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    with path.open("wb") as file:
        file.truncate(MAX_SETTINGS_BYTES + 1)  # sparse: no disk used
    config = load_user_file(path)
    (warning,) = config.warnings
    assert warning.startswith(str(path))
    assert "16 MiB" in warning


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    padding = MAX_SETTINGS_BYTES - len(json.dumps(snippets("a", "A")))
    path.write_text(json.dumps(snippets("a", "A")) + " " * padding, encoding="utf-8")
    assert path.stat().st_size == MAX_SETTINGS_BYTES
    config = load_user_file(path)
    assert config.warnings == ()
    assert [s.name for s in config.snippets] == ["a"]


def test_a_file_that_grows_past_the_limit_while_read_is_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both stats say the file is small; the read still stops one byte past the limit."""
    path = tmp_path / "settings.json"
    with path.open("wb") as file:
        file.truncate(MAX_SETTINGS_BYTES + 4096)
    (tmp_path / "small.json").write_text("{}", encoding="utf-8")
    small = os.stat(tmp_path / "small.json")
    real_stat = os.stat
    monkeypatch.setattr(
        settings_file.os,
        "stat",
        lambda p, *a, **k: small if os.fspath(p) == str(path) else real_stat(p, *a, **k),
    )
    monkeypatch.setattr(settings_file.os, "fstat", lambda fd: small)
    read: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        read.append(len(data))
        return data

    monkeypatch.setattr(settings_file.os, "read", counting_read)
    config = load_user_file(path)
    monkeypatch.undo()
    assert config.warnings == (
        f"{path} is larger than 16 MiB, the limit for a settings file; not read",
    )
    assert sum(read) == MAX_SETTINGS_BYTES + 1


# --------------------------------------------------------------------------- paths


def test_a_symlink_loop_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.symlink_to(path)
    config = load_user_file(path)
    assert config.warnings == (f"{path} is a symbolic link loop",)


def test_a_trusted_project_file_that_loops_is_a_warning_not_an_exception(tmp_path: Path) -> None:
    """``Path.resolve()`` raises ``RuntimeError`` on a loop; a load must never raise."""
    user = write_json(tmp_path / "user.json", snippets("u", "U"))
    project = tmp_path / "project"
    loop = project / ".pi" / "settings.json"
    loop.parent.mkdir(parents=True)
    loop.symlink_to(loop)
    files = SettingsFiles()
    request = LoadRequest(user_file=user, project_folder=project, trust_project=True)
    config = within_limit(lambda: load_config(request, files))
    assert [s.name for s in config.snippets] == ["u"]
    assert config.warnings == (f"{loop} is a symbolic link loop",)
    # Once the loop is gone, the file is read: nothing was cached as failed.
    loop.unlink()
    write_json(loop, snippets("p", "P"))
    config = within_limit(lambda: load_config(request, files))
    assert sorted(s.name for s in config.snippets) == ["p", "u"]
    assert config.warnings == ()


def test_an_untrusted_project_file_that_loops_is_not_an_exception(tmp_path: Path) -> None:
    project = tmp_path / "project"
    loop = project / ".pi" / "settings.json"
    loop.parent.mkdir(parents=True)
    loop.symlink_to(loop)
    config = within_limit(
        lambda: load_config(LoadRequest(user_file=tmp_path / "absent.json", project_folder=project))
    )
    assert config.warnings == ()


def test_an_unreadable_file_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As root, permissions do not stop a read, so the refusal is simulated."""
    path = write_json(tmp_path / "settings.json", snippets("a", "A"))

    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(settings_file.os, "open", refuse)
    config = load_user_file(path)
    assert config.warnings == (f"cannot read {path}: Permission denied",)


def test_a_refused_read_is_read_again_at_the_next_look_until_it_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``chmod`` that gives the permission back leaves the file's stamp as it was, so
    the files whose read may pass are listed (``failed``) for the watcher to look again."""
    path = write_json(tmp_path / "settings.json", snippets("a", "A"))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    files = SettingsFiles()

    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    with monkeypatch.context() as patched:
        patched.setattr(settings_file.os, "open", refuse)
        assert files.read(path)[1] == f"cannot read {path}: Permission denied"
    assert files.read(fifo)[1] is not None
    assert files.failed == {str(path)}, "a FIFO stays one: nothing to read again"
    assert files.read(path) == (snippets("a", "A"), None)
    assert files.failed == set()


@pytest.mark.parametrize(("mode", "warnings"), [(0o644, "()"), (0, "Permission denied")])
def test_a_file_without_read_permission_is_a_warning(mode: int, warnings: str) -> None:
    """Read by a user the mode refuses: as root (CI), from a child that has become
    ``nobody`` (root reads a file whatever its mode), in a folder any user may enter (not
    pytest's, which is its owner's alone); the readable file shows that the folder is no
    obstacle."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        folder.chmod(0o711)
        path = write_json(folder / "settings.json", snippets("a", "A"))
        path.chmod(mode)

        def read() -> str:
            return repr(load_user_file(path).warnings)

        outcome = as_other_user(read) if os.geteuid() == 0 else read()
    if mode:
        assert outcome == warnings
    else:
        assert outcome == repr((f"cannot read {path}: {warnings}",))


# --------------------------------------------------------------------------- saves


def test_an_empty_file_at_first_read_is_a_warning_and_counts_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b"")
    config = load_user_file(path)
    assert config.snippets == ()
    assert config.warnings == (f"{path} is empty",)


@pytest.mark.parametrize(
    "between",
    [
        pytest.param(b"", id="truncated"),
        pytest.param(b"\xef\xbb\xbf  \n", id="blank"),
        pytest.param(b'{"piSimpleSnippets": {"snipp', id="half-written"),
    ],
)
def test_a_save_met_in_between_keeps_the_last_good_content(tmp_path: Path, between: bytes) -> None:
    path = write_json(tmp_path / "settings.json", snippets("a", "A"))
    files = SettingsFiles()
    load_user_file(path, files)
    path.write_bytes(between)
    config = load_user_file(path, files)
    assert {s.name: s.value for s in config.snippets} == {"a": "A"}
    (warning,) = config.warnings
    assert warning.startswith(str(path))
    assert warning.endswith("; keeping its last valid content")
    write_json(path, snippets("b", "B"))
    config = load_user_file(path, files)
    assert {s.name: s.value for s in config.snippets} == {"b": "B"}
    assert config.warnings == ()


# --------------------------------------------------------------------------- read_settings_bytes


def fake_stat(mode: int, size: int = 0) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, 0, 0, size, 0, 0, 0))


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        pytest.param(stat.S_IFDIR, "a directory", id="directory"),
        pytest.param(stat.S_IFIFO, "a named pipe (FIFO)", id="fifo"),
        pytest.param(stat.S_IFCHR, "a device", id="character-device"),
        pytest.param(stat.S_IFBLK, "a device", id="block-device"),
        pytest.param(stat.S_IFSOCK, "a socket", id="socket"),
        pytest.param(stat.S_IFLNK, "not a file", id="anything-else"),
    ],
)
def test_only_a_regular_file_is_opened_and_the_warning_names_what_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int, kind: str
) -> None:
    """What is not a regular file is never opened (a FIFO blocks, a device never ends);
    the warning says what the path leads to, in words a user recognizes."""
    path = tmp_path / "settings.json"
    monkeypatch.setattr(settings_file.os, "stat", lambda p: fake_stat(mode))
    monkeypatch.setattr(settings_file.os, "open", _never_opened)
    with pytest.raises(settings_file.SettingsFileError) as caught:
        settings_file.read_settings_bytes(path)
    assert str(caught.value) == f"{path} is {kind}, not a settings file"
    assert not caught.value.retry, "what the file is stays so until it changes"


def _never_opened(*args: object) -> int:
    raise AssertionError("opened")


def test_a_real_directory_is_named_a_directory(tmp_path: Path) -> None:
    with pytest.raises(settings_file.SettingsFileError) as caught:
        settings_file.read_settings_bytes(tmp_path)
    assert str(caught.value) == f"{tmp_path} is a directory, not a settings file"


def test_a_file_over_the_limit_is_refused_in_full_words(tmp_path: Path) -> None:
    """The warning names the file and the limit, and says it was not read."""
    path = tmp_path / "settings.json"
    with path.open("wb") as file:
        file.truncate(MAX_SETTINGS_BYTES + 1)
    with pytest.raises(settings_file.SettingsFileError) as caught:
        settings_file.read_settings_bytes(path)
    assert str(caught.value) == (
        f"{path} is larger than 16 MiB, the limit for a settings file; not read"
    )
    assert not caught.value.retry
    assert MAX_SETTINGS_BYTES == 16 * 1024 * 1024  # the number the words name


def test_the_file_is_opened_read_only_non_blocking_not_inherited_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """O_NONBLOCK: a FIFO swapped in after the stat does not block the open; O_CLOEXEC:
    a child process (an editor integration) does not inherit the descriptor; O_NOCTTY:
    a terminal device never becomes the server's controlling terminal."""
    path = write_json(tmp_path / "settings.json", {})
    flags: list[int] = []
    real_open = os.open

    def recording_open(p: object, f: int, *args: object) -> int:
        flags.append(f)
        return real_open(p, f, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_file.os, "open", recording_open)
    assert settings_file.read_settings_bytes(path) == b"{}"
    (used,) = flags
    assert used & (os.O_WRONLY | os.O_RDWR) == 0
    for wanted in ("O_NONBLOCK", "O_CLOEXEC", "O_NOCTTY"):
        assert used & getattr(os, wanted, 0) == getattr(os, wanted, 0), wanted


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_read_that_fails_is_a_warning_and_closes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_json(tmp_path / "settings.json", {})

    def failing_read(fd: int, n: int) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    before = _open_fds()
    monkeypatch.setattr(settings_file.os, "read", failing_read)
    with pytest.raises(settings_file.SettingsFileError) as caught:
        settings_file.read_settings_bytes(path)
    monkeypatch.undo()
    assert str(caught.value) == f"cannot read {path}: Input/output error"
    assert caught.value.retry, "an I/O error may pass: the next look reads again"
    assert _open_fds() == before


@pytest.mark.parametrize(
    ("error", "words", "retry"),
    [
        pytest.param(IsADirectoryError(errno.EISDIR, "Is a directory"),
                     "{path} is a directory, not a settings file", False,
                     id="a-directory-after-all"),
        pytest.param(OSError(errno.ELOOP, "Too many levels of symbolic links"),
                     "{path} is a symbolic link loop", False, id="loop"),
        pytest.param(OSError("no strerror"), "cannot read {path}: no strerror", True,
                     id="an-error-without-strerror-says-what-it-has"),
        pytest.param(PermissionError(errno.EACCES, "Permission denied"),
                     "cannot read {path}: Permission denied", True, id="no-permission"),
        pytest.param(OSError(errno.EMFILE, "Too many open files"),
                     "cannot read {path}: Too many open files", True, id="no-descriptor"),
        pytest.param(ValueError("embedded null byte"), "cannot read {path}: embedded null byte",
                     False, id="a-value-error"),
    ],
)  # fmt: skip
def test_an_open_that_fails_is_a_warning_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception, words: str, retry: bool
) -> None:
    """Whatever the open raises becomes one ``SettingsFileError`` naming the file: a
    loop and a directory by what they are, anything else with the system's reason. A
    refusal that may pass without the file changing (no permission until a ``chmod``,
    which keeps the file's stamp; no descriptor left) is to be read again at the next
    look (``retry``); what the path is, or a path that cannot be, is not."""
    path = write_json(tmp_path / "settings.json", {})

    def failing_open(*args: object) -> int:
        raise error

    monkeypatch.setattr(settings_file.os, "open", failing_open)
    with pytest.raises(settings_file.SettingsFileError) as caught:
        settings_file.read_settings_bytes(path)
    assert str(caught.value) == words.format(path=path)
    assert caught.value.retry is retry


def test_a_missing_file_is_none_not_an_error(tmp_path: Path) -> None:
    assert settings_file.read_settings_bytes(tmp_path / "absent.json") is None


def test_same_file_sees_through_links_and_never_raises(tmp_path: Path) -> None:
    """Two spellings of one file are the same file; paths that cannot be stat-ed (absent,
    a loop) are compared as resolved, without raising."""
    real = write_json(tmp_path / "settings.json", {})
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert settings_file.same_file(link, real)
    assert not settings_file.same_file(real, write_json(tmp_path / "other.json", {}))
    absent = tmp_path / "absent.json"
    assert settings_file.same_file(absent, tmp_path / "." / "absent.json")
    assert not settings_file.same_file(absent, tmp_path / "absent2.json")
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    assert settings_file.same_file(loop, loop)
    assert not settings_file.same_file(loop, real)


def test_is_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    assert settings_file.is_regular_file(write_json(tmp_path / "settings.json", {}))
    assert not settings_file.is_regular_file(tmp_path)
    assert not settings_file.is_regular_file(fifo)
    assert not settings_file.is_regular_file(tmp_path / "absent.json")
    assert not settings_file.is_regular_file(loop)
    assert not settings_file.is_regular_file(Path("nul\0l"))
