"""Writing a settings file: the whole new content or nothing.

docs/lsp.md, "Daemon: who may connect, and what one client may cost" ("Writing settings
files"). The server writes a settings file itself only to create the user file when the
editor cannot ("Save selection as snippet"). Writing in place can leave a partial file
(a full disk, a crash) or an empty one (a text that cannot be encoded, found after the
file was opened), and a partial settings file loses the user's snippets. So:

- the text is encoded, and its size checked against the read limit, before anything on
  disk is touched (a file the server would then refuse to read is never written);
- the content goes to a temporary file in the same folder (same file system), created
  0600 (a settings file holds secrets: a new one stays 0600, an existing file's mode is
  kept when replacing), written whole and flushed to disk;
- then it takes the file's name in one step: a hard link for a file that must not exist
  yet (``FileExistsError`` when it appeared meanwhile), a rename over it otherwise. A
  failure at any point removes the temporary file and leaves the old file, or none.
- A crash (``kill -9``, a power cut) while the temporary file is written cannot remove
  it: it is named ``.NAME.PID.HEX.tmp`` after the process that wrote it, and the next
  write to that folder removes those of processes that no longer run (one of a live
  process is another save under way, left alone).

Missing folders are made (``--settings`` may name a file in a folder not made yet),
and only where no other user can reach into them: each folder made is 0700 and this
user's; the folder the file goes into, when it exists, must be this user's or root's,
and writable by others only with the sticky bit (``/tmp``); no folder on the way may be
a symbolic link of another user. Otherwise nothing is written, and the error says why:
a folder another user made (or their symbolic link to a folder of theirs) would let
them read the snippets and replace the file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from pi_snippets_lsp.settings.files import MAX_SETTINGS_BYTES

_CREATE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class SettingsWriteError(ValueError):
    """The content cannot be written (too large, not encodable); the message says why."""


def encoded_settings(text: str, path: Path) -> bytes:
    """``text`` as the UTF-8 bytes of a settings file, or ``SettingsWriteError``."""
    try:
        data = text.encode("utf-8")  # pragma: no mutate (a codec name: "UTF-8" is the same)
    except UnicodeEncodeError as exc:
        raise SettingsWriteError(
            f"the text for {path} is not valid Unicode (a lone surrogate at character "
            f"{exc.start}); not written"
        ) from None
    if len(data) > MAX_SETTINGS_BYTES:
        raise SettingsWriteError(
            f"{path} would be {len(data) / (1 << 20):.1f} MiB, over the 16 MiB limit of a "
            "settings file (it could not be read back); not written"
        )
    return data


def write_settings_file(path: Path, text: str, *, replace: bool = False) -> None:
    """Write ``text`` to ``path`` whole or not at all (see the module's docstring).

    ``replace``: the file may exist and is replaced (its mode kept); otherwise it must
    not exist (``FileExistsError``). Raises ``SettingsWriteError`` before touching the
    disk for a text that is too large or not encodable, ``OSError`` for the disk's
    refusals (no space, no permission), with no trace left of the attempt.
    """
    data = encoded_settings(text, path)
    make_private_folders(path.parent)
    remove_stale_temporaries(path)
    temporary = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temporary, _CREATE, 0o600)
    try:
        try:
            if replace:
                with contextlib.suppress(FileNotFoundError):
                    os.fchmod(fd, stat.S_IMODE(os.stat(path).st_mode))
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temporary, path)
        else:
            _take_name(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def make_private_folders(folder: Path) -> None:
    """Make ``folder`` and its missing parents, 0700, or raise ``SettingsWriteError``
    saying why not (see the module's docstring)."""
    me = os.geteuid()
    missing: list[Path] = []
    existing = Path(os.path.abspath(folder))
    while not os.path.lexists(existing):
        missing.append(existing)
        existing = existing.parent
    for ancestor in [*reversed(existing.parents), existing]:
        st = os.lstat(ancestor)
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (me, 0):
            raise SettingsWriteError(
                f"{ancestor} is a symbolic link of another user (uid {st.st_uid}); "
                f"not writing {folder} through it"
            )
    if not missing:
        _check_shared_folder(existing, me)
        return
    _check_shared_folder(existing, me)
    for made in reversed(missing):
        try:
            os.mkdir(made, 0o700)
        except FileExistsError:  # made meanwhile: by us, or by someone else?
            st = os.lstat(made)
            if stat.S_ISLNK(st.st_mode) or st.st_uid != me or st.st_mode & 0o077:
                raise SettingsWriteError(
                    f"{made} appeared meanwhile and is not this user's private folder; not written"
                ) from None


def _check_shared_folder(folder: Path, me: int) -> None:
    """The existing folder files or folders go into: this user's or root's, and writable
    by others only with the sticky bit."""
    st = os.stat(folder)
    if not stat.S_ISDIR(st.st_mode):
        raise SettingsWriteError(f"{folder} is not a folder; not written")
    if st.st_uid not in (me, 0):
        raise SettingsWriteError(
            f"{folder} belongs to another user (uid {st.st_uid}), who could read and replace "
            "the settings file; not written"
        )
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise SettingsWriteError(
            f"{folder} is writable by other users (mode {stat.S_IMODE(st.st_mode):04o}), who "
            "could replace the settings file; not written"
        )


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files a crashed write to ``path`` left: ours (this user's),
    named after a process that no longer runs."""
    prefix = f".{path.name}."
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix) :].partition(".")[0]
        if not pid_text.isdigit() or _running(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            stale = path.parent / name
            if os.lstat(stale).st_uid == os.geteuid():
                os.unlink(stale)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process (or no pid at all): not ours to judge
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _take_name(temporary: Path, path: Path) -> None:
    """Give the written file the name ``path``, which must be free."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: claim the name, then rename
        os.close(os.open(path, _CREATE, 0o600))
        try:
            os.replace(temporary, path)
        except BaseException:  # the name claimed is an empty file: give it back
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return
    os.unlink(temporary)
