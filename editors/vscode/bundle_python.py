"""Bundles the pi-snippets-lsp server and its dependencies for the VS Code extension.

Writes ``<out>/libs``: the server (built as a wheel from this repository) and everything it
needs, installed with pip for one VS Code target platform and several CPython versions:

- ``libs/common``: the pure-Python packages, identical for every CPython version
  (pi_snippets_lsp, pygls, lsprotocol, pydantic, attrs, cattrs, ...);
- ``libs/cp311``, ``libs/cp312``, ...: what differs per version. pydantic-core and regex are
  compiled extensions built for one CPython minor version each (they ship no abi3 wheels), so
  the extension carries one set per supported version and ``tool/launch.py`` puts the set
  matching the running interpreter first on ``sys.path``;
- ``libs/bundle.json``: the target, the CPython versions and the bundled versions, read by the
  extension to pick an interpreter and to say what it started.

Only wheels are used (``--only-binary=:all:``), so the bundle for another platform or CPython
version than the building one is resolved from PyPI without compiling anything. The pip of the
Python running this script does the work. Usage::

    python3 bundle_python.py --target linux-x64 --out editors/vscode/bundled
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: CPython versions the bundle carries compiled parts for (issue: 3.11, 3.12, 3.13).
DEFAULT_PYTHONS = ("3.11", "3.12", "3.13")


def _manylinux(arch: str) -> list[str]:
    # VS Code's own Linux builds need glibc 2.28, so any manylinux wheel up to 2_28 runs
    # wherever the extension host does; pip does not widen a given tag, so list them all.
    return [f"manylinux_2_{minor}_{arch}" for minor in range(28, 16, -1)] + [
        f"manylinux2014_{arch}"
    ]


#: VS Code target platform (``vsce package --target``) -> wheel platform tags pip may take.
#: pip widens ``macosx_X_Y`` tags to the earlier macOS versions itself. Not here: linux-armhf
#: and web (regex publishes no wheels for 32-bit ARM; a web extension cannot run Python).
TARGETS: dict[str, list[str]] = {
    "linux-x64": _manylinux("x86_64"),
    "linux-arm64": _manylinux("aarch64"),
    "alpine-x64": ["musllinux_1_2_x86_64", "musllinux_1_1_x86_64"],
    "alpine-arm64": ["musllinux_1_2_aarch64", "musllinux_1_1_aarch64"],
    "darwin-x64": ["macosx_11_0_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
    "win32-arm64": ["win_arm64"],
}

#: What pip writes that the bundle must not carry: console scripts whose shebang names the
#: building interpreter, and the build machine's path of the local wheel.
_DROP_NAMES = {"bin", "__pycache__"}
_DROP_FILES = {"direct_url.json"}


def log(message: str) -> None:
    print(f"bundle_python: {message}", file=sys.stderr, flush=True)


def run(cmd: list[str]) -> None:
    log("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True)


def pip(*args: str) -> None:
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            *args,
        ]
    )


def build_server_wheel(work: Path) -> Path:
    """Builds the repository's wheel from a copy of its sources (no build/ left in the tree)."""
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, src / name)
    shutil.copytree(
        REPO / "server",
        src / "server",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"),
    )
    pip("wheel", "--no-deps", "--wheel-dir", str(work / "wheel"), str(src))
    wheels = sorted((work / "wheel").glob("pi_snippets_lsp-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"bundle_python: expected one server wheel, found {wheels}")
    return wheels[0]


def install_for(wheel: Path, python: str, platforms: list[str], dest: Path) -> None:
    """Installs the server wheel and its dependencies for one CPython version and platform."""
    tag = "cp" + python.replace(".", "")
    platform_args = [arg for p in platforms for arg in ("--platform", p)]
    pip(
        "install",
        "--target",
        str(dest),
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        "--abi",
        tag,
        *platform_args,
        "--no-compile",
        "--no-warn-script-location",
        # pip checks the new packages against the running environment, which is not theirs.
        "--no-warn-conflicts",
        str(wheel),
    )
    for path in sorted(dest.rglob("*"), reverse=True):
        if path.name in _DROP_NAMES and path.is_dir():
            shutil.rmtree(path)
        elif path.name in _DROP_FILES and path.is_file():
            path.unlink()


def tree_digest(path: Path) -> str:
    """A digest of a file or a directory tree: relative names and contents."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path.parent)).encode())
        digest.update(b"\0")
        digest.update(file.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def split_common(trees: dict[str, Path], common: Path) -> None:
    """Moves the top-level entries identical in every version's tree to ``common``."""
    common.mkdir(parents=True)
    names = set.intersection(*({p.name for p in tree.iterdir()} for tree in trees.values()))
    for name in sorted(names):
        digests = {tree_digest(tree / name) for tree in trees.values()}
        if len(digests) != 1:
            continue
        first, *rest = trees.values()
        shutil.move(str(first / name), str(common / name))
        for tree in rest:
            target = tree / name
            shutil.rmtree(target) if target.is_dir() else target.unlink()


_DIST_INFO = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+)\.dist-info$")


def distributions(*dirs: Path) -> dict[str, str]:
    """``{distribution name: version}`` of the ``*.dist-info`` folders in ``dirs``."""
    found: dict[str, str] = {}
    for folder in dirs:
        for entry in folder.iterdir():
            match = _DIST_INFO.match(entry.name)
            if match:
                found[match["name"].lower().replace("_", "-")] = match["version"]
    return dict(sorted(found.items()))


def bundle(target: str, pythons: list[str], out: Path) -> dict[str, object]:
    platforms = TARGETS[target]
    libs = out / "libs"
    with tempfile.TemporaryDirectory(prefix="pi-snippets-bundle-") as tmp:
        work = Path(tmp)
        wheel = build_server_wheel(work)
        trees: dict[str, Path] = {}
        for python in pythons:
            tag = "cp" + python.replace(".", "")
            log(f"installing {wheel.name} and its dependencies for CPython {python}, {target}")
            install_for(wheel, python, platforms, work / tag)
            trees[tag] = work / tag
        staged = work / "libs"
        staged.mkdir()
        split_common(trees, staged / "common")
        for tag, tree in trees.items():
            shutil.move(str(tree), str(staged / tag))
        packages = distributions(staged / "common")
        compiled = {tag: distributions(staged / tag) for tag in trees}
        manifest: dict[str, object] = {
            "target": target,
            "pythons": pythons,
            "server": packages.get("pi-snippets-lsp", "unknown"),
            "packages": packages,
            "compiled": compiled,
        }
        (staged / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if libs.exists():
            shutil.rmtree(libs)
        out.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), str(libs))
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="linux-x64", choices=sorted(TARGETS))
    parser.add_argument(
        "--python",
        action="append",
        dest="pythons",
        metavar="X.Y",
        help=f"CPython version to carry compiled parts for (default: {', '.join(DEFAULT_PYTHONS)})",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "bundled",
        help="the extension's bundled/ folder; its libs/ is replaced",
    )
    args = parser.parse_args(argv)
    pythons = args.pythons or list(DEFAULT_PYTHONS)
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        log(f"{sys.executable} has no pip: run this with a Python that has pip (e.g. a venv's)")
        return 1
    os.environ.setdefault("PIP_ROOT_USER_ACTION", "ignore")
    manifest = bundle(args.target, pythons, args.out)
    log(f"wrote {args.out / 'libs'}: server {manifest['server']}, CPython {', '.join(pythons)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
