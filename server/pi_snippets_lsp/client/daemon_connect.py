"""Reaching a running daemon: its socket, and the token it asks for.

docs/agent-frontends.md, "One daemon, many frontends". A ``--socket`` daemon needs no
token (the socket's file mode keeps other users out); a ``--tcp`` one wants the token it
wrote to its token file, sent as ``initializationOptions.token``. The client reads that
file itself (the default one, or the ``--token-file`` the daemon was given), so a caller
names the daemon and nothing else.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from pi_snippets_lsp.client.errors import ServerUnavailableError, SnippetsClientError
from pi_snippets_lsp.wire.daemon_files import (
    UnsafeFolderError,
    default_socket_path,
    default_token_path,
    read_token,
)


def daemon_token(token: str | None, token_file: str | os.PathLike[str] | None) -> str:
    """``token``, else the content of ``token_file`` (default: the daemon's token file)."""
    if token is not None:
        return token
    path = Path(token_file) if token_file is not None else default_token_path()
    try:
        return read_token(path)
    except FileNotFoundError:
        raise ServerUnavailableError(
            f"no token file {path}: is a `pi-snippets-lsp --tcp` daemon running "
            "(or was it started with another --token-file)?"
        ) from None
    except (OSError, UnsafeFolderError) as exc:
        raise SnippetsClientError(f"cannot read the daemon's token from {path}: {exc}") from None


def connect_unix(
    path: str | os.PathLike[str] | None, retry: float, timeout: float
) -> socket.socket:
    """Connect to a ``--socket`` daemon (default: its default socket), retrying for
    ``retry`` seconds while nothing listens yet."""
    where = Path(path) if path is not None else default_socket_path()
    deadline = time.monotonic() + retry
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(where))
            return sock
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            sock.close()
            if time.monotonic() >= deadline:
                raise ServerUnavailableError(
                    f"no pi-snippets-lsp server listens at {where} (start one with "
                    "`pi-snippets-lsp --socket`)"
                ) from exc
            time.sleep(0.05)
        except OSError as exc:
            sock.close()
            raise ServerUnavailableError(f"cannot connect to {where}: {exc}") from exc


def connect_tcp(host: str, port: int, retry: float, timeout: float) -> socket.socket:
    """Connect, retrying a refused connection for ``retry`` seconds."""
    deadline = time.monotonic() + retry
    while True:
        try:
            return socket.create_connection((host, port), timeout=timeout)
        except ConnectionRefusedError as exc:
            if time.monotonic() >= deadline:
                raise ServerUnavailableError(
                    f"no pi-snippets-lsp server listens at {host}:{port} "
                    f"(connection refused for {retry} s; start one with "
                    f"`pi-snippets-lsp --tcp --port {port}`)"
                ) from exc
            time.sleep(0.05)
        except OSError as exc:
            raise ServerUnavailableError(f"cannot connect to {host}:{port}: {exc}") from exc
