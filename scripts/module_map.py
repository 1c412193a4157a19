"""CONTRIBUTING.md's map of the package, made from the tree: one row per module, the
layer folders in order, each row the first sentence of the module's docstring.

    python scripts/module_map.py           print the map
    python scripts/module_map.py --write   put it into CONTRIBUTING.md
    python scripts/module_map.py --check   exit 1 when CONTRIBUTING.md's map is stale

The docstrings are the source: a module added, moved or renamed changes the map, and the
test suite runs ``--check``, so the prose cannot drift from the tree.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "server" / "pi_snippets_lsp"
CONTRIBUTING = REPO / "CONTRIBUTING.md"
START, END = "<!-- module-map:start -->", "<!-- module-map:end -->"
#: Folders lowest layer first; the top (entry points) last.
ORDER = ("core", "settings", "wire", "lsp", "lsp/handlers", "mcp", "client", "integrations", "")


def summary(path: Path) -> str:
    """The docstring's first sentence, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?\.)(\s|$)", paragraph)
    sentence = match.group(1) if match else paragraph
    return sentence.rstrip(".").replace("|", "\\|")


def folder_of(path: Path) -> str:
    return path.parent.relative_to(PACKAGE).as_posix().replace(".", "")


def table() -> str:
    modules = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    folders = sorted(
        {folder_of(p) for p in modules},
        key=lambda f: (f not in ORDER, ORDER.index(f) if f in ORDER else 0, f),
    )
    rows = ["| Module | Holds |", "| --- | --- |"]
    for folder in folders:
        for path in sorted(p for p in modules if folder_of(p) == folder):
            name = path.relative_to(PACKAGE).as_posix()
            rows.append(f"| `{name}` | {summary(path)} |")
    return "\n".join(rows) + "\n"


def current() -> str:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def main(argv: list[str]) -> int:
    made = table()
    if "--write" in argv:
        text = CONTRIBUTING.read_text(encoding="utf-8")
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1]
        CONTRIBUTING.write_text(f"{head}{START}\n{made}{END}{tail}", encoding="utf-8")
        return 0
    if "--check" in argv:
        if current() != made:
            print("CONTRIBUTING.md's module map is stale: run scripts/module_map.py --write")
            return 1
        return 0
    print(made, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
