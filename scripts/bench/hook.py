"""The prompt hook's start: ``pi-snippets-lsp hook claude-code`` from spawn to exit.

An agent runs the hook on every prompt (docs/agents.md), so its whole life is on the
person's path: spawn, imports, the settings read, the expansion, the answer. Measured on
a prompt with a known marker (the hook's longest path) beside spawning ``python3 -c
pass``, the least any Python command costs; the best of each.
"""

from __future__ import annotations

import compileall
import json
import subprocess
import sys
import time
from pathlib import Path

import pi_snippets_lsp

from .report import Row, count_label, ms
from .server import BenchError, write_settings
from .sizes import Sizes

#: The issue's bound: at most this many times ``python3 -c pass``.
HOOK_TARGET = 6.0


def hook_start(sizes: Sizes, work: Path, table: dict[str, str]) -> Row:
    compileall.compile_dir(Path(pi_snippets_lsp.__file__).parent, quiet=1)
    settings = work / "settings-hook.json"
    write_settings(settings, table)
    name = next(iter(table))
    event = {"prompt": f"Please %{name} the change", "cwd": str(work)}
    data = json.dumps({"hook_event_name": "UserPromptSubmit", **event}).encode()
    command = [sys.executable, "-m", "pi_snippets_lsp", "hook", "claude-code"]
    hooks: list[float] = []
    bare: list[float] = []
    for _ in range(sizes.startups):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, cwd=work)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "--settings", str(settings)],
            input=data,
            capture_output=True,
            check=True,
            cwd=work,
        )
        hooks.append(time.perf_counter() - start)
        if b"additionalContext" not in done.stdout:
            raise BenchError(f"the hook did not expand the prompt: {done.stdout!r}")
    ours, floor = min(hooks), min(bare)
    ratio = ours / floor
    return Row(
        "hook_start",
        f"prompt hook, spawn to exit ({count_label(len(table))} snippets: "
        "`hook claude-code` on a prompt with a marker)",
        ms(ours),
        "ms",
        f"`python3 -c pass`: {ms(floor)} ms ({ratio:.2f}x)",
        f"<= {HOOK_TARGET:g}x `python3 -c pass`",
        ratio <= HOOK_TARGET,
        {"ratio": round(ratio, 3), "python_ms": ms(floor)},
    )
