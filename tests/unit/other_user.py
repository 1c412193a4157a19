"""Work done as another local user: a forked child that becomes uid/gid 65534.

The tests run as root in CI, and root reads, writes and connects whatever the modes say;
what another user may do (read a file of mode 0, connect to a private socket) is tried
from a child that has dropped to ``nobody``, not skipped. Here, beside the unit tests,
because scripts/mutation.sh copies ``tests/unit`` alone; tests/lsp imports it from here.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable

import pytest

NOBODY = 65534


def as_other_user(work: Callable[[], str], timeout: float = 20.0) -> str:
    """``work()`` in a forked child that has become uid/gid 65534; what it returned (or
    the exception it raised, as text). Skips unless the tests run as root: only root can
    become another user."""
    if os.geteuid() != 0:
        pytest.skip("becoming another user needs root")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: stdlib calls only, then _exit
        result = "nothing"
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            result = work()
        except BaseException as exc:
            result = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(write_end, result.encode("utf-8", "replace"))
            os._exit(0)
    os.close(write_end)
    data = b""
    try:
        while select.select([read_end], [], [], timeout)[0]:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    return data.decode("utf-8", "replace")
