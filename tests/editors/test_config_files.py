"""Static checks of the Helix and Zed client configurations (neither editor runs here)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELIX = ROOT / "editors" / "helix" / "languages.toml"
ZED_SETTINGS = ROOT / "editors" / "zed" / "settings.json"
ZED_EXTENSION = ROOT / "editors" / "zed" / "extension"

SERVER_COMMAND = "pi-snippets-lsp"
SETTINGS_KEY = "piSimpleSnippets"
# Spellings a typo would produce; the server reads only `piSimpleSnippets`.
WRONG_KEYS = re.compile(r"pi-simple-snippets\"?\s*[=:]|pisimplesnippets|PiSimpleSnippets")


@pytest.fixture(scope="module")
def helix() -> dict[str, Any]:
    with HELIX.open("rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def zed_settings() -> dict[str, Any]:
    return json.loads(ZED_SETTINGS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def zed_manifest() -> dict[str, Any]:
    with (ZED_EXTENSION / "extension.toml").open("rb") as f:
        return tomllib.load(f)


def _language(helix: dict[str, Any], name: str) -> dict[str, Any]:
    matches = [lang for lang in helix.get("language", []) if lang.get("name") == name]
    assert len(matches) == 1, f"expected one [[language]] named {name!r}, got {matches}"
    return matches[0]


def _server_names(entries: list[Any]) -> list[str]:
    # Helix accepts "name" or { name = "...", only-features/except-features = [...] }.
    return [entry if isinstance(entry, str) else entry["name"] for entry in entries]


# ------------------------------------------------------------------------------- Helix


def test_helix_server_definition(helix: dict[str, Any]) -> None:
    server = helix["language-server"]["pi-snippets"]
    assert server["command"] == SERVER_COMMAND
    assert server.get("args", []) in ([], ["--stdio"])
    config = server["config"]
    assert SETTINGS_KEY in config, "config must carry the piSimpleSnippets section"
    assert isinstance(config[SETTINGS_KEY], dict)
    assert isinstance(config.get("trustProjectSettings", False), bool)


def test_helix_markdown_keeps_default_servers(helix: dict[str, Any]) -> None:
    names = _server_names(_language(helix, "markdown")["language-servers"])
    assert "pi-snippets" in names
    # `language-servers` replaces Helix's list, so the defaults must be repeated.
    assert "marksman" in names
    assert names.index("marksman") < names.index("pi-snippets")


def test_helix_git_commit(helix: dict[str, Any]) -> None:
    names = _server_names(_language(helix, "git-commit")["language-servers"])
    assert "pi-snippets" in names


def test_helix_every_listed_server_is_defined_here(helix: dict[str, Any]) -> None:
    # Defining them here keeps the file working on Helix versions that lack a default.
    defined = set(helix["language-server"])
    for language in helix["language"]:
        for name in _server_names(language["language-servers"]):
            assert name in defined, f"{language['name']}: {name!r} has no [language-server]"


# --------------------------------------------------------------------------------- Zed


def test_zed_lsp_block(zed_settings: dict[str, Any]) -> None:
    server = zed_settings["lsp"]["pi-snippets"]
    binary = server["binary"]
    assert Path(binary["path"]).name == SERVER_COMMAND
    assert binary.get("arguments", []) in ([], ["--stdio"])
    assert SETTINGS_KEY in server["initialization_options"]
    assert isinstance(server["initialization_options"].get("trustProjectSettings", False), bool)
    # Answered for workspace/configuration, section piSimpleSnippets.
    assert SETTINGS_KEY in server["settings"]


def test_zed_markdown_keeps_default_servers(zed_settings: dict[str, Any]) -> None:
    servers = zed_settings["languages"]["Markdown"]["language_servers"]
    assert "pi-snippets" in servers
    assert "..." in servers, '"..." keeps the servers Zed starts by default'


def test_zed_extension_manifest(zed_manifest: dict[str, Any]) -> None:
    for key in ("id", "name", "version", "schema_version"):
        assert key in zed_manifest, f"extension.toml lacks {key}"
    assert zed_manifest["schema_version"] == 1
    servers = zed_manifest["language_servers"]
    assert list(servers) == ["pi-snippets"], "the id must match the settings.json lsp key"
    assert "Markdown" in servers["pi-snippets"]["languages"]


def test_zed_extension_rust_glue() -> None:
    cargo = tomllib.loads((ZED_EXTENSION / "Cargo.toml").read_text(encoding="utf-8"))
    assert cargo["lib"]["crate-type"] == ["cdylib"]
    assert "zed_extension_api" in cargo["dependencies"]
    source = (ZED_EXTENSION / "src" / "lib.rs").read_text(encoding="utf-8")
    assert f'"{SERVER_COMMAND}"' in source
    assert '"pi-snippets"' in source
    assert "register_extension!" in source


# ------------------------------------------------------------------------------- shared


@pytest.mark.parametrize(
    "path",
    [
        HELIX,
        ZED_SETTINGS,
        ZED_EXTENSION / "extension.toml",
    ],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_settings_key_spelling(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert WRONG_KEYS.search(text) is None, f"{path}: misspelled settings key"
    if path != ZED_EXTENSION / "extension.toml":
        assert SETTINGS_KEY in text
