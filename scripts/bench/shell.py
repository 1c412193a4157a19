"""``pi-snippets-lsp expand`` from a shell: spawn to exit on a one-line prompt, beside
spawning ``python -c pass``.

Shell users, scripts and agent hooks start the command once per prompt, so its whole
cost is the interpreter's start plus what the command imports and reads. Three shapes:
no settings file, the shipped ``examples/settings.json``, and the bench's 1,000
snippets; each run spawns the reference and every shape in turn (a burst of load falls
on all alike), and the best of each is kept.
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
import time
from pathlib import Path

import pi_snippets_lsp

from . import REPO
from .report import Row, count_label, ms
from .server import BenchError, write_settings
from .sizes import Sizes

#: The most the command may take, in spawns of ``python -c pass`` (issue 33).
SHELL_TARGET = 6.0
PASS = (sys.executable, "-c", "pass")
COMMAND = (sys.executable, "-m", "pi_snippets_lsp", "expand")


def _spawn(
    command: list[str], prompt: bytes, env: dict[str, str], cwd: Path
) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(command, input=prompt, capture_output=True, env=env, cwd=cwd)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise BenchError(f"{' '.join(command)} exited {done.returncode}: {done.stderr!r}")
    return seconds, done.stdout


def expand_command(sizes: Sizes, work: Path, table: dict[str, str]) -> Row:
    """Spawn to exit of ``pi-snippets-lsp expand`` (as ``python -m pi_snippets_lsp``) of
    a one-line prompt, per shape, beside ``python -c pass``; the row is the worst shape's
    best time."""
    package = Path(pi_snippets_lsp.__file__).parent
    compileall.compile_dir(package, quiet=1)  # as an installed wheel starts
    folder = work / "shell"
    agent_dir = folder / "agent"  # holds no settings.json: the "no settings" shape
    agent_dir.mkdir(parents=True, exist_ok=True)
    many = folder / "settings-1000.json"
    write_settings(many, table)
    shapes: dict[str, tuple[list[str], str]] = {
        "no settings file": ([], "review"),
        "examples/settings.json": (
            ["--settings", str(REPO / "examples" / "settings.json")],
            "review",
        ),
        f"{count_label(len(table))} snippets": (["--settings", str(many)], next(iter(table))),
    }
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PYTHONPATH": os.pathsep.join(
            [str(package.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    best = {name: float("inf") for name in ("pass", *shapes)}
    for _ in range(sizes.shell_runs):
        best["pass"] = min(best["pass"], _spawn(list(PASS), b"", env, folder)[0])
        for name, (options, snippet) in shapes.items():
            prompt = f"Please %{snippet}, then stop.\n".encode()
            seconds, out = _spawn([*COMMAND, *options], prompt, env, folder)
            if (out == prompt) != (name == "no settings file"):
                raise BenchError(f"expand ({name}) answered {out[:200]!r}")
            best[name] = min(best[name], seconds)
    floor = best.pop("pass")
    ratios = {name: seconds / floor for name, seconds in best.items()}
    worst = max(ratios, key=ratios.__getitem__)
    return Row(
        "expand_command",
        "`pi-snippets-lsp expand` of a one-line prompt from a shell: spawn to exit "
        f"(worst shape: {worst})",
        ms(best[worst]),
        "ms",
        f"`python -c pass`: {ms(floor)} ms ({ratios[worst]:.2f}x)",
        f"<= {SHELL_TARGET:g}x `python -c pass`",
        ratios[worst] <= SHELL_TARGET,
        {
            "pass_ms": ms(floor),
            "shapes": {
                name: {"ms": ms(seconds), "ratio": round(ratios[name], 3)}
                for name, seconds in best.items()
            },
        },
    )
