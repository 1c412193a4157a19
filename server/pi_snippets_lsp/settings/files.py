"""One settings file on disk: read it without blocking, without limit, or raising.

docs/configuration.md, "Reading a settings file". A settings path is the user's to
choose, so it may lead anywhere: a FIFO (a read blocks until someone writes), a device
(``/dev/zero`` never ends), a socket, a directory, a symbolic link loop, a file without
permission, a runaway file of gigabytes. Only a regular file of at most
``MAX_SETTINGS_BYTES`` is read; everything else is a ``SettingsFileError`` whose message
names the file, which the configuration reports as a warning.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final


class SettingsFileError(Exception):
    """A settings file exists but cannot be used; the message names the file.

    ``retry``: the read failed for a reason that may pass without the file changing (no
    permission until a ``chmod``, which leaves its stamp as it was; too many open files;
    an I/O error), so the next look must read it again rather than trust its stamp.
    """

    def __init__(self, message: str, *, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


#: The largest settings file read, in bytes. A bigger one is a warning, not an
#: allocation: a settings path that leads to a runaway file cannot exhaust memory.
MAX_SETTINGS_BYTES: Final = 16 * 1024 * 1024
_LIMIT_TEXT: Final = "16 MiB"

#: Read-only, never blocking (a FIFO opened for reading waits for a writer otherwise),
#: never the controlling terminal, not inherited. The flags a platform lacks are left out.
_OPEN_FLAGS: Final = os.O_RDONLY | sum(
    getattr(os, flag, 0) for flag in ("O_NONBLOCK", "O_CLOEXEC", "O_NOCTTY")
)

_NOT_REGULAR: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_regular(key: str, st: os.stat_result) -> None:
    """Only a regular file is read: a FIFO would block the reader until someone writes,
    a device (``/dev/zero``) never ends, a directory has no text."""
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _NOT_REGULAR if test(st.st_mode)), "not a file")
        raise SettingsFileError(f"{key} is {kind}, not a settings file")
    if st.st_size > MAX_SETTINGS_BYTES:
        raise SettingsFileError(_too_large(key))


def _too_large(key: str) -> str:
    return f"{key} is larger than {_LIMIT_TEXT}, the limit for a settings file; not read"


def _os_problem(key: str, exc: OSError | ValueError) -> SettingsFileError:
    if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
        return SettingsFileError(f"{key} is a symbolic link loop")
    if isinstance(exc, IsADirectoryError):
        return SettingsFileError(f"{key} is a directory, not a settings file")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return SettingsFileError(f"cannot read {key}: {reason}", retry=isinstance(exc, OSError))


def read_settings_bytes(path: Path) -> bytes | None:
    """The bytes of a settings file, or None when there is no file at ``path``.

    docs/configuration.md, "Reading a settings file". Nothing here can block or grow
    without limit: the path is stat-ed first and only a regular file of at most
    ``MAX_SETTINGS_BYTES`` is opened; it is opened non-blocking and the opened file is
    checked again (``fstat``), so a file swapped for a FIFO between the two looks is
    refused too; at most one byte over the limit is ever read. Every other problem
    (a symbolic link loop, no permission, ...) raises ``SettingsFileError`` naming the
    file.
    """
    key = str(path)
    try:
        _check_regular(key, os.stat(path))
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise _os_problem(key, exc) from None
    try:
        _check_regular(key, os.fstat(fd))
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_SETTINGS_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_SETTINGS_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _os_problem(key, exc) from None
    finally:
        os.close(fd)
    if size > MAX_SETTINGS_BYTES:  # it grew after the checks
        raise SettingsFileError(_too_large(key))
    return b"".join(chunks)


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file. Never raises: a path that cannot be resolved
    (a symbolic link loop, no permission) is compared as written, and its problem is
    reported when it is read."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def is_regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
