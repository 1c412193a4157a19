"""Settings files edited through the editor read as edited until their stamp changes
(docs/lsp.md, "The new snippet is live at once"), and how the editor features read and
create settings files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_snippets_lsp.edited_files import (
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
