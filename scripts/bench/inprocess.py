"""Measures in the bench's own process: expansion beside the JavaScript pass, and a
one-character edit in a long document."""

from __future__ import annotations

import hashlib
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pi_snippets_lsp.core.documents import Document, Position
from pi_snippets_lsp.core.expansion import SnippetTable, expand

from . import reference
from .report import Row, count_label, ms, size_label
from .shapes import DENSE, PROSE, document_text
from .sizes import MB, SEED, Sizes

#: A pass is linear when its rate on the whole text is at least this share of its rate
#: on a quarter of it (a quadratic pass would fall to a quarter; noise moves a few %).
LINEAR_SHARE = 0.7
PROSE_TARGET = 2.0
DENSE_TARGET = 1.5


def once(run: Callable[[], object]) -> float:
    """The seconds ``run`` takes, its result freed after the clock stops: timing.mjs
    keeps the JavaScript pass's result past its timer too (it hashes it), and freeing a
    text of megabytes is no part of the pass."""
    start = time.perf_counter()
    result = run()
    took = time.perf_counter() - start
    del result
    return took


@dataclass
class _Text:
    kind: str  # "prose" or "dense"
    shape: str
    text: str
    quarter: bool = False
    seconds: float = float("inf")
    js: dict[str, Any] | None = None

    @property
    def nbytes(self) -> int:
        return len(self.text.encode("utf-8"))

    @property
    def rate(self) -> float:
        return self.nbytes / self.seconds / MB

    @property
    def js_rate(self) -> float | None:
        return None if self.js is None else self.nbytes / self.js["seconds"] / MB


