"""The limits' rules (``limits``; docs/lsp.md, "Daemon: who may connect, and what one
client may cost")."""

from __future__ import annotations

import asyncio
import logging

import pytest

from pi_snippets_lsp.lsp.limits import Limits, ThrottledLog, folders_within, poll_interval_within


def test_the_stated_defaults() -> None:
    limits = Limits()
    assert (limits.max_connections, limits.initialize_timeout, limits.max_folders) == (64, 10, 256)
    assert limits.max_body == 64 * 1024 * 1024
    assert limits.max_initialize_size == 64 * 1024
    assert limits.max_unsent == 8 * 1024 * 1024
    assert (limits.min_poll_interval, limits.stuck_timeout) == (0.25, 30)


@pytest.mark.parametrize(
    ("asked", "used", "warned"),
    [(0, 0, False), (1e-6, 0.25, True), (0.249, 0.25, True), (0.25, 0.25, False), (5, 5, False)],
)
def test_a_poll_interval_below_the_minimum_is_raised(
    asked: float, used: float, warned: bool
) -> None:
    interval, problem = poll_interval_within(asked, 0.25)
    assert interval == used
    assert (problem is not None) is warned


@pytest.mark.parametrize(("count", "kept", "warned"), [(0, 0, False), (3, 3, False), (4, 3, True)])
def test_folders_over_the_limit_are_ignored(count: int, kept: int, warned: bool) -> None:
    folders = [f"/f{i}" for i in range(count)]
    result, problem = folders_within(folders, 3)
    assert result == folders[:kept]
    assert (problem is not None) is warned


def test_a_throttled_log_says_each_message_once_a_second_with_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [100.0]
    throttled = ThrottledLog(logging.getLogger("test.throttled"), clock=lambda: now[0])
    with caplog.at_level(logging.ERROR, "test.throttled"):
        assert throttled("accept failed")
        for _ in range(999):
            now[0] += 0.0005
            assert not throttled("accept failed")
        assert throttled("another problem")
        now[0] += 1.0
        assert throttled("accept failed", "EMFILE")
    assert [r.getMessage() for r in caplog.records] == [
        "accept failed",
        "another problem",
        "accept failed: EMFILE (1000 times since the last report)",
    ]


def test_a_message_is_logged_again_once_a_whole_interval_has_passed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    throttled = ThrottledLog(
        logging.getLogger("test.throttled"), interval=2.0, clock=lambda: now[0]
    )
    with caplog.at_level(logging.ERROR, "test.throttled"):
        assert throttled("accept failed")
        now[0] = 1.5
        assert not throttled("accept failed")
        now[0] = 2.0
        assert throttled("accept failed")
    # One repeat in between is a count of two: this line and the one held back.
    assert [r.getMessage() for r in caplog.records] == [
        "accept failed",
        "accept failed (2 times since the last report)",
    ]


def test_a_message_said_once_since_its_last_report_has_no_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    throttled = ThrottledLog(logging.getLogger("test.throttled"), clock=lambda: now[0])
    with caplog.at_level(logging.ERROR, "test.throttled"):
        assert throttled("accept failed")
        now[0] = 5.0
        assert throttled("accept failed")
    assert [r.getMessage() for r in caplog.records] == ["accept failed", "accept failed"]


def test_the_event_loop_handler_logs_the_message_and_the_exception_throttled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    throttled = ThrottledLog(logging.getLogger("test.throttled"), clock=lambda: now[0])
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.ERROR, "test.throttled"):
            error = OSError(24, "Too many open files")
            context = {"message": "socket.accept() out of system resource", "exception": error}
            throttled.exception_handler(loop, context)
            throttled.exception_handler(loop, context)
            throttled.exception_handler(loop, {"message": "Task was destroyed"})
            throttled.exception_handler(loop, {"exception": ValueError("bad")})
    finally:
        loop.close()
    assert [r.getMessage() for r in caplog.records] == [
        "socket.accept() out of system resource: OSError: [Errno 24] Too many open files",
        "Task was destroyed",
        "unexpected error in the event loop: ValueError: bad",
    ]


def test_a_raised_poll_interval_says_what_was_asked_and_what_is_used() -> None:
    assert poll_interval_within(1e-6, 0.25) == (
        0.25,
        "initializationOptions.pollInterval is at least 0.25 seconds, not 1e-06; using 0.25",
    )


def test_folders_over_the_limit_say_how_many_and_which_are_read() -> None:
    folders = [f"/f{i}" for i in range(5)]
    assert folders_within(folders, 3) == (
        folders[:3],
        "5 workspace folders, more than the limit of 3; reading the settings of the first 3 only",
    )


def test_the_minimum_is_the_one_given() -> None:
    """``--min-poll-interval 1``: half a second is raised to 1, 2 seconds stay."""
    assert poll_interval_within(0.5, 1.0) == (
        1.0,
        "initializationOptions.pollInterval is at least 1 seconds, not 0.5; using 1",
    )
    assert poll_interval_within(2.0, 1.0) == (2.0, None)
