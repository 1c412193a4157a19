"""Hypothesis never judges time: no profile has a deadline (CONTRIBUTING.md, "Adding a
test": tests never assert wall-clock time). A deadline failed a property once on a loaded
two-core machine (288 ms against Hypothesis's default 200 ms), a failure about the
machine, not the code."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def registered_profiles() -> list[str]:
    # Hypothesis keeps no public list of its profiles; the default ("default"), the one it
    # loads under a CI variable ("ci") and ours (tests/conftest.py) are all in this table.
    return sorted(settings._profiles)


@pytest.mark.parametrize("name", registered_profiles())
def test_no_profile_has_a_deadline(name: str) -> None:
    assert settings.get_profile(name).deadline is None


def test_the_loaded_profile_has_no_deadline() -> None:
    assert settings.default.deadline is None


@given(st.integers())
def test_a_property_without_settings_gets_no_deadline(n: int) -> None:
    assert settings().deadline is None
