"""Fuzzing the live server (stdio) with random bytes and malformed frames.

After each fuzz input the server must either answer the next valid request correctly, or
have exited with a non-zero status and a message on stderr. Never hang: every wait has a
time limit (no speed is asserted). One server takes many inputs in a row, so a state
that one input leaves behind is met by the next.

The probe is a run of valid requests sent back to back, as a client that knows nothing
of the fuzz would send them: enough of them that a body the fuzz left open (at most
``LONGEST_DECLARED`` bytes) ends inside the run, so a server that resynchronizes must
answer one of the later ones. A reader that needs a header at the start of a line (as
pygls's did) never finds one again: the test catches that wedge.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pi_snippets_lsp.wire.framing import encode

from .raw import STUCK, RawServer, ServerStuck, write_settings

#: The largest body a fuzzed header declares (bigger ones are over the cap anyway).
LONGEST_DECLARED = 4096

#: Methods the fuzz may call: every one that cannot end the session or change the
#: snippets (``shutdown``, ``exit``, ``initialize`` and configuration changes would make
#: the probe's expected answer wrong, not the server).
METHODS = [
    "snippets/expand",
    "snippets/list",
    "textDocument/completion",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "$/cancelRequest",
    "$/setTrace",
    "workspace/executeCommand",
    "textDocument/hover",
    "no/such/method",
    "",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def messages(draw: st.DrawFn) -> bytes:
    """A framed body that is JSON, shaped more or less like a message."""
    message: dict[str, Any] = {}
    if draw(st.booleans()):
        message["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0", 2]))
    if draw(st.booleans()):
        message["id"] = draw(json_values.filter(lambda v: not str(v).startswith("probe")))
    if draw(st.booleans()):
        message["method"] = draw(st.sampled_from(METHODS) | json_values)
    if draw(st.booleans()):
        message["params"] = draw(json_values)
    value: object = draw(st.sampled_from(["one", "one", "batch", "bare"]))
    if value == "batch":
        return _frame(json.dumps([message]).encode())
    if value == "bare":
        return _frame(json.dumps(draw(json_values)).encode())
    return _frame(json.dumps(message).encode())


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


HEADERS = st.sampled_from(
    [
        b"Content-Length: %d\r\n\r\n",
        b"content-length: %d\r\n\r\n",
        b"CONTENT-LENGTH:%d\n\n",
        b"Content-Type: x\r\n\r\n",
        b"Content-Length: -%d\r\n\r\n",
        b"Content-Length: %dx\r\n\r\n",
        b"Content-Length: 1%d000000000000000\r\n\r\n",
        b"Content-Length %d\r\n\r\n",
        b"Content-Length: %d\r\n",
        b"Content-Length: %d",
    ]
)


@st.composite
def malformed_frames(draw: st.DrawFn) -> bytes:
    """A header (often broken) and a body whose length may disagree with it."""
    body = draw(st.binary(max_size=300) | messages())
    declared = draw(st.integers(min_value=0, max_value=LONGEST_DECLARED))
    header: bytes = draw(HEADERS)
    return (header % declared if b"%d" in header else header) + body


fuzz_inputs = st.lists(
    st.binary(min_size=1, max_size=3000) | malformed_frames() | messages(),
    min_size=1,
    max_size=5,
).map(b"".join)


class LiveServer:
    """The server under fuzz; restarted when an input ended it (legitimately)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.probes = 0
        self.server = self._start()

    def _start(self) -> RawServer:
        server = RawServer(self.home)
        server.start()
        return server

    def probe(self) -> None:
        """The next valid request must be answered, or the server must have exited
        non-zero with a message."""
        self.probes += 1
        ids = [f"probe-{self.probes}-{i}" for i in range(LONGEST_DECLARED // 60 + 3)]
        run = b"".join(
            encode(
                {"jsonrpc": "2.0", "id": i, "method": "snippets/expand", "params": {"text": "%a"}}
            )
            for i in ids
        )
        assert len(run) - len(run) // len(ids) > LONGEST_DECLARED
        try:
            self.server.send(run)
            answer = self.server.first_response(ids, timeout=STUCK)
        except ServerStuck:
            self.server.process.kill()  # the next input (hypothesis shrinking) gets a fresh one
            self.server.close()
            self.server = self._start()
            raise
        except (AssertionError, OSError):  # it ended: how?
            code = self.server.close()
            assert code != 0, "the server ended with 0 without shutdown"
            assert self.server.stderr_text().strip(), "the server ended without a message"
            self.server = self._start()
            return
        assert answer.get("result") == {"text": "AAA", "changed": True}, answer
        assert self.server.garbage == []


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("fuzz")
    write_settings(home, {"a": "AAA"})
    server = LiveServer(home)
    yield server
    assert server.server.stop() == 0
    assert server.server.garbage == []


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=fuzz_inputs)
def test_after_any_input_the_next_request_is_answered(live: LiveServer, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the server is gone: the probe checks how it ended
        live.server.send(data)
    live.probe()


@settings(max_examples=10, deadline=None)
@given(data=st.binary(max_size=5000))
def test_random_bytes_then_the_end_of_input_exit_non_zero(data: bytes, tmp_path_factory) -> None:
    """Garbage, then the client goes away without ``exit``: status 1, never a hang."""
    home = tmp_path_factory.mktemp("eof")
    server = RawServer(home)
    server.send(data)
    assert server.close() == 1
