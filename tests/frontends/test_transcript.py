"""docs/agent-frontends.md's JSON-RPC transcript, replayed against the real server.

The documented client messages, headers and all, are piped byte for byte into
``python -m pi_snippets_lsp`` (and, separately, the documented shell replay is run as
written); every documented server message must come back, in the documented order, as
exactly the documented bytes: its header lines (each ending in CRLF), the blank line and
the body. Only a block marked ``abridged`` (shown without headers) is compared as a subset
of the JSON that came. So the page cannot drift from what the server writes.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_snippets_lsp.wire.framing import MessageReader, frame

from .conftest import REPO, TIMEOUT

DOC = REPO / "docs" / "agent-frontends.md"
BLOCK = re.compile(r"^```jsonrpc (client|server)( abridged)?\n(.*?)^```$", re.M | re.S)
SHELL_BLOCK = re.compile(r"^```bash\n(send\(\) \{.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    side: str
    abridged: bool
    #: The header lines as written, ``None`` for an abridged message shown without them.
    headers: tuple[str, ...] | None
    body: str

    @property
    def length(self) -> int | None:
        if self.headers is None:
            return None
        fields = dict(line.split(": ", 1) for line in self.headers)
        return int(fields["Content-Length"])

    @property
    def wire(self) -> bytes:
        """The bytes a reader copying this block would send or expect."""
        assert self.headers is not None, "an abridged message has no exact bytes"
        return "".join(f"{line}\r\n" for line in (*self.headers, "")).encode() + self.body.encode()

    @property
    def message(self) -> dict[str, Any]:
        value = json.loads(self.body)
        assert isinstance(value, dict)
        return value


def parse_block(side: str, abridged: bool, text: str) -> Block:
    head, sep, body = text.partition("\n\n")
    if not sep:  # an abridged message is shown without headers
        return Block(side, abridged, None, text.strip())
    headers = tuple(head.splitlines())
    names = [line.split(": ", 1)[0] for line in headers]
    assert names in (["Content-Length"], ["Content-Length", "Content-Type"]), headers
    body = body.rstrip("\n")
    assert "\n" not in body, "one JSON object per line"
    return Block(side, abridged, headers, body)


def doc_blocks() -> list[Block]:
    text = DOC.read_text(encoding="utf-8")
    blocks = [parse_block(m[1], bool(m[2]), m[3]) for m in BLOCK.finditer(text)]
    assert blocks, f"no transcript in {DOC}"
    return blocks


def split_frames(stdout: bytes) -> list[bytes]:
    """The server's output cut into frames, each its header block, blank line and body."""
    frames = []
    rest = stdout
    while rest:
        head, sep, _ = rest.partition(b"\r\n\r\n")
        assert sep, f"an unterminated header block: {rest[:200]!r}"
        fields = dict(line.split(b": ", 1) for line in head.split(b"\r\n"))
        end = len(head) + len(sep) + int(fields[b"Content-Length"])
        assert end <= len(rest), "a body shorter than its Content-Length"
        frames.append(rest[:end])
        rest = rest[end:]
    return frames


def read_all(stdout: bytes) -> list[dict[str, Any]]:
    stream = io.BytesIO(stdout)
    messages = list(MessageReader(stream))
    assert stream.read() == b"", "trailing bytes after the last message"
    return messages


def key(message: dict[str, Any]) -> tuple[str, object]:
    if "method" in message:
        return ("notification", message["method"])
    return ("response", message["id"])


def is_subset(documented: Any, actual: Any) -> bool:
    if isinstance(documented, dict):
        return isinstance(actual, dict) and all(
            k in actual and is_subset(v, actual[k]) for k, v in documented.items()
        )
    return bool(documented == actual)


def check_replay(stdout: bytes, returncode: int) -> None:
    assert returncode == 0, "the server must exit 0 after shutdown + exit"
    actual = read_all(stdout)
    documented = [b for b in doc_blocks() if b.side == "server"]
    assert [key(m) for m in actual] == [key(b.message) for b in documented]
    for block, message, wire in zip(documented, actual, split_frames(stdout), strict=True):
        if block.abridged:
            assert is_subset(block.message["result"], message["result"]), message["result"]
        else:
            assert wire == block.wire


def test_documented_lengths_are_byte_counts() -> None:
    blocks = doc_blocks()
    assert [b.side for b in blocks].count("client") == 6
    for block in blocks:
        if block.length is not None:
            assert block.length == len(block.body.encode("utf-8")), block.body
    methods = [b.message.get("method") for b in blocks if b.side == "client"]
    assert methods == [
        "initialize",
        "initialized",
        "snippets/expand",
        "snippets/expand",
        "shutdown",
        "exit",
    ]
    initialize = blocks[0].message
    assert initialize["params"]["capabilities"] == {}
    # snippets/didLoad is sent only to a client that asks for it.
    assert initialize["params"]["initializationOptions"]["notifications"] == ["snippets/didLoad"]


def test_transcript_replays_against_the_server(tmp_path: Path) -> None:
    stdin = b"".join(b.wire for b in doc_blocks() if b.side == "client")
    proc = subprocess.run(
        [sys.executable, "-m", "pi_snippets_lsp", "--settings", "examples/settings.json"],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)},
    )
    check_replay(proc.stdout, proc.returncode)


def test_shell_replay_runs_as_written(tmp_path: Path) -> None:
    match = SHELL_BLOCK.search(DOC.read_text(encoding="utf-8"))
    assert match, "no shell replay block"
    script = match[1]
    sent = re.findall(r"^  send '(.*)'$", script, re.M)
    assert sent == [b.body for b in doc_blocks() if b.side == "client"]
    # ``pi-snippets-lsp`` may not be on PATH here: a function stands in for it.
    prelude = f'pi-snippets-lsp() {{ "{sys.executable}" -m pi_snippets_lsp "$@"; }}\n'
    proc = subprocess.run(
        ["bash", "-c", prelude + script],
        cwd=REPO,
        capture_output=True,
        timeout=TIMEOUT,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)},
    )
    check_replay(proc.stdout, proc.returncode)


def test_an_abridged_block_is_the_only_one_without_headers() -> None:
    for block in doc_blocks():
        assert (block.headers is None) == block.abridged, block.body
        assert not (block.abridged and block.side == "client"), "a client message is sent whole"


def test_frames_are_cut_at_their_lengths() -> None:
    one = frame(b'{"a":1}')
    two = b"Content-Length: 2\r\nContent-Type: x\r\n\r\n{}"
    assert split_frames(one + two) == [one, two]


def test_the_checker_really_compares() -> None:
    assert is_subset({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert not is_subset({"a": {"b": 1}}, {"a": {"b": 2}})
    assert not is_subset({"a": 1}, {"b": 1})
    assert not is_subset({"a": [1]}, {"a": [1, 2]})
