"""Who may reach a session: the token checked at ``initialize``, and the WebSocket
handshake's ``Host`` and ``Origin``.

docs/lsp.md, "Daemon: who may connect, and what one client may cost". Pure rules,
table-tested without a socket (``tests/unit/test_daemon_auth.py``):

- ``TokenGate``: on a ``--tcp``/``--ws`` connection the first ``initialize`` must carry
  ``initializationOptions.token``, the daemon's token. A missing or wrong one is refused
  (error -32001, "unauthorized") and the connection is closed; nothing else is answered.
  Before that ``initialize``, a request gets -32002 and reaches no handler, a
  notification is dropped. The token is removed from the options before anything else
  reads them, so it is never logged or echoed.
- ``handshake_refusal``: a WebSocket handshake whose ``Origin`` is present and not
  allowed (a web page: browsers send it, and the page's JavaScript cannot forge it) or
  whose ``Host`` is not an address the daemon listens on (a DNS-rebound name) is refused
  with HTTP 403 before any session exists.
"""

from __future__ import annotations

import enum
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

UNAUTHORIZED_MESSAGE: Final = "unauthorized"
#: Names of the loopback interface a local client may use in ``Host``.
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")


class Verdict(enum.Enum):
    #: Handled as usual.
    PASS = "pass"
    #: The ``initialize`` that opens the session: handled as usual.
    ADMIT = "admit"
    #: Before the session is open: answered (-32002) or dropped here, never handled.
    HOLD = "hold"
    #: A missing or wrong token: answer -32001 and close.
    REFUSE = "refuse"


@dataclass
class TokenGate:
    """The first ``initialize`` of a connection, checked against ``token`` (None: any
    ``initialize`` opens the session, as on a Unix socket or stdio)."""

    token: str | None = None
    admitted: bool = False

    def check(self, message: dict[str, Any]) -> Verdict:
        """What to do with one message (a JSON-RPC object). An ``initialize``'s token is
        removed from ``message`` in place."""
        if message.get("method") == "initialize":
            given = _take_token(message)
            if self.admitted:
                return Verdict.PASS
            if "id" in message and (self.token is None or _same(given, self.token)):
                self.admitted = True
                return Verdict.ADMIT
            return Verdict.REFUSE
        if self.admitted or self.token is None:
            return Verdict.PASS
        return Verdict.HOLD


def _take_token(message: dict[str, Any]) -> object:
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    return options.pop("token", None) if isinstance(options, dict) else None


def _same(given: object, token: str) -> bool:
    """Compared in constant time: the answer's timing tells nothing about the token."""
    if not isinstance(given, str):
        return False
    # UTF-8, the codec str.encode uses unless told (a lone surrogate: compared, unequal).
    return hmac.compare_digest(given.encode(errors="surrogatepass"), token.encode())


def allowed_hosts(listen_host: str, port: int) -> frozenset[str]:
    """The ``Host`` values of a request meant for this daemon: a loopback name, or the
    address it listens on, each with its port (lowercase)."""
    names = set(LOOPBACK_NAMES)
    if listen_host not in ("", "0.0.0.0", "::"):  # a wildcard has no name of its own
        names.add(f"[{listen_host}]" if ":" in listen_host else listen_host)
    return frozenset(f"{name}:{port}".lower() for name in names)


def handshake_refusal(
    host: str | None, origin: str | None, hosts: frozenset[str], origins: Iterable[str]
) -> str | None:
    """Why a WebSocket handshake is refused (403), or None to accept it."""
    if host is None or host.strip().lower() not in hosts:
        return f"Host {host!r} is not an address this server listens on"
    if origin is not None and origin.strip().lower() not in {o.lower() for o in origins}:
        return f"Origin {origin!r} is not allowed (see --allow-origin)"
    return None
