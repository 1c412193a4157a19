"""The CPython versions the package claims, and where each one is on this machine.

``pyproject.toml``'s classifiers name the versions (``Programming Language :: Python :: 3.12``);
scripts/test.sh runs the tests under each, and the VS Code bundle's tests start the bundled
server under each. A version is looked up by its minor version only, never a patch release,
so the lookup survives an upgrade from 3.12.1 to 3.12.9:

1. ``pyenv prefix 3.12`` (the newest 3.12.x pyenv has installed), its ``bin/python3.12``;
2. ``python3.12`` on ``PATH`` (a pyenv shim for a version that is not active fails to run,
   so every candidate is run before it is believed);
3. ``/usr/bin/python3.12``, ``/usr/local/bin/python3.12``.

A candidate counts only if it runs and reports that CPython minor version.

    python3 scripts/pythons.py --supported     # 3.11 3.12 3.13, one a line
    python3 scripts/pythons.py 3.12            # its path; exit 1 and the places looked in
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_CLASSIFIER = re.compile(r'"Programming Language :: Python :: (3\.\d+)"')
#: What a candidate prints under ``-I -S -c``: its implementation and minor version.
_PROBE = "import sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2])"


def supported(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """The minor versions ``pyproject.toml``'s classifiers claim, oldest first."""
    found = set(_CLASSIFIER.findall(pyproject.read_text(encoding="utf-8")))
    return sorted(found, key=lambda v: tuple(int(p) for p in v.split(".")))


def reports(python: str, version: str) -> bool:
    """Whether ``python`` runs and is CPython ``version`` (``"3.12"``)."""
    try:
        out = subprocess.run(
            [python, "-I", "-S", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.split() == ["cpython", version]


def _pyenv_prefix(version: str) -> str | None:
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return None
    try:
        out = subprocess.run(
            [pyenv, "prefix", version], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    prefix = out.stdout.strip().splitlines()
    return prefix[0] if out.returncode == 0 and prefix else None


def candidates(version: str) -> list[str]:
    """Where CPython ``version`` may be, in the order they are tried (not yet run)."""
    names: list[str] = []
    prefix = _pyenv_prefix(version)
    if prefix:
        names.append(str(Path(prefix) / "bin" / f"python{version}"))
    on_path = shutil.which(f"python{version}")
    if on_path:
        names.append(on_path)
    names += [f"/usr/bin/python{version}", f"/usr/local/bin/python{version}"]
    return list(dict.fromkeys(names))


def find(version: str) -> str | None:
    """The path of a CPython ``version`` that runs, or None."""
    for name in candidates(version):
        if Path(name).is_file() and reports(name, version):
            return name
    return None


def main(argv: list[str]) -> int:
    if argv == ["--supported"]:
        print("\n".join(supported()))
        return 0
    if len(argv) != 1 or not re.fullmatch(r"3\.\d+", argv[0]):
        print("usage: pythons.py --supported | pythons.py 3.X", file=sys.stderr)
        return 2
    found = find(argv[0])
    if found is None:
        looked = ", ".join(["pyenv prefix " + argv[0], *candidates(argv[0])])
        print(f"no CPython {argv[0]} found (looked in: {looked})", file=sys.stderr)
        return 1
    print(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
