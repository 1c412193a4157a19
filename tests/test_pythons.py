"""scripts/pythons.py: the CPython versions the package claims, and where scripts/test.sh
and the VS Code bundle's tests find each one (never by patch version)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"


@pytest.fixture
def pythons(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import pythons  # noqa: PLC0415 - on the path only now

    yield pythons
    sys.modules.pop("pythons", None)


# --------------------------------------------------------------------------- pythons.py


def test_the_supported_versions_are_the_classifiers(pythons: ModuleType) -> None:
    assert pythons.supported() == ["3.11", "3.12", "3.13"]


def test_the_vscode_bundle_carries_every_supported_version(pythons: ModuleType) -> None:
    """What pyproject claims is what the extension ships compiled parts for."""
    sys.path.insert(0, str(REPO / "editors" / "vscode"))
    try:
        import bundle_python  # noqa: PLC0415
    finally:
        sys.path.remove(str(REPO / "editors" / "vscode"))
    assert list(bundle_python.DEFAULT_PYTHONS) == pythons.supported()


def fake_python(path: Path, output: str, code: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{output}'\nexit {code}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-ins for interpreters")
@pytest.mark.parametrize(
    ("output", "code", "found"),
    [
        pytest.param("cpython 3.12", 0, True, id="cpython-of-that-version"),
        pytest.param("cpython 3.11", 0, False, id="another-version"),
        pytest.param("pypy 3.12", 0, False, id="not-cpython"),
        pytest.param("pyenv: python3.12: command not found", 127, False, id="inactive-shim"),
    ],
)
def test_a_candidate_counts_only_if_it_runs_as_that_cpython(
    pythons: ModuleType, tmp_path: Path, output: str, code: int, found: bool
) -> None:
    python = fake_python(tmp_path / "python3.12", output, code)
    assert pythons.reports(str(python), "3.12") is found


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-ins for interpreters")
def test_a_failing_shim_on_path_is_passed_over_for_pyenvs_own(
    pythons: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyenv's shim for a version that is not active fails; ``pyenv prefix`` finds it."""
    shims, prefix = tmp_path / "shims", tmp_path / "versions" / "3.12.9"
    fake_python(shims / "python3.12", "pyenv: python3.12: command not found", 127)
    real = fake_python(prefix / "bin" / "python3.12", "cpython 3.12")
    fake_python(shims / "pyenv", str(prefix))
    monkeypatch.setenv("PATH", str(shims))
    assert pythons.find("3.12") == str(real)
    assert pythons.candidates("3.12")[:2] == [str(real), str(shims / "python3.12")]


def test_a_missing_version_is_named_with_where_it_was_looked_for(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "pythons.py"), "3.99"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(tmp_path)},
        check=False,
    )
    assert out.returncode == 1 and out.stdout == ""
    assert "no CPython 3.99 found (looked in: pyenv prefix 3.99, /usr/bin/python3.99" in out.stderr
