"""Which core modules mutation testing must run again: the record of the last passing run.

``scripts/mutation-record.json`` keeps, for each core module that last passed the gate, a
digest of what its score depends on and the score itself. The digest covers the module's
source, the unit test files its mutants run against (``core_modules.tests_of``) and the
conftest files that shape every run (``SHARED``), with line ends normalised, so a checkout
with CRLF files digests the same. A module whose digest differs from the record (or that
is not in it) has changed since it last passed, and scripts/test.sh runs its mutants; the
others keep their recorded score. ``PI_SNIPPETS_FULL_MUTATION=1`` runs every module.

What the digest does not see: a change in another module the tested one calls, or in the
mutation tooling. A full run (before a release, after such a change) covers them.

Modules are dotted names at any depth of the package (``grammar``, ``core.grammar``), as
scripts/core_modules.py lists them; a renamed or moved module is a new name, so it runs.

    python scripts/mutation_record.py changed     # the core modules to run, one a line
    python scripts/mutation_record.py show        # every core module: recorded or changed
    python scripts/mutation_record.py digests MODULE...   # their digests now, as JSON

scripts/mutation_report.py updates the record (``--record``) for each module that passed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import core_modules

REPO = core_modules.REPO
RECORD = REPO / "scripts" / "mutation-record.json"
#: Files every module's verdict depends on: the Hypothesis profiles and the order and
#: time limits of a mutant's tests.
SHARED = ("tests/conftest.py", "tests/unit/conftest.py")


def inputs(module: str) -> list[Path]:
    """The files a module's mutation score depends on, in a fixed order."""
    files = [core_modules.path_of(module)]
    files += [REPO / name for name in core_modules.tests_of(module)]
    files += [REPO / name for name in SHARED]
    return files


def digest(module: str) -> str:
    """A digest of ``inputs(module)``: each file's repo path and text (LF line ends); a
    missing file is digested as missing, so removing a test file changes the digest."""
    hasher = hashlib.sha256()
    for path in inputs(module):
        hasher.update(path.relative_to(REPO).as_posix().encode())
        hasher.update(b"\0")
        if path.is_file():
            hasher.update(path.read_bytes().replace(b"\r\n", b"\n"))
        else:
            hasher.update(b"\0missing")
        hasher.update(b"\0")
    return hasher.hexdigest()


def load(path: Path = RECORD) -> dict[str, dict[str, object]]:
    """The record's modules (empty when there is no record yet)."""
    if not path.is_file():
        return {}
    modules = json.loads(path.read_text(encoding="utf-8")).get("modules", {})
    return modules if isinstance(modules, dict) else {}


def changed(modules: list[str], record: dict[str, dict[str, object]]) -> list[str]:
    """The modules of ``modules`` whose digest is not the recorded one."""
    return [m for m in modules if record.get(m, {}).get("digest") != digest(m)]


def update(
    scores: dict[str, tuple[int, int]], digests: dict[str, str], path: Path = RECORD
) -> None:
    """Records ``scores`` (module -> caught, total) with each module's digest as the run
    found it (``digests``); the other modules' entries are kept, but for modules whose file
    is gone (moved or renamed: their new name runs as a new module)."""
    modules = {m: e for m, e in load(path).items() if core_modules.path_of(m).is_file()}
    for module, (caught, total) in scores.items():
        modules[module] = {
            "digest": digests[module],
            "caught": caught,
            "total": total,
            "score": round(100.0 * caught / total, 1) if total else 100.0,
        }
    text = json.dumps(
        {
            "about": "Core modules whose mutants last passed the gate: scripts/mutation_record.py",
            "modules": dict(sorted(modules.items())),
        },
        indent=2,
    )
    path.write_text(text + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    record = load()
    if argv == ["changed"]:
        # Digests are cheap; only the changed candidates are imported to tell core ones.
        for module in core_modules.core_modules(changed(core_modules.candidates(), record)):
            print(module)
        return 0
    if argv[:1] == ["digests"]:
        print(json.dumps({module: digest(module) for module in argv[1:]}))
        return 0
    if argv == ["show"]:
        stale = set(changed(core_modules.candidates(), record))
        for module in core_modules.core_modules():
            entry = record.get(module)
            if module in stale:
                print(f"{module:<32} changed since its last passing run")
            elif entry is not None:
                print(f"{module:<32} recorded {entry.get('score')}%")
        return 0
    print("usage: mutation_record.py changed | show | digests MODULE...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
