"""Reads a mutmut run (scripts/mutation.sh) and prints the score per module and every
surviving mutant with its diff; exits 1 when the overall score or a module's is below the
minimum.

    python scripts/mutation_report.py [--record DIGESTS] RUNS_DIR MINIMUM [module ...]

``RUNS_DIR`` holds one mutmut work folder per module, named after it. With ``--record``,
each module that scored at least the minimum (when the minimum is the project's gate,
``GATE``, or stricter) is written to scripts/mutation-record.json with its digest from the
``DIGESTS`` file (taken when the run started), so the next run of scripts/test.sh skips it
until it changes (scripts/mutation_record.py).

A module that has never passed under its name (none in the record: new, or moved by the
package's layout) is measured and reported, but does not fail the run: its first passing
run records it, and from then on it is held to the gate. Those modules are named in the
report ("not yet recorded"), so the debt is in sight.

A mutant counts as caught when a test failed on it (killed), or it made the tests hang
(timeout) or crash (segfault): each is a behavior change a test noticed. Survivors and
mutants no test runs at all ("no tests") count against the score.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import mutation_record

CAUGHT = {"killed", "timeout", "segfault", "caught by type check"}
#: The score every core module keeps (CONTRIBUTING.md, "Mutation testing"): a run judged by
#: a looser minimum records nothing.
GATE = 95.0


def main(argv: list[str]) -> int:
    digests: dict[str, str] | None = None
    if argv[:1] == ["--record"]:
        digests = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
        argv = argv[2:]
    runs, minimum, *modules = argv
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    by_module: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    missed: list[tuple[str, str, Path]] = []
    for module in modules:
        work = Path(runs) / module
        out = subprocess.run(
            [mutmut, "results", "--all", "true"],
            cwd=work,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in out.splitlines():
            name, sep, status = line.strip().rpartition(": ")
            if not sep or not name.startswith("pi_snippets_lsp."):
                continue
            by_module[module][status] += 1
            if status not in CAUGHT:
                missed.append((name, status, work))

    recorded = set(mutation_record.load())
    total = caught = 0
    failing: list[str] = []
    ungated: list[str] = []
    passed: dict[str, tuple[int, int]] = {}
    print(f"{'module':<32} {'caught':>7} {'total':>6} {'score':>7}")
    for module in modules:
        counts = by_module.get(module, {})
        module_total = sum(counts.values())
        module_caught = sum(n for status, n in counts.items() if status in CAUGHT)
        total += module_total
        caught += module_caught
        score = 100.0 * module_caught / module_total if module_total else 100.0
        if score < float(minimum) and module not in recorded:
            ungated.append(module)
        elif score < float(minimum):
            failing.append(module)
        else:
            passed[module] = (module_caught, module_total)
        print(f"{module:<32} {module_caught:>7} {module_total:>6} {score:>6.1f}%")
    overall = 100.0 * caught / total if total else 100.0
    print(f"{'all':<32} {caught:>7} {total:>6} {overall:>6.1f}%")
    if ungated:
        print(f"below {minimum}% and not yet recorded (reported, not gated): " + ", ".join(ungated))
    if digests is not None and float(minimum) >= GATE and passed:
        mutation_record.update(passed, digests)
        print(f"recorded in {mutation_record.RECORD.name}: {', '.join(sorted(passed))}")

    for name, status, work in missed:
        diff = subprocess.run(
            [mutmut, "show", name], cwd=work, capture_output=True, text=True, check=False
        ).stdout
        print(f"\n--- {status}: {name}\n{diff.rstrip()}")

    if failing:
        print(
            f"\nmutation score below {minimum}%: "
            + (", ".join(failing) if failing else f"overall {overall:.1f}%"),
            file=sys.stderr,
        )
        return 1
    print(f"\nmutation score {overall:.1f}% (minimum {minimum}% overall and per module)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
