"""Which core modules scripts/test.sh runs mutation testing on again: a file's dotted module
name (scripts/core_modules.py) and the record of each module's last passing run
(scripts/mutation_record.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"


@pytest.fixture
def scripts(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ModuleType]]:
    """The two scripts as modules (one imports the other by name, as when run)."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import core_modules  # noqa: PLC0415 - on the path only now
    import mutation_record  # noqa: PLC0415

    yield {"core": core_modules, "record": mutation_record}
    for name in ("core_modules", "mutation_record"):
        sys.modules.pop(name, None)


# --------------------------------------------------------------------------- core_modules.py


@pytest.mark.parametrize(
    ("relative", "module"),
    [
        pytest.param("grammar.py", "grammar", id="top-level"),
        pytest.param("features/hover.py", "features.hover", id="in-a-folder"),
        pytest.param("core/grammar.py", "core.grammar", id="a-layer-folder"),
        pytest.param("lsp/handlers/completion.py", "lsp.handlers.completion", id="two-deep"),
        pytest.param("core/__init__.py", "core.__init__", id="a-package-face"),
        pytest.param("py.typed", None, id="not-python"),
        pytest.param("../../README.md", None, id="outside-the-package"),
        pytest.param("../../tests/unit/test_grammar.py", None, id="a-test"),
    ],
)
def test_a_file_maps_to_its_dotted_module_at_any_depth(
    scripts: dict[str, ModuleType], relative: str, module: str | None
) -> None:
    core = scripts["core"]
    path = core.PACKAGE / relative
    assert core.module_of(path) == module
    if module is not None:
        assert core.path_of(module) == path


def test_every_listed_candidate_is_a_file_of_the_package(scripts: dict[str, ModuleType]) -> None:
    core = scripts["core"]
    names = core.candidates()
    assert "grammar" in names or "core.grammar" in names
    for name in names:
        assert core.path_of(name).is_file(), name
        assert name.split(".")[0] not in core.EXCLUDED_PACKAGES


# --------------------------------------------------------------------------- mutation_record.py


@pytest.fixture
def tree(scripts: dict[str, ModuleType], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository of one module ``core.grammar`` with its test and the conftests."""
    core, record = scripts["core"], scripts["record"]
    package = tmp_path / "server" / "pi_snippets_lsp"
    (package / "core").mkdir(parents=True)
    (package / "core" / "grammar.py").write_text("X = 1\n")
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_grammar.py").write_text("def test(): pass\n")
    (tmp_path / "tests" / "unit" / "conftest.py").write_text("")
    (tmp_path / "tests" / "conftest.py").write_text("")
    monkeypatch.setattr(core, "PACKAGE", package)
    monkeypatch.setattr(core, "REPO", tmp_path)
    monkeypatch.setattr(record, "REPO", tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("edit", "changes"),
    [
        pytest.param(lambda t: None, False, id="nothing"),
        pytest.param(
            lambda t: (t / "server/pi_snippets_lsp/core/grammar.py").write_text("X = 2\n"),
            True,
            id="the-module",
        ),
        pytest.param(
            lambda t: (t / "tests/unit/test_grammar.py").write_text("def test(): 1\n"),
            True,
            id="its-test",
        ),
        pytest.param(lambda t: (t / "tests/unit/test_grammar.py").unlink(), True, id="test-gone"),
        pytest.param(
            lambda t: (t / "tests/unit/conftest.py").write_text("x = 1\n"), True, id="a-conftest"
        ),
        pytest.param(
            lambda t: (t / "tests/unit/test_other.py").write_text("x = 1\n"),
            False,
            id="another-test",
        ),
        pytest.param(
            lambda t: (t / "server/pi_snippets_lsp/core/grammar.py").write_bytes(b"X = 1\r\n"),
            False,
            id="crlf-line-ends",
        ),
    ],
)
def test_the_digest_changes_with_what_the_score_depends_on(
    scripts: dict[str, ModuleType], tree: Path, edit: object, changes: bool
) -> None:
    record = scripts["record"]
    before = record.digest("core.grammar")
    edit(tree)  # type: ignore[operator]
    assert (record.digest("core.grammar") != before) is changes


def test_a_module_runs_again_until_it_passes_and_is_recorded(
    scripts: dict[str, ModuleType], tree: Path
) -> None:
    record = scripts["record"]
    path = tree / "record.json"
    assert record.changed(["core.grammar"], record.load(path)) == ["core.grammar"]
    record.update(
        {"core.grammar": (98, 100)}, {"core.grammar": record.digest("core.grammar")}, path
    )
    assert record.changed(["core.grammar"], record.load(path)) == []
    assert record.load(path)["core.grammar"]["score"] == 98.0
    (tree / "server/pi_snippets_lsp/core/grammar.py").write_text("X = 3\n")
    assert record.changed(["core.grammar"], record.load(path)) == ["core.grammar"]


def test_recording_one_module_keeps_the_others(scripts: dict[str, ModuleType], tree: Path) -> None:
    record = scripts["record"]
    path = tree / "record.json"
    (tree / "server/pi_snippets_lsp/core/ranking.py").write_text("")
    path.write_text(json.dumps({"modules": {"core.ranking": {"digest": "d", "score": 97.0}}}))
    record.update({"core.grammar": (10, 10)}, {"core.grammar": "e"}, path)
    modules = record.load(path)
    assert modules["core.ranking"] == {"digest": "d", "score": 97.0}
    assert modules["core.grammar"] == {"digest": "e", "caught": 10, "total": 10, "score": 100.0}


def test_recording_drops_modules_that_are_gone(scripts: dict[str, ModuleType], tree: Path) -> None:
    """A module moved or renamed (``grammar`` -> ``core.grammar``) leaves no stale entry."""
    record = scripts["record"]
    path = tree / "record.json"
    path.write_text(json.dumps({"modules": {"grammar": {"digest": "d", "score": 97.0}}}))
    record.update({"core.grammar": (10, 10)}, {"core.grammar": "e"}, path)
    assert list(record.load(path)) == ["core.grammar"]


def test_the_committed_record_holds_a_digest_and_score_per_module(
    scripts: dict[str, ModuleType],
) -> None:
    recorded = scripts["record"].load()
    assert recorded, "scripts/mutation-record.json is missing or empty"
    for module, entry in recorded.items():
        assert set(entry) == {"digest", "caught", "total", "score"}, module
        assert float(str(entry["score"])) >= 95.0, module
