"""Settings files edited through the editor read as edited until their stamp changes
(docs/lsp.md, "The new snippet is live at once"), and how the editor features read and
create settings files."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from pi_snippets_lsp.settings.overlay import (
    MAX_TEXT_BYTES,
    EditedFiles,
    EditedSettingsFiles,
    create_file,
    read_text,
)

EDITED = '{"piSimpleSnippets": {"snippets": {"new": "edited"}}}'


def test_the_edited_text_is_read_until_the_stamp_changes(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    edited = EditedFiles()
    edited.put(path, EDITED)
    assert edited.text(path) == EDITED
    os.utime(path, ns=(1, 1))  # the editor saved it (or anything wrote it)
    assert edited.text(path) is None
    assert edited.text(path) is None  # and it stays gone


def test_a_file_created_by_the_edit_keeps_it_until_written(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("")  # what an editor's CreateFile leaves
    edited = EditedFiles()
    edited.put(path, EDITED)
    assert edited.text(path) == EDITED
    path.write_text(EDITED + " ")
    assert edited.text(path) is None


def test_drop_says_whether_there_was_an_edit(tmp_path: Path) -> None:
    edited = EditedFiles()
    path = tmp_path / "settings.json"
    assert edited.drop(path) is False
    edited.put(path, EDITED)
    assert edited.drop(path) is True
    assert edited.text(path) is None


def test_settings_files_read_the_edited_text(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"piSimpleSnippets": {"snippets": {"old": "disk"}}}')
    files = EditedSettingsFiles()
    assert files.read(path) == ({"piSimpleSnippets": {"snippets": {"old": "disk"}}}, None)
    files.edited.put(path, EDITED)
    assert files.read(path) == ({"piSimpleSnippets": {"snippets": {"new": "edited"}}}, None)
    path.write_text('{"piSimpleSnippets": {"snippets": {"saved": "disk again"}}}')
    assert files.read(path) == ({"piSimpleSnippets": {"snippets": {"saved": "disk again"}}}, None)


def test_an_edited_text_that_does_not_parse_falls_back_to_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": 1}')
    files = EditedSettingsFiles()
    files.edited.put(path, "{")
    assert files.read(path) == ({"a": 1}, None)
    assert files.edited.text(path) is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param("\ufeff{}".encode(), "{}", id="bom-dropped-as-editors-show-it"),
        pytest.param(b"\xff\xfe", None, id="not-utf-8"),
        pytest.param("中文😀".encode(), "中文😀", id="utf-8"),
    ],
)
def test_read_text(tmp_path: Path, content: bytes, expected: str | None) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    assert read_text(path) == expected


def test_read_text_opens_only_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert read_text(fifo) is None  # would block if opened
    assert read_text(tmp_path) is None
    assert read_text(tmp_path / "missing.json") is None


def test_create_file_makes_folders_and_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "deep" / "settings.json"
    create_file(path, "{\r\n}\n")
    assert path.read_bytes() == b"{\r\n}\n"
    with pytest.raises(FileExistsError):
        create_file(path, "{}")
    assert path.read_bytes() == b"{\r\n}\n"


def test_once_the_disk_changed_the_edit_is_forgotten_for_good(tmp_path: Path) -> None:
    """A changed stamp ends the edit: the disk is the truth from then on, even when the
    stamp later looks as it did (a file restored with its old time and size)."""
    path = tmp_path / "settings.json"
    path.write_text("{}")
    original = path.stat()
    edited = EditedFiles()
    edited.put(path, EDITED)
    os.utime(path, ns=(1, 1))
    assert edited.text(path) is None
    os.utime(path, ns=(original.st_atime_ns, original.st_mtime_ns))
    assert edited.text(path) is None
    assert edited.drop(path) is False


def test_an_edit_of_one_file_leaves_the_others_on_disk(tmp_path: Path) -> None:
    one, other = tmp_path / "one.json", tmp_path / "other.json"
    one.write_text("{}")
    other.write_text("{}")
    edited = EditedFiles()
    edited.put(one, EDITED)
    assert (edited.text(one), edited.text(other)) == (EDITED, None)


def test_read_text_reads_a_file_up_to_the_limit_and_no_bigger(tmp_path: Path) -> None:
    """``MAX_TEXT_BYTES`` is the largest file read: a file of exactly that size is read,
    one byte more is not (a runaway file is not loaded into an editor feature)."""
    path = tmp_path / "settings.json"
    with path.open("wb") as file:
        file.truncate(MAX_TEXT_BYTES)  # sparse: zero bytes, valid UTF-8
    text = read_text(path)
    assert text is not None and len(text) == MAX_TEXT_BYTES
    with path.open("wb") as file:
        file.truncate(MAX_TEXT_BYTES + 1)
    assert read_text(path) is None


def test_create_file_adds_a_file_next_to_existing_ones(tmp_path: Path) -> None:
    """An existing folder is fine; only an existing file is never overwritten."""
    (tmp_path / "agent").mkdir()
    create_file(tmp_path / "agent" / "settings.json", "{}")
    create_file(tmp_path / "agent" / "other.json", "中")
    assert (tmp_path / "agent" / "other.json").read_bytes() == "中".encode()


def test_the_log_says_when_an_edited_file_is_read_from_disk_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Which text the server reads is invisible in the editor; the server log tells a
    user (or a bug report) when an edited file went back to being read from disk."""
    path = tmp_path / "settings.json"
    path.write_text("{}")
    edited = EditedFiles()
    edited.put(path, EDITED)
    os.utime(path, ns=(1, 1))
    with caplog.at_level(logging.INFO, logger="pi_snippets_lsp.edited_files"):
        assert edited.text(path) is None
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, f"{path} changed on disk; reading it from disk again")
    ]


def test_an_edited_text_that_does_not_parse_is_logged_with_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Never expected (the server edits valid JSON), so when it happens the log names
    the file and carries the parse error, which names the file too."""
    path = tmp_path / "settings.json"
    path.write_text("{}")
    files = EditedSettingsFiles()
    files.edited.put(path, "{")
    with caplog.at_level(logging.ERROR, logger="pi_snippets_lsp.edited_files"):
        assert files.read(path) == ({}, None)
    (record,) = caplog.records
    assert record.getMessage() == f"the edited text of {path} does not parse; reading the disk"
    assert record.exc_info is not None
    assert str(record.exc_info[1]).startswith(f"{path} is not valid JSON: ")
