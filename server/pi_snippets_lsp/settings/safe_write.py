"""Writing a settings file: the whole new content or nothing.

docs/lsp.md, "Daemon: who may connect, and what one client may cost" ("Writing settings
files"). The server writes a settings file itself only to create the user file when the
editor cannot ("Save selection as snippet"). Writing in place can leave a partial file
(a full disk, a crash) or an empty one (a text that cannot be encoded, found after the
file was opened), and a partial settings file loses the user's snippets. So:

- the text is encoded, and its size checked against the read limit, before anything on
  disk is touched (a file the server would then refuse to read is never written);
- the content goes to a temporary file in the same folder (same file system), created
  as any new file is (``0o666`` less the umask; an existing file's mode is kept when
  replacing), written whole and flushed to disk;
- then it takes the file's name in one step: a hard link for a file that must not exist
  yet (``FileExistsError`` when it appeared meanwhile), a rename over it otherwise. A
  failure at any point removes the temporary file and leaves the old file, or none.
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
        data = text.encode("utf-8")
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
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temporary, _CREATE, 0o666)
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
        os.close(os.open(path, _CREATE, 0o666))
        try:
            os.replace(temporary, path)
        except BaseException:  # the name claimed is an empty file: give it back
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return
    os.unlink(temporary)
