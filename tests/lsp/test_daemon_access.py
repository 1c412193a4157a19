"""Who may connect to the daemon (docs/lsp.md, "Daemon: who may connect, and what one
client may cost"; docs/reliability.md, docs/security.md).

Tried as an attacker would: another local user (a child process that becomes uid 65534,
the tests run as root), a client without the token, a web page (a raw WebSocket
handshake with a foreign ``Origin``), a DNS-rebound name (a foreign ``Host``).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from websockets.sync import client as ws_client

from pi_snippets_lsp.client import SnippetsClient
from pi_snippets_lsp.wire.framing import encode

from ..unit.other_user import NOBODY, as_other_user
from .conftest import SERVER
from .daemons import STUCK, Daemon, Raw, client, daemons

__all__ = ["daemons"]  # the fixture

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"capabilities": {}, "initializationOptions": {"pollInterval": 0}},
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "snippets/list", "params": {}}


def answers_over(sock: socket.socket) -> str:
    """Send initialize (without a token) and snippets/list; what came back."""
    sock.settimeout(10)
    data = b""
    try:
        sock.sendall(encode(INITIALIZE) + encode(LIST))
        while chunk := sock.recv(65536):
            data += chunk
    except (BrokenPipeError, ConnectionResetError) as exc:  # closed: as good
        data += f" [{type(exc).__name__}]".encode()
    return "closed, answered: " + data.decode("utf-8", "replace")


SECRET = {"snippets": {"secret": "token=hunter2"}}


def write_settings(daemon_home: Path) -> None:
    (daemon_home / "settings.json").write_text(
        '{"piSimpleSnippets": {"snippets": {"secret": "token=hunter2"}}}'
    )


# --------------------------------------------------------------------------- --socket


def test_the_socket_daemon_serves_its_user_from_a_private_folder(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons("--socket")
    assert daemon.path == str(daemon.socket_file)
    assert f"listening on unix:{daemon.socket_file}" in daemon.log()
    assert stat.S_IMODE(os.stat(daemon.folder).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(daemon.socket_file).st_mode) == 0o600
    assert stat.S_ISSOCK(os.lstat(daemon.socket_file).st_mode)
    with client(daemon, "mine") as session:
        assert session.expand("%who").text == "mine"
    assert daemon.signal(signal.SIGTERM) == 0
    assert not daemon.socket_file.exists(), "the socket is removed at the end"


def test_the_client_finds_the_default_socket_itself(
    daemons: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon = daemons("--socket")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(daemon.runtime))
    options = {"pollInterval": 0, "piSimpleSnippets": {"snippets": {"a": "A"}}}
    with SnippetsClient.connect(unix_socket=True, init_options=options, timeout=STUCK) as session:
        assert session.expand("%a").text == "A"


def test_another_user_cannot_reach_the_socket(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--socket")
    write_settings(daemon.home)

    def connect() -> str:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(daemon.path)
        return answers_over(sock)

    assert as_other_user(connect).startswith("PermissionError")
    assert daemon.alive()


def test_a_peer_of_another_uid_is_closed_even_when_the_socket_is_open_to_all(
    daemons: Callable[..., Daemon], request: pytest.FixtureRequest
) -> None:
    """Defence in depth: a socket someone made world-writable still serves no other uid."""
    shared = Path(tempfile.mkdtemp(prefix="pi-snippets-shared-"))  # others can reach it
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    os.chmod(shared, 0o777)
    path = shared / "lsp.sock"
    daemon = daemons("--socket", str(path))
    write_settings(daemon.home)
    os.chmod(path, 0o666)

    def connect() -> str:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(path))
        return answers_over(sock)

    outcome = as_other_user(connect)
    assert outcome.startswith("closed, answered: ")
    assert "hunter2" not in outcome and "jsonrpc" not in outcome
    assert daemon.logged(f"uid {NOBODY}")
    with client(daemon, "still mine") as session:  # the owner is served as before
        assert session.expand("%who").text == "still mine"


@pytest.mark.parametrize(
    ("mode", "owner", "reason"),
    [
        (0o755, None, "has mode 0755"),
        (0o700, NOBODY, f"belongs to uid {NOBODY}"),
    ],
)
def test_a_folder_open_to_others_or_not_ours_is_refused(
    tmp_path: Path, mode: int, owner: int | None, reason: str
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    folder = runtime / "pi-snippets-lsp"
    folder.mkdir()
    os.chmod(folder, mode)
    if owner is not None:
        if os.geteuid() != 0:
            pytest.skip("chown needs root")
        os.chown(folder, owner, owner)
    for flag in ("--socket", "--tcp"):
        proc = subprocess.run(
            [*SERVER, flag, "--port", "0"] if flag == "--tcp" else [*SERVER, flag],
            capture_output=True,
            text=True,
            timeout=STUCK,
            env={
                **os.environ,
                "XDG_RUNTIME_DIR": str(runtime),
                "PI_CODING_AGENT_DIR": str(tmp_path),
            },
        )
        assert proc.returncode == 1, proc.stderr
        assert f"refusing to use {folder}: it {reason}" in proc.stderr
        assert "Traceback" not in proc.stderr
        assert not (folder / "token").exists() and not (folder / "lsp.sock").exists()


def test_a_leftover_socket_is_replaced_a_live_one_or_a_file_is_not(
    daemons: Callable[..., Daemon], tmp_path: Path
) -> None:
    leftover = tmp_path / "left.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(leftover))
    dead.close()  # a socket file nobody listens on: a daemon that died
    daemon = daemons("--socket", str(leftover))
    with client(daemon, "new") as session:
        assert session.expand("%who").text == "new"

    proc = subprocess.run(
        [*SERVER, "--socket", str(leftover)], capture_output=True, text=True, timeout=STUCK
    )
    assert proc.returncode == 1 and "another server is listening there" in proc.stderr

    precious = tmp_path / "notes.txt"
    precious.write_text("mine")
    proc = subprocess.run(
        [*SERVER, "--socket", str(precious)], capture_output=True, text=True, timeout=STUCK
    )
    assert proc.returncode == 1 and "exists and is not a socket" in proc.stderr
    assert precious.read_text() == "mine"


# --------------------------------------------------------------------------- the token


def test_the_token_file_is_private_and_never_logged(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--tcp", "-v")
    token = daemon.token()
    assert stat.S_IMODE(os.stat(daemon.token_file).st_mode) == 0o600
    assert len(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))) >= 16
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    with client(daemon, "x") as session:
        session.expand("%who")
    assert str(daemon.token_file) in daemon.log()
    assert token not in daemon.log()
    assert daemon.signal(signal.SIGTERM) == 0
    assert token not in daemon.log()
    assert not daemon.token_file.exists(), "the token file is removed at the end"


def test_a_token_file_of_ones_choice(daemons: Callable[..., Daemon], tmp_path: Path) -> None:
    chosen = tmp_path / "my-token"
    daemon = daemons("--tcp", "--token-file", str(chosen))
    assert stat.S_IMODE(os.stat(chosen).st_mode) == 0o600
    options = {"pollInterval": 0, "piSimpleSnippets": {"snippets": {"a": "A"}}}
    with SnippetsClient.connect(
        "127.0.0.1", daemon.port, token_file=chosen, init_options=options, timeout=STUCK
    ) as session:
        assert session.expand("%a").text == "A"


@pytest.mark.parametrize("token", [None, "wrong", 12, ""])
def test_initialize_without_the_token_is_refused_and_nothing_else_answered(
    daemons: Callable[..., Daemon], token: object
) -> None:
    daemon = daemons("--tcp")
    write_settings(daemon.home)
    raw = Raw.tcp(daemon, token=False)
    options: dict[str, object] = {"pollInterval": 0}
    if token is not None:
        options["token"] = token
    initialize = {**INITIALIZE, "params": {"capabilities": {}, "initializationOptions": options}}
    raw.sock.sendall(encode(initialize) + encode(LIST))  # pipelined: must not be answered
    assert raw.receive() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32001, "message": "unauthorized"},
    }
    assert raw.receive() is None, "the connection is closed; snippets/list is not answered"
    assert daemon.alive()


def test_requests_before_the_token_reach_no_handler(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--tcp")
    raw = Raw.tcp(daemon)
    raw.send(LIST)
    answer = raw.response(2)
    assert answer["error"]["code"] == -32002
    assert raw.receive() is None, "a stranger's first error ends its connection"
    raw = Raw.tcp(daemon)
    raw.handshake({"a": "A"})
    assert raw.expand(3, "%a")["result"]["text"] == "A"


def test_another_user_can_neither_read_the_token_nor_list_snippets(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons("--tcp")
    write_settings(daemon.home)

    def read_token() -> str:
        return daemon.token_file.read_text()

    assert as_other_user(read_token).startswith("PermissionError")

    def connect() -> str:
        return answers_over(socket.create_connection(("127.0.0.1", daemon.port)))

    outcome = as_other_user(connect)
    assert '"code":-32001' in outcome.replace(" ", "")
    assert "hunter2" not in outcome and "snippets" not in outcome


def test_ws_wants_the_token_too(daemons: Callable[..., Daemon]) -> None:
    daemon = daemons("--ws")
    write_settings(daemon.home)
    url = f"ws://127.0.0.1:{daemon.port}"
    with ws_client.connect(url, open_timeout=STUCK) as ws:
        ws.send(encode(INITIALIZE).split(b"\r\n\r\n", 1)[1].decode())
        ws.send(encode(LIST).split(b"\r\n\r\n", 1)[1].decode())
        assert json.loads(ws.recv(timeout=STUCK))["error"] == {
            "code": -32001,
            "message": "unauthorized",
        }
        with pytest.raises(Exception, match=r"1000|closed|ConnectionClosed"):
            ws.recv(timeout=STUCK)


# --------------------------------------------------------------------------- WebSocket handshakes


def handshake_status(port: int, host: str, origin: str | None = None) -> int:
    """A raw WebSocket opening handshake, as a browser page would send it; the status."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET / HTTP/1.1",
        f"Host: {host}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=STUCK) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status = sock.recv(4096).split(b"\r\n", 1)[0]
    return int(status.split()[1])


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        pytest.param("127.0.0.1:{port}", None, 101, id="a local program"),
        pytest.param("localhost:{port}", None, 101, id="localhost"),
        pytest.param("127.0.0.1:{port}", "https://evil.example", 403, id="a web page"),
        pytest.param("127.0.0.1:{port}", "null", 403, id="a sandboxed page"),
        pytest.param("localhost:{port}", "http://localhost:8080", 403, id="a local page"),
        pytest.param("evil.example:{port}", None, 403, id="DNS rebinding"),
        pytest.param("evil.example:{port}", "http://evil.example:{port}", 403, id="rebound page"),
        pytest.param("127.0.0.1:1", None, 403, id="another port"),
        pytest.param("127.0.0.1:{port}", "https://editor.example", 101, id="an allowed origin"),
    ],
)
def test_ws_handshakes_from_web_pages_and_rebound_names_get_403(
    daemons: Callable[..., Daemon], host: str, origin: str | None, status: int
) -> None:
    daemon = daemons("--ws", "--allow-origin", "https://editor.example")
    host = host.format(port=daemon.port)
    origin = origin.format(port=daemon.port) if origin else None
    assert handshake_status(daemon.port, host, origin) == status
    assert daemon.alive()


