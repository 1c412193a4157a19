"""What every server front end (LSP, MCP) shares about running: which work stays on
the event loop, how often settings files are looked at, and how long a stop signal
waits for an orderly end.

Plain numbers, in the lowest layer, so the servers cannot drift apart: both answer many
requests on one event loop, and both must end promptly on SIGINT or SIGTERM even while
a write to a client that stopped reading blocks.
"""

from __future__ import annotations

from typing import Final

#: Characters of text under which work stays on the event loop: the linear passes of
#: the features over such a text take less time than the hop to a worker thread. Work
#: on a longer text runs on a worker thread, so the loop keeps answering (other
#: sessions, notifications) meanwhile.
OFF_LOOP_CHARS: Final = 64 * 1024

#: Seconds between a stop signal and the forced end of the process: the orderly end
#: (connections closed, answers in flight sent) gets this long, and the process is
#: gone within 2 seconds of the signal whatever the clients do.
EXIT_GRACE: Final = 1.5

#: Seconds between looks at the settings files, unless a client asks otherwise.
DEFAULT_POLL_INTERVAL: Final = 1.0
#: The shortest period a client may ask for (0, never polling, excepted): a client asking
#: for a look every millisecond would cost every other client a share of the loop.
MIN_POLL_INTERVAL: Final = 0.25


def raised_interval(interval: float, minimum: float = MIN_POLL_INTERVAL) -> float:
    """A polling period raised to ``minimum`` when smaller; 0 (never poll) stays 0."""
    return interval if interval == 0 else max(interval, minimum)
