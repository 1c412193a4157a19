"""What both servers share about running (``core.serving``): the polling floor."""

from __future__ import annotations

import pytest

from pi_snippets_lsp.core.serving import DEFAULT_POLL_INTERVAL, MIN_POLL_INTERVAL, raised_interval


@pytest.mark.parametrize(
    ("interval", "minimum", "raised"),
    [
        pytest.param(0, 0.25, 0, id="never-polling-stays"),
        pytest.param(0.01, 0.25, 0.25, id="too-short-raised"),
        pytest.param(0.25, 0.25, 0.25, id="the-floor-itself"),
        pytest.param(1, 2, 2, id="one-second-under-a-floor-of-two"),
        pytest.param(3, 2, 3, id="longer-kept"),
    ],
)
def test_a_period_is_raised_to_the_floor(interval: float, minimum: float, raised: float) -> None:
    assert raised_interval(interval, minimum) == raised


def test_the_default_floor_and_period() -> None:
    assert raised_interval(0.1) == MIN_POLL_INTERVAL == 0.25
    assert DEFAULT_POLL_INTERVAL == 1.0
