"""Shared fixtures of the unit tests: the Node.js used by the differential tests."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

#: scripts/mutation.sh runs the unit tests once per mutant: fewer, fixed examples keep that
#: affordable and its verdicts repeatable (``--hypothesis-profile=mutation``).
settings.register_profile("mutation", max_examples=25, derandomize=True, deadline=None)

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