def expansion(sizes: Sizes, work: Path, snippets: dict[str, str]) -> list[Row]:
    """Every prose shape and dense mix, ours and the JavaScript pass taking turns."""
    names = list(snippets)
    rng = random.Random(SEED)
    texts = [
        _Text("prose", shape, make(sizes.text_bytes, names, rng)) for shape, make in PROSE.items()
    ]
    for shape, make in DENSE.items():
        texts.append(_Text("dense", shape, make(sizes.text_bytes, names, rng)))
        texts.append(_Text("dense", shape, make(sizes.text_bytes // 4, names, rng), quarter=True))
    # The table is made once, outside the timer, as the server's generation of values is
    # (``Config.values``) and as the JavaScript pass builds its ``Map`` (timing.mjs).
    table = SnippetTable(snippets)
    results = [expand(entry.text, table) for entry in texts]
    js = reference.JavaScript.start(work, snippets, [entry.text for entry in texts])
    try:
        for _ in range(sizes.turns):
            for index, entry in enumerate(texts):
                entry.seconds = min(entry.seconds, once(partial(expand, entry.text, table)))
                if js is not None:
                    measured = js.expand(index)
                    if entry.js is None or measured["seconds"] < entry.js["seconds"]:
                        entry.js = measured
    finally:
        if js is not None:
            js.close()
    shapes: dict[str, dict[str, Any]] = {}
    for entry, result in zip(texts, results, strict=True):
        key = f"{entry.kind}/{entry.shape}" + ("/quarter" if entry.quarter else "")
        figures: dict[str, Any] = {
            "bytes": entry.nbytes,
            "mb_per_s": round(entry.rate, 1),
            "replacements": len(result.replacements),
        }
        if entry.js is not None and entry.js_rate is not None:
            ours = hashlib.sha256(result.text.encode("utf-8")).hexdigest()
            figures["js_mb_per_s"] = round(entry.js_rate, 1)
            figures["ratio"] = round(entry.rate / entry.js_rate, 3)
            figures["identical_to_js"] = (
                ours == entry.js["sha256"] and result.changed == entry.js["changed"]
            )
        shapes[key] = figures
    return [_prose_row(texts, shapes), _dense_row(texts, shapes)]


def _worst(texts: list[_Text], kind: str) -> _Text:
    """The shape of ``kind`` with the lowest ratio to the JavaScript pass (the lowest
    rate without Node), whole-size texts only."""
    whole = [t for t in texts if t.kind == kind and not t.quarter]
    if all(t.js_rate is not None for t in whole):
        return min(whole, key=lambda t: t.rate / (t.js_rate or 1))
    return min(whole, key=lambda t: t.rate)


def _ratio_text(entry: _Text, identical: bool) -> str:
    if entry.js_rate is None:
        return "JavaScript pass: n/a (no node)"
    return (
        f"JavaScript pass: {entry.js_rate:.1f} MB/s (ours {entry.rate / entry.js_rate:.2f}x"
        f"{'' if identical else ', RESULTS DIFFER'})"
    )


def _identical(shapes: dict[str, dict[str, Any]]) -> bool:
    return all(figures.get("identical_to_js", True) for figures in shapes.values())


def _prose_row(texts: list[_Text], shapes: dict[str, dict[str, Any]]) -> Row:
    worst = _worst(texts, "prose")
    identical = _identical(shapes)
    met = None
    if worst.js_rate is not None:
        met = identical and worst.rate >= PROSE_TARGET * worst.js_rate
    kinds = ", ".join(PROSE)
    return Row(
        "expansion_prose",
        f"expansion in-process, {size_label(worst.nbytes)} prose (worst of {kinds}: {worst.shape})",
        round(worst.rate, 1),
        "MB/s",
        _ratio_text(worst, identical),
        f">= {PROSE_TARGET:g}x the JavaScript pass",
        met,
        {
            "worst": worst.shape,
            "shapes": {k: v for k, v in shapes.items() if k.startswith("prose/")},
        },
    )


def _dense_row(texts: list[_Text], shapes: dict[str, dict[str, Any]]) -> Row:
    worst = _worst(texts, "dense")
    identical = _identical(shapes)
    dense = {k: v for k, v in shapes.items() if k.startswith("dense/")}
    # Linear: each mix's whole-size rate beside its quarter-size rate.
    shares = {
        shape: dense[f"dense/{shape}"]["mb_per_s"] / dense[f"dense/{shape}/quarter"]["mb_per_s"]
        for shape in DENSE
    }
    least = min(shares, key=shares.__getitem__)
    linear = shares[least] >= LINEAR_SHARE
    met = None
    if worst.js_rate is not None:
        met = identical and linear and worst.rate >= DENSE_TARGET * worst.js_rate
    quarter = dense[f"dense/{least}/quarter"]["mb_per_s"]
    return Row(
        "expansion_dense",
        f"expansion in-process, {size_label(worst.nbytes)} dense with % (worst of "
        f"{len(DENSE)} mixes: {worst.shape})",
        round(worst.rate, 1),
        "MB/s",
        _ratio_text(worst, identical)
        + f"; linear: {least} at 1/4 size {quarter:.1f} MB/s, whole {shares[least]:.2f}x that",
        f">= {DENSE_TARGET:g}x the JavaScript pass on every mix; linear in size",
        met,
        {"worst": worst.shape, "linear_share": round(shares[least], 3), "shapes": dense},
    )


def document_edit(sizes: Sizes) -> Row:
    lines = sizes.document_lines
    document = Document(uri="file:///bench/long.md", text=document_text(lines))
    rng = random.Random(SEED + 1)
    times: list[float] = []
    for _ in range(sizes.edits):
        line = rng.randrange(lines)
        start = time.perf_counter()
        document.apply_change("x", Position(line, 4), Position(line, 4), "utf-16")
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        document.apply_change("", Position(line, 4), Position(line, 5), "utf-16")
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    return Row(
        "edit_in_process",
        f"one-character edit in a {count_label(lines)}-line document, in-process",
        ms(median),
        "ms",
        f"max {ms(max(times))} ms",
        "<= 5 ms",
        median <= 0.005,
        {"lines": lines, "median_ms": ms(median), "max_ms": ms(max(times))},
    )
