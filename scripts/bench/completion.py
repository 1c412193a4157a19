"""Completion over stdio: one server per snippet count and name vocabulary, every query
length reported on a row of its own, each row the worst vocabulary.

A keystroke is what an editor sends when a person types: ``didChange`` (the prompt line
becomes ``%`` and the query) and ``textDocument/completion`` at its end. The floor is
the same keystroke on a line without a snippet token (nothing to rank: the protocol's
own cost), taken between the queries so both see the same load. The server's first 20
names and ``isIncomplete`` are held to pi-tui's ``fuzzyFilter`` run by Node on the same
names and queries; its time there is shown for information.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import reference
from .report import Row, count_label, ms, percentile
from .server import BenchError, BenchServer, Prompt, memory_kib, write_settings
from .shapes import queries, snippet_table
from .sizes import QUERY_LENGTHS, SEED, Sizes

#: Per tier: the most p50 may be over the floor (None: no such target), p99's bound (ms).
TARGETS: tuple[tuple[float | None, float], ...] = ((1.5, 3.0), (3.0, 6.0), (None, 40.0))
WARMUP = 10

#: Work a measure does on one server of the tier it asks for, with that server's floor.
Extra = Callable[[BenchServer, float], None]


@dataclass
class Run:
    """One server's figures: the floor, and each query length's times and answers."""

    vocabulary: str
    count: int
    floor: list[float] = field(default_factory=list)
    queries: dict[int, list[str]] = field(default_factory=dict)
    seconds: dict[int, list[float]] = field(default_factory=dict)
    tops: dict[int, list[list[str]]] = field(default_factory=dict)
    incomplete: dict[int, list[bool]] = field(default_factory=dict)
    #: Per length: pi-tui's time per query, and whether every answer was pi-tui's.
    js_seconds: dict[int, list[float]] = field(default_factory=dict)
    same_as_js: dict[int, bool] = field(default_factory=dict)

    @property
    def floor50(self) -> float:
        return statistics.median(self.floor)

    def figures(self, length: int) -> dict[str, Any]:
        times = self.seconds[length]
        p50 = percentile(times, 0.5)
        figures: dict[str, Any] = {
            "queries": len(times),
            "distinct": len(set(self.queries[length])),
            "p50_ms": ms(p50),
            "p99_ms": ms(percentile(times, 0.99)),
            "floor_p50_ms": ms(self.floor50),
            "floor_p99_ms": ms(percentile(self.floor, 0.99)),
            "ratio": round(p50 / self.floor50, 3),
        }
        if length in self.js_seconds:
            figures["js_fuzzy_filter_p50_ms"] = ms(percentile(self.js_seconds[length], 0.5))
            figures["same_as_js"] = self.same_as_js[length]
        return figures


def run_tier(
    sizes: Sizes,
    work: Path,
    tier: int,
    extras: Mapping[tuple[int, str], Extra],
) -> tuple[list[Row], list[Run]]:
    """Every vocabulary's server at the tier's size; one row per query length."""
    count = sizes.completion_counts[tier]
    value_chars = sizes.large_value_chars if tier == 2 else sizes.value_chars
    runs = []
    for number, vocabulary in enumerate(sizes.vocabularies):
        table = snippet_table(vocabulary, count, value_chars, SEED + count + number)
        run = _run(sizes, work, tier, vocabulary, table, extras.get((tier, vocabulary)))
        _compare_with_js(work, list(table), run)
        runs.append(run)
    rows = [_row(tier, count, length, runs, value_chars) for length in QUERY_LENGTHS]
    return rows, runs


def _run(
    sizes: Sizes,
    work: Path,
    tier: int,
    vocabulary: str,
    table: dict[str, str],
    extra: Extra | None,
) -> Run:
    count = len(table)
    names = list(table)
    rng = random.Random(SEED + 7 * count + len(vocabulary))
    most = sizes.queries_per_length[tier]
    repeats = sizes.short_repeats[tier]
    run = Run(vocabulary, count)
    warmup = queries(names, 3, WARMUP, 1, rng)
    longest = {3: queries(names, 3, most + WARMUP, 1, rng), 4: queries(names, 4, most, 1, rng)}
    for length in QUERY_LENGTHS:
        if length == 3:
            run.queries[3] = [q for q in longest[3] if q not in warmup][:most]
        elif length == 4:
            run.queries[4] = longest[4]
        else:
            run.queries[length] = queries(names, length, most, repeats, rng)
        run.seconds[length], run.tops[length], run.incomplete[length] = [], [], []
    order = [(length, q) for length, qs in run.queries.items() for q in qs]
    rng.shuffle(order)
    # Each length's queries in the order they were sent (the JavaScript reference's).
    for length in QUERY_LENGTHS:
        run.queries[length] = []
    settings = work / f"settings-{count}-{vocabulary}.json"
    write_settings(settings, table)
    server = BenchServer(work, settings, f"{count}-{vocabulary}")
    try:
        server.start(count)
        prompt = Prompt(server)
        for query in warmup:
            prompt.keystroke("%" + query)
        for i, (length, query) in enumerate(order):
            if i % sizes.floor_every == 0:
                result, seconds = prompt.keystroke(f"no token here {i}")
                if result is not None:
                    raise BenchError(f"a completion on a line without a token: {result!r}")
                run.floor.append(seconds)
            result, seconds = prompt.keystroke("%" + query)
            if result is None:
                raise BenchError(f"no completion for %{query} with {count} snippets")
            run.queries[length].append(query)
            run.seconds[length].append(seconds)
            run.tops[length].append([item["label"][1:] for item in result["items"]])
            run.incomplete[length].append(bool(result["isIncomplete"]))
        if extra is not None:
            extra(server, run.floor50)
    finally:
        server.close()
    return run


def _compare_with_js(work: Path, names: list[str], run: Run) -> None:
    # Pi lists its snippets in name order, and so ranks them (docs/grammar.md).
    ordered = sorted(names)
    sets = [reference.RankingSet(ordered, [], run.queries[length]) for length in QUERY_LENGTHS]
    answers = reference.ranked(work, sets)
    if answers is None:
        return
    for length, answer in zip(QUERY_LENGTHS, answers, strict=True):
        run.js_seconds[length] = answer.seconds
        run.same_as_js[length] = run.tops[length] == answer.tops and run.incomplete[length] == [
            matched > 20 for matched in answer.counts
        ]


def _row(tier: int, count: int, length: int, runs: list[Run], value_chars: int) -> Row:
    figures = {run.vocabulary: run.figures(length) for run in runs}
    slow = max(figures, key=lambda v: figures[v]["ratio"])
    tail = max(figures, key=lambda v: figures[v]["p99_ms"])
    p50, ratio = figures[slow]["p50_ms"], figures[slow]["ratio"]
    p99 = figures[tail]["p99_ms"]
    ratio_target, p99_target = TARGETS[tier]
    same = all(f.get("same_as_js", True) for f in figures.values())
    met = p99 <= p99_target and (ratio_target is None or ratio <= ratio_target) and same
    reference_text = (
        f"floor {figures[slow]['floor_p50_ms']} ms (p50 {ratio:.2f}x floor: {slow}; p99: {tail})"
    )
    js = [f["js_fuzzy_filter_p50_ms"] for f in figures.values() if "js_fuzzy_filter_p50_ms" in f]
    if js:
        reference_text += f"; pi-tui fuzzyFilter in V8: p50 up to {max(js)} ms"
    if not same:
        reference_text += "; ORDER DIFFERS from pi-tui"
    target = f"p99 <= {p99_target:g} ms"
    if ratio_target is not None:
        target = f"p50 <= {ratio_target:g}x floor, " + target
    chars = "the empty query" if length == 0 else f"{length}-character queries"
    return Row(
        f"completion_{_tier_label(count)}_q{length}",
        f"completion over stdio, {count_label(count)} snippets"
        + (f" of {value_chars} chars" if tier == 2 else "")
        + f", {chars} (p50 / p99)",
        p50,
        "ms",
        reference_text,
        target,
        met,
        {
            "p99_ms": p99,
            "ratio": ratio,
            "snippets": count,
            "length": length,
            "vocabularies": figures,
        },
    )


def _tier_label(count: int) -> str:
    """``1k``, ``10k``, ``100k`` for the full sizes; the count itself for quick ones."""
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


def rss_row(sizes: Sizes, server: BenchServer, prompt_queries: list[str]) -> Row:
    """RSS after half and all of ``prompt_queries`` (run on ``server``), and its peak."""
    prompt = Prompt(server, "file:///bench/rss.md")
    half: dict[str, int] = {}
    for i, query in enumerate(prompt_queries):
        prompt.keystroke("%" + query)
        if i == len(prompt_queries) // 2:
            half = memory_kib(server.pid)
    end = memory_kib(server.pid)
    peak = end.get("VmHWM")
    count = sizes.completion_counts[1]
    flat = bool(half) and end.get("VmRSS", 0) <= half.get("VmRSS", 0) * 1.05
    return Row(
        "peak_rss",
        f"peak RSS, {count_label(count)} snippets of {sizes.value_chars} chars, "
        f"{count_label(len(prompt_queries))} completions",
        round(peak / 1024, 1) if peak else None,
        "MB",
        f"RSS after half the completions {half.get('VmRSS', 0) / 1024:.1f} MB, "
        f"after all {end.get('VmRSS', 0) / 1024:.1f} MB",
        "<= 70 MB, flat",
        (peak / 1024 <= 70 and flat) if peak else None,
        {"half": half, "end": end},
    )
