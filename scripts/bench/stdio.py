"""The other measures over stdio: ``snippets/expand``, an edit in a long document,
reload, and a cold start to a first completion."""

from __future__ import annotations

import compileall
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pi_snippets_lsp
from pi_snippets_lsp.core.expansion import expand

from .report import Row, count_label, ms, size_label
from .server import BenchError, BenchServer, settings_text, write_settings
from .shapes import document_text
from .sizes import SEED, Sizes

STARTUP_TARGET = 1.3


def expand_over_stdio(
    sizes: Sizes, server: BenchServer, text: str, snippets: dict[str, str]
) -> Row:
    expected = expand(text, snippets).text
    times: list[float] = []
    for _ in range(sizes.expand_requests):
        result, seconds = server.timed("snippets/expand", {"text": text})
        if result["text"] != expected:
            raise BenchError("snippets/expand differs from the in-process pass")
        times.append(seconds)
    median = statistics.median(times)
    return Row(
        "expand_stdio",
        f"`snippets/expand` of {size_label(len(text.encode()))} prose, end to end over stdio",
        ms(median),
        "ms",
        f"best {ms(min(times))} ms",
        "<= 25 ms",
        median <= 0.025,
        {"median_ms": ms(median), "best_ms": ms(min(times))},
    )


def edit_over_stdio(sizes: Sizes, server: BenchServer, floor: float) -> Row:
    lines = sizes.document_lines
    uri = "file:///bench/long.md"
    start = time.perf_counter()
    server.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": uri,
                "languageId": "markdown",
                "version": 1,
                "text": document_text(lines),
            }
        },
    )
    server.request(
        "textDocument/completion",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 4}},
    )
    opened = time.perf_counter() - start
    rng = random.Random(SEED + 2)
    times: list[float] = []
    for version in range(2, 2 + sizes.stdio_edits):
        line = rng.randrange(lines)
        change = {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": line, "character": 4},
                        "end": {"line": line, "character": 4},
                    },
                    "text": "x",
                }
            ],
        }
        _, seconds = server.timed(
            "textDocument/completion",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": 5}},
            before=[("textDocument/didChange", change)],
        )
        times.append(seconds)
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    median = statistics.median(times)
    return Row(
        "edit_stdio",
        f"one-character edit in a {count_label(lines)}-line document, over stdio "
        "(didChange + completion)",
        ms(median),
        "ms",
        f"floor {ms(floor)} ms; didOpen {ms(opened)} ms",
        "<= 5 ms",
        median <= 0.005,
        {"lines": lines, "max_ms": ms(max(times)), "open_ms": ms(opened)},
    )


def reload(sizes: Sizes, server: BenchServer, settings: Path, table: dict[str, str]) -> list[Row]:
    times: list[float] = []
    notice_sizes: list[int] = []
    first = next(iter(table))
    for i in range(sizes.reloads):
        # The editor has the text ready; the figure starts at its write.
        text = settings_text({**table, first: f"{table[first]} (edit {i})"})
        mark = len(server.notifications)
        start = time.perf_counter()
        write_settings(settings, text)
        server.notify(
            "workspace/didChangeWatchedFiles",
            {"changes": [{"uri": settings.as_uri(), "type": 2}]},
        )
        seen = server.wait_notification("snippets/didLoad", mark, timeout=60)
        if seen is None:
            break
        times.append(seen.arrived - start)
        notice_sizes.append(seen.size)
    count = len(table)
    median = statistics.median(times) if times else None
    size = notice_sizes[-1] if notice_sizes else None
    return [
        Row(
            "reload",
            f"reload at {count_label(count)} snippets (file write -> snippets/didLoad)",
            ms(median) if median is not None else None,
            "ms",
            "—",
            "<= 50 ms",
            None if median is None else median <= 0.05,
            {"snippets": count, "reloads": len(times)},
        ),
        Row(
            "did_load_size",
            f"snippets/didLoad size at {count_label(count)} snippets",
            size,
            "bytes",
            "on every reload (compact JSON)",
            "<= 4 KiB",
            None if size is None else size <= 4096,
            {"snippets": count},
        ),
    ]


def startup(sizes: Sizes, work: Path, table: dict[str, str]) -> Row:
    """Spawn to the answer of a first completion (``initialize``, ``initialized``,
    ``didOpen`` of a prompt ``%``, ``completion``) with ``table``'s snippets, beside
    spawning ``python -c "import pygls.lsp.server"`` to its exit; the best of each."""
    # Start from compiled bytecode, as an installed wheel does (pip compiles on install);
    # an editable checkout run with PYTHONDONTWRITEBYTECODE has none, and would compile
    # the package's source on every start.
    compileall.compile_dir(Path(pi_snippets_lsp.__file__).parent, quiet=1)
    settings = work / "settings-startup.json"
    write_settings(settings, table)
    first: list[float] = []
    initialized: list[float] = []
    imports: list[float] = []
    uri = "file:///bench/first.md"
    for _ in range(sizes.startups):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pygls.lsp.server"], check=True, cwd=work)
        imports.append(time.perf_counter() - start)
        server = BenchServer(work, settings, "startup")
        try:
            initialized.append(server.initialize())
            server.notify("initialized", {})
            server.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": "%"}},
            )
            result, _ = server.timed(
                "textDocument/completion",
                {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}},
            )
            if not result or not result["items"]:
                raise BenchError(f"the first completion listed nothing: {result!r}")
            first.append(server.response_arrived - server.started)
        finally:
            server.close()
    ours, framework = min(first), min(imports)
    ratio = ours / framework
    return Row(
        "startup",
        f"cold start to a first completion ({count_label(len(table))} snippets: spawn, "
        "initialize, didOpen, completion)",
        ms(ours),
        "ms",
        f"`import pygls.lsp.server`: {ms(framework)} ms ({ratio:.2f}x); "
        f"initialize answered at {ms(min(initialized))} ms",
        f"<= {STARTUP_TARGET:g}x the framework's import",
        ratio <= STARTUP_TARGET,
        {
            "ratio": round(ratio, 3),
            "import_ms": ms(framework),
            "initialize_ms": ms(min(initialized)),
        },
    )
