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
    text = README.read_text(encoding="utf-8")
    section = text.split("## Reliability", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return rows[1:]  # without the header row


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
