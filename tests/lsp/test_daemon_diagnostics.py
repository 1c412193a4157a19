"""A large settings document's diagnostics in the daemon (docs/reliability.md): computed
off the event loop, one job per document however many changes come, and sent only when
the connection has room, so they neither hold another session nor grow the daemon past
``--max-unsent`` when the client does not read. Memory is read from /proc; no test
asserts a time: the order of events proves what ran where.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from pi_snippets_lsp.lsp.handlers.typo_hints import MAX_TYPO_HINTS
from pi_snippets_lsp.wire.framing import encode

from .daemons import STUCK, Daemon, Raw, daemons
from .test_daemon_limits import MIB
from .test_daemon_strangers import storm_growth

__all__ = ["daemons"]  # the fixture

PUBLISH = "textDocument/publishDiagnostics"


def problems(count: int, key: str = "") -> str:
    """A settings text with ``count`` invalid snippet names (a diagnostic each)."""
    snippets = {f"Bad Name {i} {key}": "v" for i in range(count)}
    return json.dumps({"piSimpleSnippets": {"snippets": snippets}})


def did_open(uri: str, text: str, version: int = 1) -> dict[str, Any]:
    item = {"uri": uri, "languageId": "json", "version": version, "text": text}
    return {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}


def did_change(uri: str, text: str, version: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"text": text}]},
    }  # fmt: skip


class Events:
    """What the test's connections receive, in one order across them."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def add(self, name: str, message: dict[str, Any]) -> None:
        with self.lock:
            self.seen.append((name, message))

    def read(self, name: str, raw: Raw) -> threading.Thread:
        def run() -> None:
            while (message := raw.receive()) is not None:
                self.add(name, message)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def wait(self, what: Callable[[str, dict[str, Any]], bool]) -> int:
        """The index of the first event that is ``what``, once it has come."""
        deadline = time.monotonic() + 3 * STUCK
        while time.monotonic() < deadline:
            with self.lock:
                for i, (name, message) in enumerate(self.seen):
                    if what(name, message):
                        return i
            time.sleep(0.01)
        seen = [(name, m.get("method", m.get("id"))) for name, m in self.seen]
        raise AssertionError(f"never came; seen: {seen}")


def is_publish(message: dict[str, Any]) -> bool:
    return message.get("method") == PUBLISH


def answer(to: str, msg_id: int) -> Callable[[str, dict[str, Any]], bool]:
    return lambda name, m: name == to and m.get("id") == msg_id and "method" not in m


def published(to: str, version: int | None = None) -> Callable[[str, dict[str, Any]], bool]:
    return lambda name, m: (
        name == to
        and m.get("method") == PUBLISH
        and (version is None or m["params"].get("version") == version)
    )


def test_a_large_settings_document_holds_no_other_session(
    daemons: Callable[..., Daemon],
) -> None:
    """A settings document with 20,000 problems opens in one session: that session's next
    request, and then another session's, are answered before its diagnostics are
    computed, and the diagnostics follow, all of them. (The old daemon computed them on
    its event loop: every session waited for them, a second or more.)"""
    daemon = daemons("--tcp")
    events = Events()
    big, other = Raw.tcp(daemon), Raw.tcp(daemon)
    big.handshake({})
    other.handshake({"a": "A"})
    events.read("big", big)
    uri = (daemon.home / "settings.json").as_uri()
    big.send(did_open(uri, problems(20_000)))
    big.send({"jsonrpc": "2.0", "id": 2, "method": "snippets/expand", "params": {"text": "x"}})
    answered = events.wait(answer("big", 2))
    other.send({"jsonrpc": "2.0", "id": 3, "method": "snippets/expand", "params": {"text": "%a"}})
    assert other.response(3)["result"]["text"] == "A"
    events.add("other", {"id": 3})
    other_answered = events.wait(answer("other", 3))
    done = events.wait(published("big"))
    assert answered < other_answered < done, "the diagnostics came before the answers"
    diagnostics = events.seen[done][1]["params"]["diagnostics"]
    assert len(diagnostics) == 20_000 and all("invalid name" in d["message"] for d in diagnostics)


