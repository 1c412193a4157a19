"""Shared fixtures of the unit tests: the Node.js used by the differential tests."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
from collections.abc import Callable, Generator
from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis's profiles, ``mutation`` included, are registered in tests/conftest.py.


def examples(n: int) -> int:
    """``n`` Hypothesis examples for a test that asks for more than the default, or an
    eighth of them (at least the profile's count) under a profile of fewer than
    Hypothesis's default 100: scripts/mutation.sh runs these tests once per mutant
    (``--hypothesis-profile=mutation``), and an explicit ``max_examples`` would otherwise
    override the profile's."""
    profile = settings.default.max_examples
    return n if profile >= 100 else max(profile, n // 8)


def sized(n: int) -> int:
    """``n`` (lines, markers, names, rounds) for a test of sizes and bounds, or an eighth
    of it under the mutation profile, as ``examples``: a bound still tells a mutant that
    breaks it, at a size a run per mutant can afford."""
    return n if settings.default.max_examples >= 100 else max(1, n // 8)


#: Set by scripts/mutation.sh: the run is mutmut's, one ``pytest.main`` per mutant.
MUTATION_RUN = os.environ.get("PI_SNIPPETS_MUTATION_RUN") == "1"

#: How long each test took when mutmut first ran them all (its "stats" run). The mutant
#: runs are forked from that process, so they inherit this table.
_durations: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if MUTATION_RUN and report.when == "call":
        _durations.setdefault(report.nodeid, report.duration)


class MutantHangs(Exception):
    """A test ran far longer than it did on the unmutated code (a mutant's endless loop)."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """In a mutation run, a test that takes ten times its first run's CPU time (and at
    least two seconds more) fails: a mutant that loops forever (``i -= 1`` made ``i = 1``)
    is caught in seconds, where mutmut's own limit, on the sum of all the tests' times,
    would wait minutes. Outside mutation runs, nothing changes."""
    if not MUTATION_RUN or item.nodeid not in _durations:
        return (yield)

    def hang(signum: int, frame: object) -> None:
        raise MutantHangs(f"{item.nodeid} ran 10x its usual time")

    previous = signal.signal(signal.SIGPROF, hang)
    signal.setitimer(signal.ITIMER_PROF, 2 + 10 * _durations[item.nodeid])
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In a mutation run, the quickest tests of a mutant go first.

    mutmut hands a mutant the tests that call the mutated function, in no set order, and
    stops at the first failure (``-x``): most mutants fail a quick example test, so
    running the property and size tests last spends their seconds only on the mutants
    that survive the rest. The verdict is the same in any order.
    """
    if MUTATION_RUN and _durations:
        items.sort(key=lambda item: _durations.get(item.nodeid, 0.0))


JS_DIR = Path(__file__).parent / "js"

#: Runs one script of ``tests/unit/js`` with arguments and stdin; returns its stdout.
RunNode = Callable[..., str]


@pytest.fixture(scope="session")
def node() -> RunNode:
    """Node.js, for comparing our rules with JavaScript's own regex engine.

    Pi runs in JavaScript, so JavaScript is the reference. Without ``node`` the
    differential tests are skipped on a developer machine, but fail under CI (``CI``
    set), where a silent skip would hide that the reference was never consulted.
    """
    executable = shutil.which("node")
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("node is required for the JavaScript differential tests under CI")
        pytest.skip("node not found: the JavaScript differential tests need Node.js")

    def run(script: str, *args: str, stdin: str | None = None) -> str:
        completed = subprocess.run(
            [executable, str(JS_DIR / script), *args],
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=False,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr
        return completed.stdout

    return run


#: Pieces random texts are built from: every kind of boundary, near-boundary, wrapper,
#: name character, trailing punctuation and percent sign.
PIECES = [
    "%", "%%", "%a", "%%a", "%use-mcp", "%1", "%mcp", "%b",
    "a", "b", "use-mcp", "x.y", "1", "A", "mcp", ".", "-", "_", "...",
    " ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\ufeff", "\u2028", "\x85", "\x1c",
    "，", "。", "「", "中", "あ", "(", "[", "{", "<", "`", ")", ",", ":", "'", '"', "😀",
    "\U00016fe2", "·", "/",
]  # fmt: skip


#: What follows the last ``%`` when a random text is to end like a cursor token.
QUERIES = ["", "a", "ab", "use-mcp", "use-mcp.", "x.y", "A", ".", "-x", "a b", "😀"]


def random_texts(seed: int, count: int, *, token_tail: bool = False) -> list[str]:
    """Texts of 1 to 12 random pieces; with ``token_tail``, ending in ``%query``."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        text = "".join(rng.choices(PIECES, k=rng.randint(1, 12)))
        if token_tail:
            text += "%" + rng.choice(QUERIES)
        texts.append(text)
    return texts
