"""Signals: SIGTERM and SIGINT end the process within 2 seconds, whatever the clients do;
SIGHUP reloads the settings.

docs/lsp.md, "Daemon: who may connect, and what one client may cost" ("Signals") and
"Command line". A stop signal first asks for the orderly end (the connections are
closed, the answers in flight sent); if the process is still there
``core.serving.EXIT_GRACE`` seconds later (the MCP server's grace too), it ends at once.
The orderly end cannot always finish: the event loop may be blocked in a write to a
client that stopped reading, or waiting for a worker thread busy with a 50 MB document,
and a signal must still end the process.

The handler is a plain ``signal.signal`` handler, not the event loop's: Python runs it
in the main thread as soon as that thread gets back to Python code or a system call is
interrupted, so it arms the deadline even while the loop itself cannot run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Final

from pi_snippets_lsp.core.serving import EXIT_GRACE

log = logging.getLogger(__name__)

STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


def on_stop_signals(
    loop: asyncio.AbstractEventLoop,
    stop: Callable[[], None],
    exit_code: Callable[[], int],
    *,
    grace: float = EXIT_GRACE,
) -> Callable[[], None]:
    """On SIGINT or SIGTERM: call ``stop()`` on ``loop`` and, unless the process has
    ended ``grace`` seconds later, end it with ``exit_code()``. Returns what puts the
    previous handlers back (once the loop is done).

    Outside the main thread (an in-process test) signals cannot be handled: nothing is
    installed.
    """
    armed = threading.Event()

    def force() -> None:
        code = exit_code()
        log.error("still running %.1f s after the stop signal: ending now", grace)
        with contextlib.suppress(Exception):
            logging.shutdown()
            sys.stderr.flush()
        os._exit(code)

    def handler(signum: int, frame: FrameType | None) -> None:
        if not armed.is_set():
            armed.set()
            timer = threading.Timer(grace, force)
            timer.daemon = True
            timer.start()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to stop
            loop.call_soon_threadsafe(stop)

    previous: dict[int, object] = {}
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            previous[signum] = signal.signal(signum, handler)

    def restore() -> None:
        for signum, old in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, old)  # type: ignore[arg-type]

    return restore


def on_reload_signal(loop: asyncio.AbstractEventLoop, reload: Callable[[], None]) -> None:
    """On SIGHUP: ``reload()`` on the loop (by default SIGHUP would end the process)."""
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is None:
        return
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(hangup, reload)
