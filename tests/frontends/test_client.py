"""``SnippetsClient`` against the real server (stdio and ``--tcp``) and a scripted peer."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from pi_snippets_lsp.client import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    ServerExitedError,
    ServerUnavailableError,
    SnippetsClient,
    SnippetsClientError,
    SnippetsError,
    SnippetsTimeoutError,
)
from pi_snippets_lsp.client.transport import Connection
from pi_snippets_lsp.wire.framing import encode

from .conftest import EXAMPLES, TIMEOUT, ClientFactory, free_port, write_settings

FAKE_SERVER = [sys.executable, str(Path(__file__).with_name("fake_server.py"))]
EXAMPLE_NAMES = ["cjk", "review", "tests", "use-mcp"]
USE_MCP = "Use your MCP tools to find the information"


def test_expand_list_reload_complete(connect: ClientFactory, tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(EXAMPLES.read_text(encoding="utf-8"), encoding="utf-8")
    client = connect(settings)

    assert client.server_info["serverInfo"]["name"] == "pi-snippets-lsp"
    assert client.load_count == 1
    (notice,) = client.loads
    assert (notice.generation, notice.count, notice.shortcut) == (1, 4, "ctrl+shift+s")

    text, changed = client.expand("Please %use-mcp.")
    assert (text, changed) == (f"Please {USE_MCP}.", True)
    assert client.expand("%nope %%use-mcp") == ("%nope %use-mcp", True)
    assert client.expand("nothing here") == ("nothing here", False)

    listing = client.list()
    assert [s.name for s in listing.snippets] == EXAMPLE_NAMES
    assert listing.shortcut == "ctrl+shift+s"
    assert listing.expand_on_completion is False
    assert listing.warnings == ()
    assert {s.source for s in listing.snippets} == {str(settings)}
    assert listing.values["cjk"] == "请用中文回答。"

    data = json.loads(settings.read_text(encoding="utf-8"))
    data["piSimpleSnippets"]["snippets"]["fresh"] = "Just added."
    data["piSimpleSnippets"]["expandOnCompletion"] = True
    settings.write_text(json.dumps(data), encoding="utf-8")
    loads_before = client.load_count
    reloaded = client.reload()
    assert "fresh" in reloaded.values
    assert reloaded.expand_on_completion is True
    notice = client.wait_for_load(loads_before + 1)
    assert (notice.generation, notice.count, notice.expand_on_completion) == (2, 5, True)
    assert client.list() == reloaded
    assert client.expand("%fresh") == ("Just added.", True)

    prompt = "第一行\n😀 (%us and more"
    popup = client.complete(prompt, len("第一行\n😀 (%us"))
    assert popup is not None and not popup.is_incomplete
    [item] = popup.items
    assert item.label == "%use-mcp"
    assert item.insert_text == USE_MCP  # expandOnCompletion is on now
    assert item.source == str(settings)
    # The range came back in UTF-16 units after an emoji, as code-point indices of the text.
    assert (popup.replace_start, popup.replace_end, popup.query) == (7, 10, "us")
    # The same document, changed: didChange keeps the server's copy current.
    assert client.complete("no token") is None
    second = client.complete("%r")
    assert second is not None and second.items[0].label == "%review"
    # Another document at once.
    other = client.complete("%cj", uri="untitled:other")
    assert other is not None and [i.label for i in other.items] == ["%cjk"]
    client.close_document("untitled:other")


def test_close_ends_the_session_only(connect: ClientFactory, transport: str) -> None:
    """stdio: closing ends the server process (exit code 0). TCP: the daemon goes on
    serving other sessions; SIGTERM ends it with 0."""
    client = connect(EXAMPLES)
    proc = client.server_process  # type: ignore[attr-defined]
    port = client._sock.getpeername()[1] if client._sock is not None else None
    returncode = client.close()
    if transport == "stdio":
        assert returncode == 0
        assert client.process is proc
    else:
        assert returncode is None
        assert proc.poll() is None and port is not None
        with SnippetsClient.connect("127.0.0.1", port, timeout=TIMEOUT) as again:
            assert again.expand("%use-mcp").changed
        proc.terminate()
        proc.wait(TIMEOUT)
    assert proc.poll() is not None
    assert proc.returncode == 0
    assert not client.alive
    client.close()  # idempotent
    with pytest.raises(SnippetsClientError):
        client.expand("%use-mcp")


def test_bad_params_then_still_works(connect: ClientFactory) -> None:
    client = connect(EXAMPLES)
    with pytest.raises(SnippetsError) as caught:
        client.request("snippets/expand", {"text": 5})
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.method == "snippets/expand"
    assert "text" in caught.value.message
    with pytest.raises(SnippetsError) as unknown:
        client.request("snippets/nothing", {})
    assert unknown.value.code == METHOD_NOT_FOUND
    assert client.expand("%tests").changed
    assert client.alive


def test_context_manager_closes(home: Path) -> None:
    with SnippetsClient.start(
        settings=EXAMPLES, env={"PI_CODING_AGENT_DIR": str(home)}, timeout=TIMEOUT
    ) as client:
        assert client.expand("%cjk") == ("请用中文回答。", True)
        proc = client.process
    assert proc is not None and proc.poll() == 0


def test_init_options_project_and_trust(
    home: Path, tmp_path: Path, stdio_client: ClientFactory
) -> None:
    project = tmp_path / "repo"
    write_settings(project / ".pi" / "settings.json", {"snippets": {"proj": "from the project"}})
    untrusted = stdio_client(project=project)
    assert untrusted.expand("%proj") == ("%proj", False)
    assert any("not trusted" in m.message for m in untrusted.messages)
    trusted = stdio_client(
        project=project,
        trust_project=True,
        init_options={"piSimpleSnippets": {"snippets": {"opt": "from options"}}},
    )
    assert trusted.expand("%proj %opt") == ("from the project from options", True)
    assert {s.name: s.source for s in trusted.list().snippets} == {
        "opt": "initializationOptions",
        "proj": str(project.resolve() / ".pi" / "settings.json"),
    }


def test_request_after_shutdown_is_refused_then_close(stdio_client: ClientFactory) -> None:
    client = stdio_client(settings=EXAMPLES)
    client.request("shutdown")
    # After shutdown the server answers every request but exit with InvalidRequest.
    with pytest.raises(SnippetsError) as refused:
        client.request("snippets/expand", {"text": "%cjk"}, timeout=TIMEOUT)
    assert refused.value.code == -32600
    proc = client.process
    assert client.close() == 0
    assert proc is not None and proc.poll() == 0


def test_server_killed(stdio_client: ClientFactory) -> None:
    client = stdio_client(settings=EXAMPLES)
    assert client.process is not None
    client.process.kill()
    client.process.wait(TIMEOUT)
    with pytest.raises(ServerExitedError) as caught:
        client.expand("%cjk")
    assert caught.value.returncode is not None
    assert not client.alive
    client.close()  # no goodbye to a dead server, no error


def test_unanswered_request_times_out_and_client_goes_on(home: Path) -> None:
    client = SnippetsClient.start(FAKE_SERVER, timeout=TIMEOUT)
    with pytest.raises(SnippetsTimeoutError):
        client.request("test/silent", {}, timeout=0.3)
    assert client.alive
    assert client.request("test/answers", {})["client/registerCapability"] == {"result": None}
    client.close()


def test_server_exits_with_requests_in_flight(home: Path) -> None:
    client = SnippetsClient.start(FAKE_SERVER, timeout=TIMEOUT)
    errors: list[BaseException] = []

    def wait_silently() -> None:
        try:
            client.request("test/silent", {})
        except BaseException as exc:
            errors.append(exc)

    waiter = threading.Thread(target=wait_silently)
    waiter.start()
    with pytest.raises(ServerExitedError) as caught:
        client.request("test/die", {})
    waiter.join(TIMEOUT)
    assert not waiter.is_alive()
    assert caught.value.returncode == 3
    assert len(errors) == 1 and isinstance(errors[0], ServerExitedError)
    client.close()
    assert client.process is not None and client.process.poll() == 3


def test_server_requests_are_answered() -> None:
    with SnippetsClient.start(
        FAKE_SERVER, project=Path.cwd(), init_options={"x": 1}, timeout=TIMEOUT
    ) as client:
        answers = client.request("test/answers", {})
        # The client's own options, plus the opt-in to snippets/didLoad.
        assert answers["initializationOptions"] == {"x": 1, "notifications": ["snippets/didLoad"]}
        assert answers["workspace/configuration"] == {"result": [None, None]}
        assert answers["client/registerCapability"] == {"result": None}
        assert answers["window/showMessageRequest"] == {"result": None}
        folders = answers["workspace/workspaceFolders"]["result"]
        assert folders == [{"uri": Path.cwd().resolve().as_uri(), "name": Path.cwd().name}]
        assert answers["fake/unknown"]["error"]["code"] == METHOD_NOT_FOUND

        pings: list[object] = []
        client.on_notification("test/ping", pings.append)
        client.request("test/notify", {})
        assert pings == [{"n": 1}]
        assert list(client.messages)[-1].message == "pi-simple-snippets: careful"

        with pytest.raises(SnippetsError) as caught:
            client.request("test/error", {})
        assert (caught.value.code, caught.value.data) == (-32001, {"why": "test"})
    assert client.process is not None and client.process.poll() == 0


def test_responses_out_of_order_reach_their_callers() -> None:
    count = 40
    with SnippetsClient.start(FAKE_SERVER, timeout=TIMEOUT) as client:
        results: dict[int, object] = {}
        barrier = threading.Barrier(count, timeout=TIMEOUT)

        def call(tag: int) -> None:
            barrier.wait()
            results[tag] = client.request("test/hold", {"count": count, "tag": tag})

        threads = [threading.Thread(target=call, args=(n,)) for n in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT)
        assert results == {n: {"tag": n} for n in range(count)}


def test_callbacks_cannot_make_requests() -> None:
    with SnippetsClient.start(FAKE_SERVER, timeout=TIMEOUT) as client:
        failures: list[BaseException] = []

        def callback(params: object) -> None:
            try:
                client.request("test/answers", {})
            except RuntimeError as exc:
                failures.append(exc)

        client.on_notification("test/ping", callback)
        client.request("test/notify", {})
        assert len(failures) == 1


def test_connect_where_nothing_listens_is_a_client_error() -> None:
    port = free_port()
    with pytest.raises(ServerUnavailableError) as caught:
        SnippetsClient.connect("127.0.0.1", port, retry=0.2, timeout=TIMEOUT)
    assert isinstance(caught.value, SnippetsClientError)
    assert f"127.0.0.1:{port}" in str(caught.value)


def test_a_command_that_is_no_server(tmp_path: Path) -> None:
    script = "import sys; sys.stderr.write('boom: no server here\\n'); sys.exit(7)"
    with pytest.raises(ServerExitedError) as caught:
        SnippetsClient.start([sys.executable, "-c", script], timeout=TIMEOUT)
    assert caught.value.returncode == 7
    assert "boom: no server here" in caught.value.stderr
    with pytest.raises(OSError):
        SnippetsClient.start([str(tmp_path / "missing-server")], timeout=TIMEOUT)


def test_cwd_and_a_relative_settings_file(home: Path, tmp_path: Path) -> None:
    write_settings(tmp_path / "mine.json", {"snippets": {"here": "relative to cwd"}})
    with SnippetsClient.start(
        settings="mine.json",
        cwd=tmp_path,
        env={"PI_CODING_AGENT_DIR": str(home)},
        timeout=TIMEOUT,
    ) as client:
        assert client.expand("%here") == ("relative to cwd", True)


def test_the_observer_sees_every_message_before_it_is_dispatched() -> None:
    """``Connection(observe=...)`` is a tap: each message read, in order, on the reader
    thread, before the caller waiting for it wakes; a failing observer costs nothing."""
    server_out, client_in = os.pipe()
    seen: list[dict[str, object]] = []
    stamped: dict[str, object] = {}

    def observe(message: dict[str, object]) -> None:
        seen.append(message)
        if message.get("method") == "test/boom":
            raise RuntimeError("an observer bug")

    def answer(method: str, params: object) -> object:
        return None

    def lost(reason: str) -> ServerExitedError:
        return ServerExitedError(reason)

    def write(data: bytes) -> None:
        # The peer answers each request at once, after a notification that fails the
        # observer (the response must still reach its caller).
        request = json.loads(data.split(b"\r\n\r\n", 1)[1])
        if "id" in request and "method" in request:
            stamped["observed_before_answer"] = len(seen)
            os.write(client_in, encode({"jsonrpc": "2.0", "method": "test/boom"}))
            os.write(client_in, encode({"jsonrpc": "2.0", "id": request["id"], "result": 7}))

    with os.fdopen(server_out, "rb") as reader:
        connection = Connection(reader, write, answer=answer, lost=lost, observe=observe)
        assert connection.request("test/one", {}, timeout=TIMEOUT) == 7
        assert [m.get("method", m.get("result")) for m in seen] == ["test/boom", 7]
        assert stamped["observed_before_answer"] == 0
        os.close(client_in)
        connection.close_reader(TIMEOUT)
    assert connection.dead is not None
