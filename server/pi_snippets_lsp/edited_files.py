"""Settings files the server has edited through the editor, read as edited until saved.

docs/lsp.md, "Save selection as snippet". The server edits the user settings file through
the client (``workspace/applyEdit``), and most editors leave the edited file unsaved
(Neovim and VS Code do). A snippet saved that way must work at once, so after the client
answers that the edit was applied, the session reads that file as the edited text, until
the file's stamp on disk changes (the editor saved it, or anything else wrote it): then
the disk is the truth again. Closing the file in the editor also ends it (a closed buffer
was either saved, which changes the stamp, or discarded).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from pi_snippets_lsp.settings.files import SettingsFileError
from pi_snippets_lsp.settings.layers import SettingsFiles, parse_settings_text
from pi_snippets_lsp.settings.watch import Stamp, stamp

log = logging.getLogger(__name__)


@dataclass
class EditedFiles:
    """Path -> (edited text, the file's stamp when the edit was applied)."""

    _entries: dict[str, tuple[str, Stamp]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def put(self, path: Path, text: str) -> None:
        """``path`` now reads as ``text`` until its stamp changes."""
        with self._lock:
            self._entries[str(path)] = (text, stamp(path))

    def text(self, path: Path) -> str | None:
        """The edited text of ``path`` while its stamp is unchanged; None otherwise."""
        key = str(path)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if stamp(path) != entry[1]:
                log.info("%s changed on disk; reading it from disk again", key)
                del self._entries[key]
                return None
            return entry[0]

    def drop(self, path: Path) -> bool:
        """Forget the edited text of ``path``; whether there was one."""
        with self._lock:
            return self._entries.pop(str(path), None) is not None


@dataclass
class EditedSettingsFiles(SettingsFiles):
    """:class:`..config.SettingsFiles` that reads an edited file as its edited text."""

    edited: EditedFiles = field(default_factory=EditedFiles)

    def read(self, path: Path) -> tuple[dict[str, object] | None, str | None]:
        text = self.edited.text(path)
        if text is None:
            return super().read(path)
        try:
            return parse_settings_text(text, str(path)), None
        except SettingsFileError:  # our own edit of valid JSON; never expected
            log.exception("the edited text of %s does not parse; reading the disk", path)
            self.edited.drop(path)
            return super().read(path)


#: The largest settings file the editor features read (a settings file is a few KiB).
MAX_TEXT_BYTES = 16 * 1024 * 1024


def read_text(path: Path) -> str | None:
    """A settings file's text as an editor shows it (UTF-8, without a leading BOM), or
    None when there is no regular, readable, UTF-8 file of a sane size at ``path``.

    Only a regular file is opened: opening a FIFO would block.
    """
    try:
        if not path.is_file() or path.stat().st_size > MAX_TEXT_BYTES:
            return None
        return path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except (OSError, UnicodeDecodeError):
        return None


def create_file(path: Path, text: str) -> None:
    """Create ``path`` (and its folders) holding ``text``; never overwrite a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # UTF-8 and no newline translation on every platform; on Linux (where the tests
    # run) the locale's encoding and newline=None write the same bytes.
    with path.open("x", encoding="utf-8", newline="") as file:  # pragma: no mutate (Linux: same)
        file.write(text)