# --------------------------------------------------------------------------- stdio


def reachable_sockets(pid: int) -> list[str]:
    """The sockets of a process that others could reach: TCP/UDP ones, and Unix ones with
    a name (asyncio's own wake-up pair is an unnamed socketpair)."""
    fds = Path(f"/proc/{pid}/fd")
    links = [os.readlink(fd) for fd in fds.iterdir()]
    inodes = {link[len("socket:[") : -1] for link in links if link.startswith("socket:[")}
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            if line.split()[9] in inodes:
                found.append(f"{table}: {line}")
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[6] in inodes and len(fields) > 7:
            found.append(f"unix: {fields[7]}")
    return found


def test_a_stdio_server_listens_on_nothing(tmp_path: Path) -> None:
    """Over stdio only the process that started the server talks to it: it has no socket
    anyone else could reach."""
    proc = subprocess.Popen(
        SERVER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)},
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        params = {"capabilities": {}, "initializationOptions": {"pollInterval": 0}}
        proc.stdin.write(encode({**INITIALIZE, "params": params}))
        proc.stdin.flush()
        assert proc.stdout.read1(65536)  # type: ignore[attr-defined]  # answered: it is up
        assert reachable_sockets(proc.pid) == []
    finally:
        proc.kill()
        proc.wait(STUCK)


def test_the_socket_daemon_is_reachable_only_at_its_socket(
    daemons: Callable[..., Daemon],
) -> None:
    daemon = daemons("--socket")
    assert reachable_sockets(daemon.process.pid) == [f"unix: {daemon.path}"]
