"""The daemon's folder: its Unix socket and its token file, private to its user.

docs/lsp.md, "Daemon: who may connect, and what one client may cost". Snippets hold
secrets, so a daemon serves its own user only, the way ssh-agent and gpg-agent do: its
files live in one folder, ``$XDG_RUNTIME_DIR/pi-snippets-lsp/`` (when that variable is
unset: ``<tempdir>/pi-snippets-lsp-<uid>/``), mode 0700 and owned by the user. A folder
that is someone else's, a symbolic link, or open to others is refused: whoever controls
it could swap the socket or read the token.

- ``--socket``: the socket is ``<folder>/lsp.sock``, mode 0600 (the file mode is the
  credential; peers of another uid are closed as well, see ``daemon.py``).
- ``--tcp``/``--ws``: the token is a fresh random secret (256 bits, URL-safe text) written
  to ``<folder>/token``, mode 0600, at every start once the port is bound; clients read it
  from there. One daemon per token file: the daemon holds a lock on it
  (``.token.lock`` beside it, ``flock``) from its start to its end, and a second daemon
  that would use the same file refuses to start, saying which process holds it (give it
  its own with ``--token-file``). The lock ends with the process, however it ends
  (``kill -9`` included), so a daemon that died never keeps the next one out.

Standard library only: the clients (``client/``, the Node recipe reads the same paths)
use it too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

FOLDER_NAME: Final = "pi-snippets-lsp"
SOCKET_NAME: Final = "lsp.sock"
TOKEN_NAME: Final = "token"
#: Bytes of randomness in a token (256 bits; the design asks for at least 128).
TOKEN_BYTES: Final = 32
#: The longest token file a client reads.
MAX_TOKEN_FILE: Final = 4096
#: How a token file's lock file is opened: created 0600, never through a symbolic link.
_LOCK: Final = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
#: Tries at a lock whose file its holder removes meanwhile (each time: it is ending).
LOCK_ATTEMPTS: Final = 8
#: How a token file is opened: never through a symbolic link, never waiting on a FIFO.
_READ_TOKEN: Final = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class UnsafeFolderError(Exception):
    """The daemon's folder (or a file in it) cannot be trusted; the message says why."""


def runtime_folder(env: Mapping[str, str] | None = None, uid: int | None = None) -> Path:
    """``$XDG_RUNTIME_DIR/pi-snippets-lsp``, else ``<tempdir>/pi-snippets-lsp-<uid>``.

    A relative ``XDG_RUNTIME_DIR`` is ignored, as the XDG specification says.
    """
    environ = os.environ if env is None else env
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / FOLDER_NAME
    user = os.geteuid() if uid is None else uid
    return Path(tempfile.gettempdir()) / f"{FOLDER_NAME}-{user}"


def default_socket_path(env: Mapping[str, str] | None = None) -> Path:
    return runtime_folder(env) / SOCKET_NAME


def default_token_path(env: Mapping[str, str] | None = None) -> Path:
    return runtime_folder(env) / TOKEN_NAME


def folder_problem(st: os.stat_result, uid: int) -> str | None:
    """Why a folder with this ``lstat`` cannot hold the daemon's files, or None.

    It must be a real directory (not a symbolic link), owned by ``uid``, with no
    permission for group or others.
    """
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != uid:
        return f"belongs to uid {st.st_uid}, not to uid {uid}"
    if st.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(st.st_mode):04o}: others may use it (it must be 0700)"
    return None


def ensure_private_folder(folder: Path) -> Path:
    """Create ``folder`` (mode 0700) when missing; raise ``UnsafeFolderError`` when it is
    not the user's own private folder. Its parent must exist."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    try:
        st = os.lstat(folder)
    except OSError as exc:
        raise UnsafeFolderError(f"cannot use {folder}: {exc.strerror or exc}") from None
    problem = folder_problem(st, os.geteuid())
    if problem is not None:
        raise UnsafeFolderError(f"refusing to use {folder}: it {problem}")
    return folder


def new_token() -> str:
    """A fresh token: 256 random bits as URL-safe text."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def write_private_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600, atomically: a temporary file created
    0600 in the same folder, then renamed over ``path``. Nobody can read it in between,
    and a reader never sees half a token."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(text.encode())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read_token(path: Path) -> str:
    """The token in ``path`` (a client reads it before connecting).

    Raises ``OSError`` when it cannot be read, ``UnsafeFolderError`` when it is not a
    regular file of ours that only we can read (a token others can read is no secret).
    """
    fd = os.open(path, _READ_TOKEN)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFolderError(f"{path} is not a regular file")
        if st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise UnsafeFolderError(f"{path} must be the user's own file, mode 0600")
        data = os.read(fd, MAX_TOKEN_FILE)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").strip()


def remove_if_holding(path: Path, text: str) -> None:
    """Remove the token file at the daemon's end, unless another daemon has replaced it."""
    with contextlib.suppress(OSError, UnsafeFolderError):
        if read_token(path) == text:
            os.unlink(path)


def lock_path(token_file: Path) -> Path:
    """The lock file of a token file: ``.NAME.lock`` beside it."""
    return token_file.with_name(f".{token_file.name}.lock")


def lock_token_file(token_file: Path) -> int:
    """Take the lock of ``token_file`` for this process (see the module's docstring);
    the descriptor that holds it. Raises ``UnsafeFolderError`` when a running process
    holds it, naming that process.

    The lock file is created 0600, never through a symbolic link; a lock taken on a file
    that was removed meanwhile (by the daemon that held it, ending) is taken again.
    """
    path = lock_path(token_file)
    for _ in range(LOCK_ATTEMPTS):
        fd = os.open(path, _LOCK, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).strip().decode(errors="replace") or "?"
                raise UnsafeFolderError(
                    f"another daemon (pid {holder}) uses the token file {token_file}: stop "
                    "it, or give this one a token file of its own with --token-file FILE"
                ) from None
            st = os.fstat(fd)
            try:
                now = os.lstat(path)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                if st.st_uid != os.geteuid() or not stat.S_ISREG(st.st_mode):
                    raise UnsafeFolderError(
                        f"refusing to use {path}: it is not the user's own file"
                    )
                mine = f"{os.getpid()}\n".encode()
                os.write(fd, mine)
                os.ftruncate(fd, len(mine))
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # removed by its last holder meanwhile: take the new one
    raise UnsafeFolderError(f"cannot lock {path}: it keeps being replaced")


def unlock_token_file(token_file: Path, fd: int) -> None:
    """Remove the lock file (while still holding it), then let go of it."""
    with contextlib.suppress(OSError):
        st, now = os.fstat(fd), os.lstat(lock_path(token_file))
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
            os.unlink(lock_path(token_file))
    with contextlib.suppress(OSError):
        os.close(fd)
