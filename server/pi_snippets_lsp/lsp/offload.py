"""Long work off the event loop, a few jobs per session at a time.

docs/lsp.md, "Daemon: who may connect, and what one client may cost" ("Fairness"). The
daemon's sessions share one event loop: a request that computes for seconds on it (the
semantic tokens of a 50 MB document) holds every other session's answers that long.
Work on a large text therefore runs on a worker thread, on values that cannot change
under it (a text snapshot, a generation's snippets); small work stays on the loop, where
it costs less than the hop to a thread. Each session runs at most ``PER_SESSION`` jobs at
once, so one session's flood of large requests cannot take every worker from the others.

Python's GIL still shares the processor between the thread and the loop, but in slices
of a few milliseconds: the loop answers the other sessions in between.
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

_gates: weakref.WeakKeyDictionary[object, asyncio.Semaphore] = weakref.WeakKeyDictionary()


async def off_loop(
    owner: object, size: int, work: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """``work(*args, **kwargs)``: on the loop when ``size`` (the characters it reads) is
    under ``core.serving.OFF_LOOP_CHARS``, else on a worker thread, at most
    ``PER_SESSION`` at once for ``owner``."""
    if size < OFF_LOOP_CHARS:
        return work(*args, **kwargs)
    gate = _gates.get(owner)
    if gate is None:
        gate = _gates[owner] = asyncio.Semaphore(PER_SESSION)
    async with gate:
        return await asyncio.to_thread(functools.partial(work, *args, **kwargs))
