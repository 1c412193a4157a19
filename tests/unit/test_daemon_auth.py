"""The rules of who reaches a session (``daemon_auth``): the token gate and the WebSocket
handshake check (docs/lsp.md, "Daemon: who may connect, and what one client may cost")."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pi_snippets_lsp.lsp.daemon_auth import TokenGate, Verdict, allowed_hosts, handshake_refusal

TOKEN = "s3cret-Token_value"


def initialize(options: Any = None, with_id: bool = True) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "initialize"}
    message["params"] = {"capabilities": {}, "initializationOptions": options}
    if with_id:
        message["id"] = 1
    return message


@pytest.mark.parametrize(
    ("options", "verdict"),
    [
        pytest.param({"token": TOKEN}, Verdict.ADMIT, id="the token"),
        pytest.param({"token": TOKEN + "x"}, Verdict.REFUSE, id="a longer one"),
        pytest.param({"token": TOKEN[:-1]}, Verdict.REFUSE, id="a prefix"),
        pytest.param({"token": ""}, Verdict.REFUSE, id="empty"),
        pytest.param({"token": None}, Verdict.REFUSE, id="null"),
        pytest.param({"token": [TOKEN]}, Verdict.REFUSE, id="a list"),
        pytest.param({"token": "\ud800"}, Verdict.REFUSE, id="a lone surrogate"),
        pytest.param({}, Verdict.REFUSE, id="missing"),
        pytest.param(None, Verdict.REFUSE, id="no options"),
        pytest.param("token", Verdict.REFUSE, id="options not an object"),
    ],
)
def test_the_first_initialize_needs_the_token(options: Any, verdict: Verdict) -> None:
    # A copy: the gate takes the token out of the message in place, and a parameter is
    # shared by every run of the test in one process (mutation testing runs it again).
    assert TokenGate(TOKEN).check(initialize(copy.deepcopy(options))) is verdict


def test_the_token_is_removed_before_anything_reads_the_options() -> None:
    message = initialize({"token": TOKEN, "pollInterval": 0})
    assert TokenGate(TOKEN).check(message) is Verdict.ADMIT
    assert message["params"]["initializationOptions"] == {"pollInterval": 0}


@pytest.mark.parametrize(
    "params",
    [{}, {"params": None}, {"params": []}, {"params": "token"}, {"params": 1}],
    ids=["missing", "null", "an array", "a string", "a number"],
)
def test_an_initialize_whose_params_are_not_an_object_is_refused(params: dict[str, Any]) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", **params}
    assert TokenGate(TOKEN).check(message) is Verdict.REFUSE


def test_an_initialize_notification_is_refused() -> None:
    assert TokenGate(TOKEN).check(initialize({"token": TOKEN}, with_id=False)) is Verdict.REFUSE


def test_before_the_token_other_messages_are_held_after_it_they_pass() -> None:
    gate = TokenGate(TOKEN)
    request = {"jsonrpc": "2.0", "id": 2, "method": "snippets/list", "params": {}}
    assert gate.check(request) is Verdict.HOLD
    assert gate.check({"jsonrpc": "2.0", "method": "initialized"}) is Verdict.HOLD
    assert gate.check(initialize({"token": TOKEN})) is Verdict.ADMIT
    assert gate.check(request) is Verdict.PASS
    assert gate.check(initialize({})) is Verdict.PASS  # pygls answers a second one


def test_without_a_token_any_initialize_opens_the_session() -> None:
    gate = TokenGate(None)
    assert gate.check({"jsonrpc": "2.0", "id": 2, "method": "x"}) is Verdict.PASS
    message = initialize({"token": "whatever"})
    assert gate.check(message) is Verdict.ADMIT
    assert message["params"]["initializationOptions"] == {}


HOSTS = allowed_hosts("127.0.0.1", 2087)


@pytest.mark.parametrize(
    ("host", "origin", "refused"),
    [
        pytest.param("127.0.0.1:2087", None, False, id="a local program"),
        pytest.param("localhost:2087", None, False, id="localhost"),
        pytest.param("LOCALHOST:2087", None, False, id="names ignore case"),
        pytest.param("[::1]:2087", None, False, id="IPv6 loopback"),
        pytest.param("127.0.0.1", None, True, id="without the port"),
        pytest.param("127.0.0.1:2088", None, True, id="another port"),
        pytest.param("evil.example:2087", None, True, id="a rebound name"),
        pytest.param(None, None, True, id="no Host"),
        pytest.param("127.0.0.1:2087", "https://evil.example", True, id="a web page"),
        pytest.param("127.0.0.1:2087", "null", True, id="an opaque origin"),
        pytest.param("127.0.0.1:2087", "", True, id="an empty origin"),
        pytest.param("127.0.0.1:2087", "https://ok.example", False, id="an allowed origin"),
        pytest.param("127.0.0.1:2087", "HTTPS://OK.EXAMPLE", False, id="origins ignore case"),
        pytest.param("127.0.0.1:2087", "https://ok.example:444", True, id="another port"),
    ],
)
def test_websocket_handshakes(host: str | None, origin: str | None, refused: bool) -> None:
    refusal = handshake_refusal(host, origin, HOSTS, ["https://ok.example"])
    assert (refusal is not None) is refused


@pytest.mark.parametrize(
    ("listen", "extra"),
    [
        ("127.0.0.1", set()),
        ("0.0.0.0", set()),
        ("", set()),
        ("::", set()),
        ("192.168.1.5", {"192.168.1.5:9"}),
        ("fe80::1", {"[fe80::1]:9"}),
        ("Box.Local", {"box.local:9"}),
    ],
)
def test_the_hosts_a_handshake_may_name(listen: str, extra: set[str]) -> None:
    assert allowed_hosts(listen, 9) == {"127.0.0.1:9", "localhost:9", "[::1]:9", *extra}


def test_a_refusal_names_the_header_and_what_was_sent() -> None:
    assert handshake_refusal("evil.example:2087", None, HOSTS, []) == (
        "Host 'evil.example:2087' is not an address this server listens on"
    )
    assert handshake_refusal(None, None, HOSTS, []) == (
        "Host None is not an address this server listens on"
    )
    assert handshake_refusal("127.0.0.1:2087", "https://evil.example", HOSTS, []) == (
        "Origin 'https://evil.example' is not allowed (see --allow-origin)"
    )


def test_blanks_around_a_host_or_an_origin_are_ignored() -> None:
    origins = ["https://ok.example"]
    assert handshake_refusal(" 127.0.0.1:2087\t", " https://ok.example ", HOSTS, origins) is None
