"""Settings every test folder shares.

Hypothesis runs with no deadline in every profile: a test never judges wall-clock time
(CONTRIBUTING.md, "Adding a test"; speed is measured by scripts/bench.py), and a property
that took 288 ms against Hypothesis's default 200 ms on a loaded two-core machine failed
a run for a reason that was the machine's, not the code's. Hypothesis's own profiles are
re-registered without one (``ci`` already has none, Hypothesis loads it when a CI variable
is set); a profile of ours (``mutation``, tests/unit/conftest.py) sets ``deadline=None``
itself. tests/unit/test_hypothesis_profiles.py checks them all.
"""

from __future__ import annotations

from hypothesis import settings

for _name in ("default", "ci"):
    # Registering the loaded profile again takes effect at once.
    settings.register_profile(_name, settings.get_profile(_name), deadline=None)

#: scripts/test.sh --quick: an eighth of the examples and sizes (tests/unit/conftest.py,
#: ``examples`` and ``sized``), every rule still checked; the full run checks them all.
settings.register_profile("quick", max_examples=20, deadline=None)
