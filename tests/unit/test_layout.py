"""The package's layering rules (CONTRIBUTING.md, "The package"), checked on the code.

The core modules are plain Python: they import nothing from pygls or lsprotocol, so they
are tested as tables and can be reused anywhere. The server never imports the
out-of-process client: the server process must not load its threads and sockets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import pi_snippets_lsp

PACKAGE = Path(pi_snippets_lsp.__file__).parent
CORE = [
    "api",
    "completion",
    "config",
    "daemon_auth",
    "daemon_folder",
    "documents",
    "edited_files",
    "expansion",
    "features.code_actions",
    "features.definition",
    "features.edits",
    "features.hover",
    "features.markers",
    "features.save_snippet",
    "features.semantic_tokens",
    "features.settings_diagnostics",
    "framing",
    "grammar",
    "jsontree",
    "limits",
    "line_codec",
    "options",
    "protocol",
    "ranking",
    "safe_write",
    "schema",
    "session",
    "settings_file",
    "snippet",
    "watch",
]


def imported_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out))


@pytest.mark.parametrize("module", CORE)
def test_core_modules_import_nothing_from_pygls_or_lsprotocol(module: str) -> None:
    modules = imported_after(f"import pi_snippets_lsp.{module}")
    assert not {m for m in modules if m.split(".")[0] in {"pygls", "lsprotocol"}}


def test_the_server_never_imports_the_client() -> None:
    modules = imported_after("import pi_snippets_lsp.cli, pi_snippets_lsp.server")
    assert "pi_snippets_lsp.server" in modules
    assert not {m for m in modules if m.startswith("pi_snippets_lsp.client")}


def test_the_server_never_imports_the_integrations() -> None:
    modules = imported_after("import pi_snippets_lsp.cli, pi_snippets_lsp.server")
    assert not {m for m in modules if m.startswith("pi_snippets_lsp.integrations")}


def test_integration_backends_need_no_optional_library() -> None:
    # Each integration's library is an optional extra: only its own module imports it.
    modules = imported_after("import pi_snippets_lsp.integrations.backend")
    roots = {m.split(".")[0] for m in modules}
    assert not roots & {"prompt_toolkit", "llm", "click", "pygls", "lsprotocol"}


def test_the_client_is_imported_on_first_use_of_its_names() -> None:
    modules = imported_after("import pi_snippets_lsp; pi_snippets_lsp.SnippetsClient")
    assert "pi_snippets_lsp.client" in modules


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert {name: size for name, size in sizes.items() if size > 600} == {}
