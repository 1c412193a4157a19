"""The tables of docs/reliability.md and docs/security.md name the tests that prove each
guarantee: every test they name must exist, so a table cannot point at a test that was
renamed or removed."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RELIABILITY = REPO / "docs" / "reliability.md"
SECURITY = REPO / "docs" / "security.md"
#: `tests/x.py::name` or `tests/x.py` in a row; `::name` alone continues the last file.
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)?(?:::([\w*]+))?`")


def reliability_rows() -> list[str]:
    """The rows of every table of both pages, without the header rows (a header is the
    row right above a ``| --- |`` line)."""
    text = RELIABILITY.read_text(encoding="utf-8") + "\n" + SECURITY.read_text(encoding="utf-8")
    lines = text.splitlines()
    rows = []
    for i, line in enumerate(lines):
        is_header = i + 1 < len(lines) and lines[i + 1].startswith("| ---")
        if line.startswith("| ") and not line.startswith("| ---") and not is_header:
            rows.append(line)
    return rows


def security_rows() -> list[str]:
    security = SECURITY.read_text(encoding="utf-8")
    return [line for line in security.splitlines() if line.startswith("| ")][2:]


def functions_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_guarantee_names_tests_that_exist() -> None:
    rows = reliability_rows()
    assert len(rows) >= 10
    for row in rows:
        guarantee, proof = row.strip("|").rsplit("|", 1)
        references = REFERENCE.findall(proof)
        assert references, f"no test named for: {guarantee.strip()}"
        current: Path | None = None
        for file, name in references:
            if file:
                current = REPO / file
                assert current.is_file(), file
            assert current is not None
            if name:
                names = functions_in(current)
                assert fnmatch.filter(names, name), f"{current.name} has no test {name}"


def test_the_security_part_says_who_can_connect_over_each_transport() -> None:
    rows = " ".join(security_rows())
    for transport in ("--stdio", "--socket", "--tcp", "--ws"):
        assert f"`{transport}`" in rows, transport
