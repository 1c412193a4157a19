"""One version, everywhere a release names it; and a release's notes from CHANGELOG.md.

The version is written once, in ``server/pi_snippets_lsp/wire/version.py`` (pyproject.toml
reads it from there). Every other file a registry reads carries a copy, because each
registry reads only its own file: the VS Code extension's ``package.json`` (the Marketplace
and Open VSX), ``server.json`` (the MCP Registry: its own version and its PyPI package's),
the mason.nvim spec (``pkg:pypi/pi-snippets-lsp@VERSION``), and CHANGELOG.md's newest
release section. A copy that disagrees would publish one version under another's number,
so ``check`` fails on any difference, and on a tag that is not ``v`` + the version
(.github/workflows/release.yml runs it first; tests/release/test_metadata.py too).

    python3 scripts/release.py check [--tag v0.2.0]   # exit 1 and each disagreement
    python3 scripts/release.py notes                 # the newest release's CHANGELOG section
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VERSION_FILE = REPO / "server" / "pi_snippets_lsp" / "wire" / "version.py"
PACKAGE_JSON = REPO / "editors" / "vscode" / "package.json"
SERVER_JSON = REPO / "server.json"
MASON_SPEC = REPO / "registries" / "mason" / "pi-snippets-lsp" / "package.yaml"
CHANGELOG = REPO / "CHANGELOG.md"

#: A release heading of CHANGELOG.md: ``## [0.2.0] - 2026-12-03`` (Keep a Changelog).
RELEASE_HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+[^\]]*)\] - (\d{4}-\d{2}-\d{2})$", re.M)
#: The mason spec's source line, read without a YAML parser (the spec is ours and flat).
MASON_SOURCE = re.compile(r"^\s+id:\s*pkg:pypi/pi-snippets-lsp@(\S+)\s*$", re.M)


def version() -> str:
    """The one written version: ``VERSION`` in wire/version.py, read without importing."""
    tree = ast.parse(VERSION_FILE.read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "VERSION"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise SystemExit(f"no VERSION string in {VERSION_FILE}")


def changelog_release() -> str | None:
    """The version of CHANGELOG.md's newest dated release section."""
    match = RELEASE_HEADING.search(CHANGELOG.read_text(encoding="utf-8"))
    return match.group(1) if match else None


def copies() -> dict[str, str | None]:
    """Each copy of the version, by the file (and field) that carries it."""
    server = json.loads(SERVER_JSON.read_text(encoding="utf-8"))
    packages = server.get("packages") or [{}]
    mason = MASON_SOURCE.search(MASON_SPEC.read_text(encoding="utf-8"))
    return {
        "editors/vscode/package.json version": json.loads(
            PACKAGE_JSON.read_text(encoding="utf-8")
        ).get("version"),
        "server.json version": server.get("version"),
        "server.json packages[0].version": packages[0].get("version"),
        "registries/mason/pi-snippets-lsp/package.yaml source.id": (
            mason.group(1) if mason else None
        ),
        "CHANGELOG.md newest release": changelog_release(),
    }


def disagreements(tag: str | None = None) -> list[str]:
    """Every copy (and the tag, if given) that is not the written version, one line each."""
    want = version()
    problems = [
        f"{where}: {found!r}, not {want!r} (server/pi_snippets_lsp/wire/version.py)"
        for where, found in copies().items()
        if found != want
    ]
    if tag is not None and tag != f"v{want}":
        problems.append(f"tag {tag!r} is not 'v{want}' (server/pi_snippets_lsp/wire/version.py)")
    return problems


def notes(release: str) -> str:
    """CHANGELOG.md's section for ``release``: the lines under its heading, up to the next."""
    text = CHANGELOG.read_text(encoding="utf-8")
    for match in RELEASE_HEADING.finditer(text):
        if match.group(1) == release:
            body = text[match.end() :]
            end = re.search(r"^## \[|^\[[^\]]+\]: ", body, re.M)
            return (body[: end.start()] if end else body).strip() + "\n"
    raise SystemExit(f"CHANGELOG.md has no section [{release}]")


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        tag = argv[argv.index("--tag") + 1] if "--tag" in argv else None
        problems = disagreements(tag)
        for problem in problems:
            print(f"release: {problem}", file=sys.stderr)
        if not problems:
            print(f"release: every copy says {version()}")
        return 1 if problems else 0
    if argv[:1] == ["notes"]:
        sys.stdout.write(notes(version()))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
