"""A settings file the MCP server could not read is read again once it can be.

docs/configuration.md, "When the configuration is read again": a read that failed in a
way that may pass (no permission) does not mark the file as seen. Tried as a user meets
it: the file is not readable by the server's user, then ``chmod 644`` (which leaves the
content, and so the file's size and modification time, as they were). As root (CI), the
file is another user's (uid 65534, mode 0600) and the server runs without the
capabilities that let root read anyone's files (``setpriv``), so it meets the same
``EACCES`` a user meets.

Spoken as raw JSON lines, so the test holds whatever answers them.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .conftest import PATIENCE, POLL, SNIPPETS, settings_text

NOBODY = 65534


class Lines:
    """A server process spoken to one JSON line at a time."""

    def __init__(self, command: list[str], **popen: Any) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen
        )
        self.next_id = 0
        self.buffer = b""

    def send(self, message: dict[str, object]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, object]) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        out = self.process.stdout.fileno()
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            line, newline, rest = self.buffer.partition(b"\n")
            if newline:
                self.buffer = rest
                message = json.loads(line)
                if message.get("id") == self.next_id:
                    return message["result"]
                continue
            ready, _, _ = select.select([out], [], [], 0.5)
            if ready:
                chunk = os.read(out, 65536)
                assert chunk, "the server closed its output"
                self.buffer += chunk
        raise AssertionError(f"no answer to {method} in {PATIENCE} s")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(PATIENCE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def test_a_file_the_server_could_not_read_is_listed_once_it_can(tmp_path: Path) -> None:
    shared_folder = tmp_path
    settings = shared_folder / "settings.json"
    settings.write_text(settings_text(SNIPPETS), encoding="utf-8")
    home = shared_folder / "home"
    home.mkdir()
    command: list[str] = []
    if os.geteuid() == 0:
        os.chown(settings, NOBODY, NOBODY)
        settings.chmod(0o600)
        drop = "-dac_override,-dac_read_search"
        command = ["setpriv", "--bounding-set", drop, "--inh-caps", drop, "--"]
    else:
        settings.chmod(0o000)
    env = {**os.environ, "HOME": str(home), "PI_CODING_AGENT_DIR": str(home)}
    command += [
        sys.executable,
        "-m",
        "pi_snippets_lsp",
        "mcp",
        "--settings",
        str(settings),
        "--poll-interval",
        str(POLL),
    ]
    server = Lines(command, env=env, cwd=str(shared_folder))
    try:
        server.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert server.request("prompts/list", {})["prompts"] == []
        stamp = settings.stat()
        settings.chmod(0o644)
        after = settings.stat()
        assert (after.st_mtime_ns, after.st_size) == (stamp.st_mtime_ns, stamp.st_size)
        deadline = time.monotonic() + PATIENCE
        listed: list[str] = []
        while time.monotonic() < deadline and not listed:
            time.sleep(POLL)
            listed = [p["name"] for p in server.request("prompts/list", {})["prompts"]]
        assert sorted(listed) == sorted(SNIPPETS)
    finally:
        server.close()
