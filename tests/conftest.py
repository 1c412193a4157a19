"""Hypothesis's profiles for the whole suite, in one place.

Tests never assert wall-clock time (CONTRIBUTING.md): speed is the bench's business. A
Hypothesis deadline is a time assertion (an example over 200 ms fails with
``DeadlineExceeded``, which a loaded or slow machine gives a test that is right), so it is
off in every profile: Hypothesis's own ``default`` and ``ci`` (which Hypothesis loads by
itself when it sees a CI) and ours. tests/test_hypothesis_settings.py checks it.
"""

from __future__ import annotations

from hypothesis import settings

for _name in ("default", "ci"):
    # Re-registering the active profile makes the change take effect at once.
    settings.register_profile(_name, settings.get_profile(_name), deadline=None)

#: scripts/mutation.sh runs the unit tests once per mutant: fewer, fixed examples keep that
#: affordable and its verdicts repeatable (``--hypothesis-profile=mutation``; no example
#: database, so one mutant's failing example never decides another's verdict).
settings.register_profile(
    "mutation", max_examples=25, derandomize=True, deadline=None, database=None
)

#: scripts/test.sh --quick: an eighth of the examples and sizes (tests/unit/conftest.py,
#: ``examples`` and ``sized``), every rule still checked; the full run checks them all.
settings.register_profile("quick", max_examples=20, deadline=None)
