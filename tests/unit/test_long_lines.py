"""Requests on long lines cost linear time in what they read (docs/lsp.md, "Daemon: who
may connect, and what one client may cost", "Fairness").

Semantic tokens used to look each marker's position up from the start of its line (a
4 MB line: 35 s, quadratic); hover expanded the whole line under the cursor. The cost
tests compare ratios of CPU time at 1, 4 and 16 MB, never a time itself: linear work
grows 4 times per step, quadratic work 16 times. The properties check that the fast
paths answer exactly what the plain ones do.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.documents import Document, Encoding
from pi_snippets_lsp.core.hover import marker_on_line
from pi_snippets_lsp.core.line_codec import units_of
from pi_snippets_lsp.core.markers import marker_at
from pi_snippets_lsp.core.semantic_tokens import semantic_tokens

from .conftest import examples

MB = 1_000_000
SNIPPETS = {"a": "AAA", "ab": "AB", "a.b": "A.B", "x-1": "X"}
#: Linear work grows ~4 times per 4-fold step; quadratic ~16. A step over this bound
#: stops the measure (a quadratic path would take minutes at the next size). Each
#: measure is the least of a few runs.
STEP_BOUND = 24.0
#: Over two 4-fold steps linear work grows ~16 times, quadratic ~256: the product of the
#: two ratios judges, so one step slowed by a busy machine (a 16 MB pass no longer fits
#: any cache; a parallel test run shares the memory bus) does not decide alone.
TWO_STEPS_BOUND = 80.0


def linear(ratios: list[float]) -> bool:
    """Whether the growth over the sizes (see ``growth``) is linear, not quadratic."""
    return len(ratios) == 2 and ratios[0] * ratios[1] < TWO_STEPS_BOUND


def cost(work: Callable[[], object], runs: int = 3) -> float:
    """The least CPU time of up to ``runs`` runs of ``work`` (this thread's: other
    processes on the machine do not count); a run of over half a second is not
    repeated (noise no longer matters then)."""
    best = float("inf")
    for _ in range(runs):
        started = time.thread_time()
        work()
        best = min(best, time.thread_time() - started)
        if best > 0.5:
            break
    return max(best, 1e-6)


def growth(work_at: Callable[[int], Callable[[], object]], sizes: list[int]) -> list[float]:
    """Cost ratios between consecutive sizes; stops at the first step over the bound (a
    quadratic path would take minutes at the next size)."""
    ratios: list[float] = []
    previous = cost(work_at(sizes[0]))
    for size in sizes[1:]:
        current = cost(work_at(size))
        ratios.append(current / previous)
        if ratios[-1] > STEP_BOUND:
            break
        previous = current
    return ratios


def long_line(size: int, unit: str) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
@pytest.mark.parametrize(
    "unit",
    [
        pytest.param("lorem ipsum dolor sit amet, " * 10 + "%a ", id="ascii"),
        pytest.param("中文的提示，" * 50 + "%a ", id="cjk"),
    ],
)
def test_semantic_tokens_cost_grows_linearly_with_a_line(encoding: Encoding, unit: str) -> None:
    def work_at(size: int) -> Callable[[], object]:
        document = Document(uri="untitled:long", text=long_line(size, unit))
        return lambda: semantic_tokens(document, SNIPPETS, encoding)

    ratios = growth(work_at, [MB, 4 * MB, 16 * MB])
    assert linear(ratios), ratios


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
@pytest.mark.parametrize(
    "unit",
    [
        pytest.param("x %a " * 8 + "%%b ", id="markers everywhere"),
        pytest.param("中文的提示，%a ", id="cjk"),
    ],
)
def test_hover_at_the_end_of_a_line_costs_a_few_passes_over_it(
    encoding: Encoding, unit: str
) -> None:
    """Hover at the end of a 16 MB line costs a few C-speed passes over it: under 40
    times what encoding it to UTF-16 once costs (measured: up to ~15 for UTF-8 CJK
    text, which a UTF-8 codec encodes and decodes slower), where expanding the line
    and walking it character by character cost 540 times."""
    line = long_line(16 * MB, unit)
    end = units_of(line, encoding) - 2
    hover = cost(lambda: marker_on_line(line, end, encoding, SNIPPETS))
    one_pass = cost(lambda: line.encode("utf-16-le", "surrogatepass"))
    assert hover / one_pass < 40, (hover, one_pass)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_hover_cost_grows_linearly_with_a_line(encoding: Encoding) -> None:
    def work_at(size: int) -> Callable[[], object]:
        line = long_line(size, "中文 %a " * 10)
        end = units_of(line, encoding)
        return lambda: marker_on_line(line, end, encoding, SNIPPETS)

    ratios = growth(work_at, [MB, 4 * MB, 16 * MB])
    assert linear(ratios), ratios


PIECES = ["%", "%%", "a", "b", ".", "-", "1", "x", " ", "(", "[", "中", "，", "😀", "\ud800", "A"]


@settings(max_examples=examples(500))
@given(
    line=st.lists(st.sampled_from(PIECES), max_size=24).map("".join),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
    data=st.data(),
)
def test_the_marker_on_a_line_is_the_one_the_whole_line_has(
    line: str, encoding: Encoding, data: st.DataObject
) -> None:
    offset = data.draw(st.integers(0, len(line)))
    character = units_of(line[:offset], encoding)
    expected = marker_at(line, offset, SNIPPETS)
    found = marker_on_line(line, character, encoding, SNIPPETS)
    assert (found.marker if found else None) == expected
    if found is not None:
        assert found.start == units_of(line[: expected.start], encoding)  # type: ignore[union-attr]
        assert found.end == units_of(line[: expected.end], encoding)  # type: ignore[union-attr]