def test_the_diagnostics_follow_the_last_change(daemons: Callable[..., Daemon]) -> None:
    """Changes sent faster than the diagnostics are computed: the last version's are
    published, and no publish is older than one sent before it (a job superseded by a
    change drops its result)."""
    daemon = daemons("--tcp")
    events = Events()
    raw = Raw.tcp(daemon)
    raw.handshake({})
    events.read("raw", raw)
    uri = (daemon.home / "settings.json").as_uri()
    raw.send(did_open(uri, problems(3_000)))
    for version in range(2, 42):
        raw.send(did_change(uri, problems(3_000 + version), version))
    fine = json.dumps({"piSimpleSnippets": {"snippets": {"ok": "v"}}, "x": "y" * 2000})
    raw.send(did_change(uri, problems(3_100), 42))
    last = events.wait(published("raw", 42))
    versions = [m["params"]["version"] for _, m in events.seen[: last + 1] if is_publish(m)]
    assert versions == sorted(versions), versions
    assert len(events.seen[last][1]["params"]["diagnostics"]) == 3_100
    raw.send(did_change(uri, fine, 43))  # large, no problem: none published
    assert events.seen[events.wait(published("raw", 43))][1]["params"]["diagnostics"] == []
    raw.send(did_change(uri, problems(3_000), 44))
    raw.send(did_change(uri, "{}", 45))  # small: checked at once, the job's result dropped
    small = events.wait(published("raw", 45))
    raw.send(did_change(uri, problems(2_000), 46))
    end = events.wait(published("raw", 46))
    after = [m["params"]["version"] for _, m in events.seen[small + 1 : end + 1] if is_publish(m)]
    assert after == [46], "a stale result came after a newer one"


def test_a_storm_of_large_changes_from_a_client_that_never_reads_costs_the_bound(
    daemons: Callable[..., Daemon],
) -> None:
    """``didChange`` after ``didChange``, each a whole settings text with 1,000 problems
    whose diagnostics take longer to compute than the change to send, from a client that
    never reads: the daemon computes one job at a time, writes only while the connection
    has room, and grows by less than 64 MiB (a job per change, each keeping its text and
    writing on its own, grew it by 80 MiB and more); another session is answered."""
    daemon = daemons("--tcp", "--stuck-timeout", "600")
    hog = Raw.tcp(daemon)
    hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    hog.handshake({})
    uri = (daemon.home / "settings.json").as_uri()
    hog.send(did_open(uri, problems(1_000, "k" * 100)))
    storm = b"".join(
        encode(did_change(uri, problems(1_000, "k" * 100 + str(v)), v)) for v in range(2, 1002)
    )
    growth = storm_growth(daemon, hog, storm, "a storm of large changes")
    assert growth < 64 * MIB, f"the daemon grew by {growth // MIB} MiB"


def typos(count: int, version: int) -> str:
    """A prompt with ``count`` markers one transposition away from ``%review``."""
    return "%reveiw " * count + f"v{version}\n"


def test_a_storm_of_prompts_full_of_typos_from_a_client_that_never_reads_costs_the_bound(
    daemons: Callable[..., Daemon],
) -> None:
    """The typo hints of a prompt (docs/lsp.md, "did you mean") are pushed like the
    settings diagnostics: ``didChange`` after ``didChange`` of a prompt with 32,000
    typos, from a client that never reads, costs the daemon less than 64 MiB (a hint
    per typo, published once per change whatever the room, grew it by 76 MiB); the
    client still gets hints, at most ``MAX_TYPO_HINTS`` a document."""
    daemon = daemons("--tcp", "--stuck-timeout", "600")
    hog = Raw.tcp(daemon)
    hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    init: dict[str, Any] = {
        "pollInterval": 0,
        "piSimpleSnippets": {"snippets": {"review": "Review"}},
        "token": hog.token,
    }
    capabilities = {"textDocument": {"publishDiagnostics": {}}}
    hog.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"capabilities": capabilities, "initializationOptions": init}})  # fmt: skip
    assert "result" in hog.response(1)
    hog.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = (daemon.home / "prompt.md").as_uri()
    item = {"uri": uri, "languageId": "markdown", "version": 1, "text": typos(32_000, 1)}
    hog.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
              "params": {"textDocument": item}})  # fmt: skip
    while (message := hog.receive()) is not None:
        if message.get("method") == PUBLISH and message["params"]["uri"] == uri:
            hints = message["params"]["diagnostics"]
            break
    assert 0 < len(hints) <= MAX_TYPO_HINTS
    assert hints[0]["message"] == "unknown snippet %reveiw; did you mean %review?"
    storm = b"".join(encode(did_change(uri, typos(32_000, v), v)) for v in range(2, 1002))
    growth = storm_growth(daemon, hog, storm, "a storm of prompts full of typos")
    assert growth < 64 * MIB, f"the daemon grew by {growth // MIB} MiB"
