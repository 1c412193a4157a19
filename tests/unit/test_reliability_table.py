"""README's "Reliability" table names the tests that prove each guarantee: every test it
names must exist, so the table cannot point at a test that was renamed or removed."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
#: `tests/x.py::name` or `tests/x.py` in a row; `::name` alone continues the last file.
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)?(?:::([\w*]+))?`")


def reliability_rows() -> list[str]:
    """The rows of every table in the section (its "Security" part included), without
    the header rows (a header is the row right above a ``| --- |`` line)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Reliability", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    rows = []
    for i, line in enumerate(lines):
        is_header = i + 1 < len(lines) and lines[i + 1].startswith("| ---")
        if line.startswith("| ") and not line.startswith("| ---") and not is_header:
            rows.append(line)
    return rows


def security_rows() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Reliability", 1)[1]
    security = section.split("\n## ", 1)[0].split("### Security", 1)[1]
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
