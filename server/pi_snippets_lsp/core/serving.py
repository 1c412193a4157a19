"""What every server front end (LSP, MCP) shares about running: which work stays on
the event loop, and how long a stop signal waits for an orderly end.

Plain numbers, in the lowest layer, so the servers cannot drift apart: both answer many
requests on one event loop, and both must end promptly on SIGINT or SIGTERM even while
a write to a client that stopped reading blocks.
"""

from __future__ import annotations

from typing import Final

#: Characters of text under which work stays on the event loop: the linear passes of
#: the features over such a text take well under a millisecond, less than the hop to a
#: worker thread. Work on a longer text runs on a worker thread, so the loop keeps
#: answering (other sessions, notifications) meanwhile.
OFF_LOOP_CHARS: Final = 64 * 1024

#: Seconds between a stop signal and the forced end of the process: the orderly end
#: (connections closed, answers in flight sent) gets this long, and the process is
#: gone within 2 seconds of the signal whatever the clients do.
EXIT_GRACE: Final = 1.5
