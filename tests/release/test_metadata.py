"""The package is ready for PyPI: complete metadata, one version everywhere a registry reads
it, a CHANGELOG section per release, and a README whose links work on PyPI's page (where a
relative link leads nowhere: PyPI shows README.md alone, without the repository)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import REPO, REPOSITORY_URL

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
README = (REPO / "README.md").read_text(encoding="utf-8")
#: A Markdown link or image target: ``[text](target)``, ``![alt](target "title")``.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)")


def test_every_copy_of_the_version_is_the_written_one(release: ModuleType) -> None:
    assert release.disagreements() == []
    assert release.version() == PROJECT.get("version", release.version())
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "pi_snippets_lsp.wire.version.VERSION"
    }
    assert "version" in PROJECT["dynamic"]


def test_a_copy_that_disagrees_is_named(
    release: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = json.loads(release.PACKAGE_JSON.read_text(encoding="utf-8"))
    package["version"] = "9.9.9"
    moved = tmp_path / "package.json"
    moved.write_text(json.dumps(package), encoding="utf-8")
    monkeypatch.setattr(release, "PACKAGE_JSON", moved)
    problems = release.disagreements(tag="v0.0.1")
    assert len(problems) == 2
    assert problems[0].startswith("editors/vscode/package.json version: '9.9.9'")
    assert problems[1].startswith("tag 'v0.0.1' is not")
    assert release.main(["check"]) == 1


def test_the_tag_of_the_version_passes(release: ModuleType) -> None:
    assert release.disagreements(tag=f"v{release.version()}") == []
    assert release.main(["check", "--tag", f"v{release.version()}"]) == 0


def test_the_changelog_has_a_dated_section_per_release_and_notes_for_the_newest(
    release: ModuleType,
) -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = release.RELEASE_HEADING.findall(text)
    assert [version for version, _ in releases][:2] == [release.version(), "0.1.0"]
    assert text.index("## [Unreleased]") < text.index(f"## [{release.version()}]")
    notes = release.notes(release.version())
    assert notes.startswith("### ")
    assert "## [" not in notes
    assert f"[{release.version()}]: {REPOSITORY_URL}/compare/" in text


def test_pyproject_names_the_repository_and_classifies_the_package() -> None:
    urls = PROJECT["urls"]
    assert set(urls) >= {"Homepage", "Repository", "Documentation", "Changelog", "Issues"}
    for url in urls.values():
        assert url.startswith(REPOSITORY_URL), url
    classifiers = PROJECT["classifiers"]
    for prefix in (
        "Development Status :: ",
        "Environment :: Console",
        "Intended Audience :: Developers",
        "Operating System :: ",
        "Programming Language :: Python :: 3.11",
    ):
        assert any(c.startswith(prefix) for c in classifiers), prefix
    # PEP 639: the license is an SPDX expression, and no license classifier repeats it.
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert not any(c.startswith("License ::") for c in classifiers)
    assert any(req.startswith("setuptools>=77") for req in PYPROJECT["build-system"]["requires"])
    assert PROJECT["keywords"]
    assert PROJECT["readme"] == "README.md"


def test_the_vscode_extension_names_the_repository() -> None:
    package = json.loads((REPO / "editors/vscode/package.json").read_text(encoding="utf-8"))
    assert package["repository"]["url"].startswith(REPOSITORY_URL)
    assert package["homepage"].startswith(REPOSITORY_URL)
    assert package["bugs"]["url"] == f"{REPOSITORY_URL}/issues"
    assert package["publisher"]
    assert package["license"] == PROJECT["license"]


def test_every_readme_link_works_on_pypi() -> None:
    """PyPI renders README.md without the repository around it: a relative link or an
    in-page anchor (GitHub makes heading anchors, PyPI does not) leads nowhere there."""
    targets = LINK.findall(README)
    assert targets
    relative = [t for t in targets if not t.startswith(("https://", "http://", "mailto:"))]
    assert relative == []


def test_the_readme_names_the_mcp_server_for_the_registry() -> None:
    """The MCP Registry takes a PyPI package only if its description says ``mcp-name:``
    and the server's name (how it checks that the publisher owns the package)."""
    name = json.loads((REPO / "server.json").read_text(encoding="utf-8"))["name"]
    assert f"mcp-name: {name}" in README


#: An install line that only works from a checkout: a path where the name should be.
FROM_A_CHECKOUT = re.compile(
    r"(?:pip|pipx|uv tool|llm) install\s+(?:--\S+\s+)*['\"]?"
    r"(?:/path/to|\.\./|~/|/\S*pi-snippets-lsp)"
)


def test_every_install_line_a_user_reads_works_from_a_registry() -> None:
    """README, docs, the editors' guides and messages, the integrations' docstrings and the
    command's errors install by name (``pipx install pi-snippets-lsp``), never from a
    path that only a checkout has."""
    places = [
        REPO / "README.md",
        *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "editors").glob("*/README.md")),
        REPO / "editors/zed/extension/src/lib.rs",
        REPO / "editors/nvim/lua/pi_snippets/health.lua",
        *sorted((REPO / "server/pi_snippets_lsp").rglob("*.py")),
    ]
    found = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in places
        for match in FROM_A_CHECKOUT.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
    assert FROM_A_CHECKOUT.search("pipx install /path/to/pi-snippets-lsp")
    assert FROM_A_CHECKOUT.search("pip install '/path/to/pi-snippets-lsp[prompt-toolkit]'")
    assert FROM_A_CHECKOUT.search("llm install /path/to/pi-snippets-lsp")
    assert not FROM_A_CHECKOUT.search("pipx install pi-snippets-lsp")
