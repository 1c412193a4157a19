"""Which folder a request belongs to, and which settings files each folder reads.

docs/configuration.md, "Layers". Every adapter asks these questions: the LSP session of a
document's folder, the MCP server of its client's roots, the command line and the prompt
hooks of the folder they run in. The answers are pure functions of paths, table-tested
without a server, so that a folder means the same thing to every client.

A folder is a normalized file-system path (``os.path.normpath``), never a URI: a ``file:``
URI becomes one through ``path_of_uri``, and any other URI names no folder on this
machine. ``None`` stands for "no folder": the user settings alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from pi_snippets_lsp.settings.layers import project_settings_path


def path_of_uri(uri: str) -> str | None:
    """The normalized file-system path of a ``file:`` URI; None for any other URI.

    A host other than ``localhost`` is a network path (``//host/share``), as Windows and
    Samba name one.
    """
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if parsed.netloc and parsed.netloc != "localhost":
        path = f"//{parsed.netloc}{path}"
    return os.path.normpath(path) if path else None


def root_folder(uris: Sequence[str]) -> str | None:
    """The folder of the first ``file:`` URI among a client's roots; None without one
    (MCP roots are URIs; only a ``file:`` one is a folder on this machine)."""
    return next(filter(None, map(path_of_uri, uris)), None)


def is_inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (by path components)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def folder_for(folders: Sequence[str], path: str | None, default: str | None) -> str | None:
    """The workspace folder holding ``path``: the deepest one; else ``default``.

    A document belongs to the innermost folder, as a project inside a monorepo has its
    own ``.pi/settings.json``. Every folder holding ``path`` is a prefix of it, so of
    any two the deeper one is the greater string.
    """
    if path is not None:
        holding = [f for f in folders if is_inside(path, f)]
        if holding:
            return max(holding)
    return default


def default_folder(folders: Sequence[str], root: str | None, project: str | None) -> str | None:
    """The folder of a request without a document: the first workspace folder, else the
    workspace root, else ``--project``."""
    if folders:
        return folders[0]
    if root:
        return os.path.normpath(root)
    if project:
        return os.path.normpath(project)
    return None


def project_folder(root: str | None, project: str | None, trust: bool) -> Path | None:
    """The project of a process that serves one folder (the MCP server, the command
    line, a prompt hook): the client's root when the project is trusted (an untrusted
    client cannot move it), else ``--project``, else the current directory; None when
    that is gone."""
    if root is not None and trust:
        return Path(root)
    if project:
        return Path(project).expanduser()
    try:
        return Path.cwd()
    except OSError:
        return None


def generation_keys(folders: Sequence[str], default: str | None) -> list[str | None]:
    """Every folder that gets a generation: each workspace folder, and the default."""
    return list(dict.fromkeys([*folders, default]))


def settings_files(user_file: Path, keys: Iterable[str | None], trust: bool) -> list[Path]:
    """Every settings file a generation reads: the user file and, for a trusted project,
    each folder's ``.pi/settings.json``."""
    files = [user_file]
    if trust:
        files.extend(project_settings_path(key) for key in keys if key)
    return list(dict.fromkeys(files))


def is_settings_path(path: str, user_file: Path, keys: Iterable[str | None]) -> bool:
    """Whether ``path`` is a settings file the session reads: the user file, or the
    ``.pi/settings.json`` of a workspace folder, trusted or not (an untrusted one is what
    the user is editing, to trust it later). A symlink to one counts as that one."""
    candidates = [user_file, *(project_settings_path(key) for key in keys if key)]
    normalized = {os.path.normpath(c) for c in candidates}
    if os.path.normpath(path) in normalized:
        return True
    real = os.path.realpath(path)
    return any(os.path.realpath(c) == real for c in normalized)


def files_to_poll(
    files: Sequence[Path], folders: Sequence[str], client_watches: bool
) -> list[Path]:
    """The settings files the server must watch itself.

    All of them when the client cannot watch for us. When it can, still those outside
    every workspace folder: some clients accept a watcher registration but only watch
    inside their folders, and the user settings file usually lies outside.
    """
    if not client_watches:
        return list(files)
    return [f for f in files if not any(is_inside(str(f), folder) for folder in folders)]
