"""What one client may cost the server: the limits, their defaults, and a log that cannot
flood.

docs/lsp.md, "Daemon: who may connect, and what one client may cost". Every limit is a
command-line flag (``cli.py``); the defaults are chosen so that no editor or agent
frontend ever meets them, while a client that misbehaves (on purpose or not) costs the
daemon a bounded amount of memory and time:

- ``max_connections``: connections at once (the daemon); more are closed at once.
- ``initialize_timeout``: seconds a connection has to send a valid ``initialize``.
- ``max_body``: the largest message body (bytes); a bigger one is refused, and what was
  read of it is dropped.
- ``max_initialize_size``: on a connection that needs the token (``--tcp``, ``--ws``),
  the largest message before its ``initialize`` has been admitted: whoever can reach the
  port, the token or not, may make the daemon hold at most this much per connection.
- ``max_folders``: workspace folders a session reads settings for; more are ignored with
  a warning (each folder is a generation of its own).
- ``min_poll_interval``: the shortest ``pollInterval`` (seconds); a smaller one (but 0,
  which means "never poll") is raised to it with a warning.
- ``max_unsent``: bytes of answers a connection may have waiting to be sent; past it the
  server stops reading that connection until its client reads.
- ``stuck_timeout``: seconds a connection may stay past ``max_unsent``; then it is closed.

Standard library only, and cheap to import: the command line states the defaults in its
help, and its shell commands (``expand``) start on every prompt, so ``Limits`` is a named
tuple and ``ThrottledLog`` a plain class (a dataclass is code generated and compiled at
import), and asyncio and logging are named for the types only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NamedTuple

if TYPE_CHECKING:  # the command line reads the defaults here: no event loop, no logging
    import asyncio
    import logging

from pi_snippets_lsp.core.serving import MIN_POLL_INTERVAL, raised_interval

MIB: Final = 1024 * 1024

DEFAULT_MAX_CONNECTIONS: Final = 64
DEFAULT_INITIALIZE_TIMEOUT: Final = 10.0
DEFAULT_MAX_BODY: Final = 64 * MIB
DEFAULT_MAX_INITIALIZE_SIZE: Final = 64 * 1024
DEFAULT_MAX_FOLDERS: Final = 256
DEFAULT_MIN_POLL_INTERVAL: Final = MIN_POLL_INTERVAL
DEFAULT_MAX_UNSENT: Final = 8 * MIB
DEFAULT_STUCK_TIMEOUT: Final = 30.0
#: Requests of one connection being worked on at once; the next one is read when one is
#: answered. Not a flag: no client waits on that many answers, and it keeps the answers
#: a client that does not read can cause within a small multiple of ``max_unsent``.
MAX_IN_FLIGHT: Final = 64


class Limits(NamedTuple):
    """The limits one server process applies (see the module's docstring)."""

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    initialize_timeout: float = DEFAULT_INITIALIZE_TIMEOUT
    max_body: int = DEFAULT_MAX_BODY
    max_initialize_size: int = DEFAULT_MAX_INITIALIZE_SIZE
    max_folders: int = DEFAULT_MAX_FOLDERS
    min_poll_interval: float = DEFAULT_MIN_POLL_INTERVAL
    max_unsent: int = DEFAULT_MAX_UNSENT
    stuck_timeout: float = DEFAULT_STUCK_TIMEOUT


def poll_interval_within(interval: float, minimum: float) -> tuple[float, str | None]:
    """``pollInterval`` raised to ``minimum`` when smaller (0 stays 0: never poll), and
    the problem to report when it was raised.

    A client asking for a look every microsecond would cost the daemon a core per
    session; a quarter of a second already feels instant after a save.
    """
    raised = raised_interval(interval, minimum)
    if raised == interval:
        return interval, None
    return raised, (
        f"initializationOptions.pollInterval is at least {minimum:g} seconds, "
        f"not {interval:g}; using {minimum:g}"
    )


def folders_within(folders: list[str], maximum: int) -> tuple[list[str], str | None]:
    """The first ``maximum`` workspace folders, and the problem to report when there were
    more. Each folder costs a generation (a whole configuration) and its settings files."""
    if len(folders) <= maximum:
        return folders, None
    return folders[:maximum], (
        f"{len(folders)} workspace folders, more than the limit of {maximum}; "
        f"reading the settings of the first {maximum} only"
    )


class ThrottledLog:
    """Log the same message at most once per ``interval`` seconds, with how many times it
    happened in between: at the file-descriptor limit asyncio reports every failed
    ``accept()``, thousands a second, and a log must not become the next problem."""

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.interval = interval
        self.clock = clock
        self._last: dict[str, float] = {}
        self._count: dict[str, int] = {}

    def __call__(self, message: str, detail: str = "") -> bool:
        """Count ``message``; log it (and the count since the last line) when its last
        line is at least ``interval`` old. Whether it was logged."""
        now = self.clock()
        count = self._count.get(message, 0) + 1
        last = self._last.get(message)
        if last is not None and now - last < self.interval:
            self._count[message] = count
            return False
        self._last[message] = now
        self._count[message] = 0
        times = f" ({count} times since the last report)" if count > 1 else ""
        self.logger.error("%s%s%s", message, f": {detail}" if detail else "", times)
        return True

    def exception_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """An event loop's exception handler: one line per kind of problem and second,
        without the traceback asyncio would print for each."""
        message = str(context.get("message") or "unexpected error in the event loop")
        exception = context.get("exception")
        self(message, f"{type(exception).__name__}: {exception}" if exception else "")
