"""Which folder a request belongs to and which settings files it reads, as tables.

docs/configuration.md, "Layers" ("The folder"). Every adapter asks these (the LSP
session, the MCP server, the command line), so they are tested once, here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_snippets_lsp.settings.folders import (
    default_folder,
    files_to_poll,
    folder_for,
    generation_keys,
    is_inside,
    is_settings_path,
    path_of_uri,
    project_folder,
    root_folder,
    settings_files,
)


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        pytest.param("file:///home/me/repo/a.md", "/home/me/repo/a.md", id="file"),
        pytest.param("file:///home/me/my%20repo/a.md", "/home/me/my repo/a.md", id="escaped"),
        pytest.param("file:///home/me/repo/../b.md", "/home/me/b.md", id="normalized"),
        pytest.param("file://localhost/tmp/x", "/tmp/x", id="localhost"),
        pytest.param("untitled:prompt", None, id="untitled"),
        pytest.param("https://example.com/a", None, id="web"),
        pytest.param("file://", None, id="no-path"),
    ],
)
def test_path_of_uri(uri: str, path: str | None) -> None:
    assert path_of_uri(uri) == path


@pytest.mark.parametrize(
    ("path", "folder", "inside"),
    [
        pytest.param("/r", "/r", True, id="the-folder-itself"),
        pytest.param("/r/a.md", "/r", True, id="a-file-in-it"),
        pytest.param("/r/x/y/a.md", "/r", True, id="deep"),
        pytest.param("/repo/a.md", "/r", False, id="a-name-prefix-is-not-inside"),
        pytest.param("/a.md", "/r", False, id="outside"),
        pytest.param("/r/a.md", "/r/", True, id="folder-with-trailing-slash"),
    ],
)
def test_is_inside(path: str, folder: str, inside: bool) -> None:
    assert is_inside(path, folder) is inside


@pytest.mark.parametrize(
    ("folders", "path", "default", "expected"),
    [
        pytest.param(["/a", "/b"], "/b/x.md", "/a", "/b", id="the-holding-folder"),
        pytest.param(["/a", "/a/sub"], "/a/sub/x.md", "/a", "/a/sub", id="the-deepest-wins"),
        pytest.param(["/a/sub", "/a"], "/a/sub/x.md", "/a/sub", "/a/sub", id="order-no-matter"),
        pytest.param(["/a"], "/elsewhere/x.md", "/a", "/a", id="outside-all-is-default"),
        pytest.param(["/a"], None, "/a", "/a", id="no-document"),
        pytest.param([], "/x.md", None, None, id="no-folders"),
    ],
)
def test_folder_for(
    folders: list[str], path: str | None, default: str | None, expected: str | None
) -> None:
    assert folder_for(folders, path, default) == expected


@pytest.mark.parametrize(
    ("folders", "root", "project", "expected"),
    [
        pytest.param(["/a", "/b"], "/root", "/p", "/a", id="first-folder"),
        pytest.param([], "/root/x/..", "/p", "/root", id="else-root-normalized"),
        pytest.param([], None, "/p/", "/p", id="else-project"),
        pytest.param([], "", None, None, id="nothing"),
    ],
)
def test_default_folder(
    folders: list[str], root: str | None, project: str | None, expected: str | None
) -> None:
    assert default_folder(folders, root, project) == expected


@pytest.mark.parametrize(
    ("folders", "default", "keys"),
    [
        pytest.param(["/a", "/b"], "/a", ["/a", "/b"], id="default-is-a-folder"),
        pytest.param([], "/p", ["/p"], id="project-only"),
        pytest.param([], None, [None], id="no-folder-at-all"),
        pytest.param(["/a"], None, ["/a", None], id="folders-and-none"),
    ],
)
def test_generation_keys(folders: list[str], default: str | None, keys: list[str | None]) -> None:
    assert generation_keys(folders, default) == keys


@pytest.mark.parametrize(
    ("keys", "trust", "expected"),
    [
        pytest.param(["/a", "/b"], False, ["/u.json"], id="untrusted-user-file-only"),
        pytest.param(
            ["/a", None, "/b"],
            True,
            ["/u.json", "/a/.pi/settings.json", "/b/.pi/settings.json"],
            id="trusted-every-folder",
        ),
        pytest.param(["/a", "/a"], True, ["/u.json", "/a/.pi/settings.json"], id="each-once"),
    ],
)
def test_settings_files(keys: list[str | None], trust: bool, expected: list[str]) -> None:
    assert settings_files(Path("/u.json"), keys, trust) == [Path(p) for p in expected]


@pytest.mark.parametrize(
    ("client_watches", "expected"),
    [
        pytest.param(False, ["/home/u.json", "/w/.pi/settings.json"], id="client-cannot-watch"),
        pytest.param(True, ["/home/u.json"], id="client-watches-inside-folders-only"),
    ],
)
def test_files_to_poll(client_watches: bool, expected: list[str]) -> None:
    files = [Path("/home/u.json"), Path("/w/.pi/settings.json")]
    assert files_to_poll(files, ["/w"], client_watches) == [Path(p) for p in expected]


USER = Path("/home/me/.pi/agent/settings.json")
PROJECT = Path("/work/repo/.pi/settings.json")


@pytest.mark.parametrize(
    ("folders", "polled"),
    [
        pytest.param(["/work/repo"], [USER], id="user-file-outside-the-folder"),
        pytest.param([], [USER, PROJECT], id="no-folders"),
        pytest.param(["/home/me"], [PROJECT], id="user-file-inside-a-folder"),
        pytest.param(["/work/repo", "/home/me"], [], id="everything-inside"),
        pytest.param(["/work/re"], [USER, PROJECT], id="prefix-is-not-a-parent"),
    ],
)
def test_files_outside_every_folder_are_polled_while_the_client_watches(
    folders: list[str], polled: list[Path]
) -> None:
    assert files_to_poll([USER, PROJECT], folders, True) == polled


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/home/me/.pi/agent/settings.json", True, id="user-file"),
        pytest.param("/work/a/.pi/settings.json", True, id="a-folders-project-file"),
        pytest.param("/work/b/.pi/settings.json", True, id="the-default-folders"),
        pytest.param("/work/a/sub/.pi/settings.json", False, id="nested-not-a-folder"),
        pytest.param("/work/a/package.json", False, id="other-json"),
        pytest.param("/work/a/../a/.pi/settings.json", True, id="normalized"),
    ],
)
def test_settings_files_of_the_session(path: str, expected: bool) -> None:
    """Trusted or not: an untrusted project file is what the user is editing."""
    keys = ["/work/a", "/work/b", None]
    user = Path("/home/me/.pi/agent/settings.json")
    assert is_settings_path(path, user, keys) is expected


def test_a_symlink_to_a_settings_file_is_that_file(tmp_path: Path) -> None:
    user = tmp_path / "agent" / "settings.json"
    user.parent.mkdir()
    user.write_text("{}")
    link = tmp_path / "dotfiles.json"
    link.symlink_to(user)
    assert is_settings_path(str(link), user, [])


@pytest.mark.parametrize(
    ("project", "trust", "root", "expected"),
    [
        pytest.param("/p", False, None, "/p", id="project"),
        pytest.param("/p", False, "/root", "/p", id="untrusted-root-ignored"),
        pytest.param("/p", True, "/root", "/root", id="trusted-root"),
        pytest.param("/p", True, None, "/p", id="no-root"),
        pytest.param(None, False, None, "CWD", id="cwd"),
        pytest.param(None, True, None, "CWD", id="trusted-cwd"),
        pytest.param("~/p", False, None, "HOME/p", id="home-expanded"),
    ],
)
def test_the_project_folder(
    project: str | None, trust: bool, root: str | None, expected: str
) -> None:
    want = Path(expected.replace("CWD", str(Path.cwd())).replace("HOME", str(Path.home())))
    assert project_folder(root, project, trust) == want


def test_a_lost_working_directory_is_no_project(monkeypatch: pytest.MonkeyPatch) -> None:
    def gone() -> Path:
        raise FileNotFoundError("the working directory was removed")

    monkeypatch.setattr(Path, "cwd", gone)
    assert project_folder(None, None, False) is None
    assert project_folder("/root", None, True) == Path("/root")


@pytest.mark.parametrize(
    ("uris", "expected"),
    [
        pytest.param(["file:///home/u/proj"], "/home/u/proj", id="file"),
        pytest.param(["file:///home/u/my%20proj/"], "/home/u/my proj", id="escaped"),
        pytest.param(["https://x/y", "file:///a"], "/a", id="first-file-root"),
        pytest.param(["file://localhost/a"], "/a", id="localhost"),
        pytest.param(["file://server/share"], "//server/share", id="unc"),
        pytest.param([], None, id="none"),
        pytest.param(["untitled:x"], None, id="no-file-root"),
    ],
)
def test_the_root_folder(uris: list[str], expected: str | None) -> None:
    assert root_folder(uris) == expected


def test_a_file_uri_with_a_host_is_a_network_path() -> None:
    """``file://server/share/a.md`` names a file on another host (a UNC path), not
    ``/share/a.md`` on this one."""
    assert path_of_uri("file://server/share/a.md") == "//server/share/a.md"
