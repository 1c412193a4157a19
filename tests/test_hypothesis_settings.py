"""Hypothesis never judges time: its deadline is off in every profile.

CONTRIBUTING.md: tests never assert wall-clock time. Hypothesis's own profiles fail an
example that takes over 200 ms (``DeadlineExceeded``), which a loaded or slow machine
does (a unit test once failed here at 288 ms); tests/conftest.py turns the deadline off
in Hypothesis's profiles (``default``, and ``ci``, which it loads when it sees a CI) and
in ours (``mutation``).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parent
#: Longer than Hypothesis's default deadline of 200 ms.
SLOW = 0.3


@pytest.mark.parametrize("name", ["default", "ci", "mutation"])
def test_no_profile_has_a_deadline(name: str) -> None:
    assert settings.get_profile(name).deadline is None


def test_the_active_profile_has_no_deadline() -> None:
    assert settings.default.deadline is None, settings.get_current_profile_name()


def test_a_slow_example_is_no_failure() -> None:
    @settings(max_examples=2, database=None)
    @given(st.integers())
    def slow_property(n: int) -> None:
        time.sleep(SLOW)

    slow_property()


def test_no_test_sets_a_deadline() -> None:
    setting = re.compile(r"\bdeadline=(?!None\b)")
    offenders = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if setting.search(line)
    ]
    assert offenders == []
