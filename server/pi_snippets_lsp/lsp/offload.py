"""Long work off the event loop, a few jobs per session at a time, and the room its
results wait for.

docs/lsp.md, "Daemon: who may connect, and what one client may cost" ("Fairness"). The
daemon's sessions share one event loop: a request that computes for seconds on it (the
semantic tokens of a 50 MB document) holds every other session's answers that long.
Work on a large text therefore runs on a worker thread, on values that cannot change
under it (a text snapshot, a generation's snippets); small work stays on the loop, where
it costs less than the hop to a thread. Each session runs at most ``PER_SESSION`` jobs at
once, so one session's flood of large requests cannot take every worker from the others.

Python's GIL still shares the processor between the thread and the loop, in slices of
the interpreter's switch interval: the daemon makes it short (``SWITCH_INTERVAL``), so
the loop, which gives the GIL up at every read and write, gets it back soon and answers
the other sessions in between.

Work that sends on its own, not as the answer to a request (a settings document's
diagnostics), is not paced by the reader's backpressure, which waits only after each
message read: it waits itself for its connection's unsent answers to leave room
(``wait_for_room``), so what a connection queues stays within ``--max-unsent`` whatever
its client sends and however much it leaves unread.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable
from typing import Any, Final, TypeVar

from pi_snippets_lsp.core.serving import OFF_LOOP_CHARS

T = TypeVar("T")

#: Jobs of one session on worker threads at once.
PER_SESSION: Final = 2
#: Seconds the interpreter lets a thread hold the GIL while another waits for it, in
#: the daemon (Python's default: 0.005). The loop gives the GIL up at each system call
#: and waits up to this long to get it back from a worker: each read and write of an
#: answer would otherwise cost another session up to 5 ms while one session's long work
#: runs.
SWITCH_INTERVAL: Final = 0.0005
#: Seconds between looks at a connection without room.
ROOM_POLL: Final = 0.05

_gates: weakref.WeakKeyDictionary[object, asyncio.Semaphore] = weakref.WeakKeyDictionary()
#: Per session: its connection's room test (a weak reference: the connection owns the
#: session, never the other way round).
_rooms: weakref.WeakKeyDictionary[object, weakref.WeakMethod[Callable[[], bool]]] = (
    weakref.WeakKeyDictionary()
)


async def off_loop(
    owner: object, size: int, work: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """``work(*args, **kwargs)``: on the loop when ``size`` (the characters it reads) is
    under ``core.serving.OFF_LOOP_CHARS``, else on a worker thread, at most
    ``PER_SESSION`` at once for ``owner``."""
    if size < OFF_LOOP_CHARS:
        return work(*args, **kwargs)
    return await on_worker(owner, work, *args, **kwargs)


async def on_worker(owner: object, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``work(*args, **kwargs)`` on a worker thread, at most ``PER_SESSION`` at once for
    ``owner``."""
    gate = _gates.get(owner)
    if gate is None:
        gate = _gates[owner] = asyncio.Semaphore(PER_SESSION)
    async with gate:
        return await asyncio.to_thread(functools.partial(work, *args, **kwargs))


def set_room(owner: object, has_room: Callable[[], bool]) -> None:
    """``has_room`` (a bound method of the connection) tells whether ``owner``'s
    connection has room for more to send."""
    _rooms[owner] = weakref.WeakMethod(has_room)


def has_room(owner: object) -> bool:
    """Whether ``owner``'s connection has room for more (a session without one: yes)."""
    ref = _rooms.get(owner)
    method = ref() if ref is not None else None
    return True if method is None else method()


async def wait_for_room(owner: object) -> None:
    """Return once ``owner``'s connection has room for more to send. (A connection that
    ends cancels its session's tasks, this wait with them.)"""
    while not has_room(owner):
        await asyncio.sleep(ROOM_POLL)
