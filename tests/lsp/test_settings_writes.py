"""The settings file is read safely and written whole or not at all (docs/lsp.md, "Daemon:
who may connect, and what one client may cost", "Writing settings files";
docs/reliability.md).

Found by attacking the old server: a definition that raced a FIFO swapped in for the
settings file wedged every worker thread; "save as snippet" with a lone surrogate left a
0-byte file, on a full disk an 8 KiB truncated one, and a 17 MB text a file the server
then refused to read (every later save: "File exists").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .conftest import as_dict, capabilities

SAVE = "pi-snippets.saveSnippet"
STUCK = 20.0


def cannot_create_files() -> types.ClientCapabilities:
    """A client without file creation: the server writes a new settings file itself."""
    caps = capabilities("visual-studio-code")
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.resource_operations = None
    return caps


async def save(session, arguments: dict[str, object]) -> dict[str, object]:
    result = await asyncio.wait_for(
        session.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=SAVE, arguments=[arguments])
        ),
        STUCK,
    )
    return as_dict(result)


async def test_a_lone_surrogate_is_refused_and_no_file_is_made(start):
    session = await start(capabilities_override=cannot_create_files())
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await save(session, {"text": "token \ud800 here", "name": "odd"})
    assert "not valid Unicode" in str(caught.value)
    assert not session.settings_file.exists()
    assert list(session.home.iterdir()) == []


async def test_a_lone_surrogate_is_refused_through_the_editor_too(start):
    session = await start("neovim", settings={"snippets": {"greet": "Hello"}})
    with pytest.raises(JsonRpcInvalidParams, match="not valid Unicode"):
        await save(session, {"text": "\udc00", "name": "odd"})
    assert session.applied_edits == []


async def test_a_save_over_the_read_limit_is_refused(start):
    session = await start("neovim", settings={"snippets": {"greet": "Hello"}})
    before = session.settings_file.read_bytes()
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await save(session, {"text": "x" * 17_000_000, "name": "huge"})
    assert "over the 16 MiB limit of a settings file" in str(caught.value)
    assert session.applied_edits == []
    assert session.settings_file.read_bytes() == before


async def test_a_settings_file_too_large_to_read_is_not_created_again(start):
    """An existing file the server cannot read is no missing file: the save says why,
    instead of trying to create it ("File exists")."""
    session = await start(capabilities_override=cannot_create_files())
    session.settings_file.write_bytes(b" " * (16 * 1024 * 1024 + 1))
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await save(session, {"text": "x", "name": "x"})
    assert "larger than 16 MiB" in str(caught.value)
    assert "File exists" not in str(caught.value)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, almost full (skipped where ``mount`` is not allowed)."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("mount is not allowed here (tests/unit/test_safe_write.py fakes it)")
    try:
        (folder / "ballast").write_bytes(b"b" * 40_000)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


async def test_a_full_disk_leaves_no_partial_settings_file(start, tiny_disk: Path):
    target = tiny_disk / "agent" / "settings.json"
    session = await start(
        capabilities_override=cannot_create_files(), args=["--settings", str(target)]
    )
    with pytest.raises(JsonRpcException) as caught:
        await save(session, {"text": "y" * 60_000, "name": "big"})
    assert "No space left" in str(caught.value)
    assert not target.exists()
    assert sorted(p.name for p in (tiny_disk / "agent").iterdir()) == []
    # A save that fits works afterwards.
    await save(session, {"text": "small", "name": "small"})
    assert json.loads(target.read_text()) == {"piSimpleSnippets": {"snippets": {"small": "small"}}}


async def test_definitions_racing_a_fifo_swap_never_wedge_the_server(start):
    """The settings file is swapped for a FIFO and back, again and again, while
    definitions are asked: every one is answered, and so is a request after them."""
    session = await start("neovim", settings={"snippets": {"a": "A"}})
    text = session.settings_file.read_text()
    uri = session.open("prompt.md", "%a")
    regular = session.home / "regular.json"
    fifo = session.home / "fifo.json"
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                os.mkfifo(fifo)
                os.replace(fifo, session.settings_file)
                regular.write_text(text)
                os.replace(regular, session.settings_file)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        position = types.Position(0, 1)
        params = types.DefinitionParams(types.TextDocumentIdentifier(uri), position)
        for _ in range(100):
            await asyncio.wait_for(session.client.text_document_definition_async(params), STUCK)
    finally:
        stop.set()
        swapper.join(STUCK)
    answer = await asyncio.wait_for(session.request("snippets/expand", {"text": "%a"}), STUCK)
    assert as_dict(answer)["text"] == "A"
