"""The pure core modules: every module of the package that imports nothing from pygls or
lsprotocol (checked by importing it in a fresh interpreter), except the entry points and
the packages that talk to other processes or libraries (``client``, ``integrations``).

Prints one dotted name per line (``core.grammar``, ``settings.watch``), for scripts/mutation.sh;
``--tests MODULE`` prints the unit test files that module's mutants are run against.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "server" / "pi_snippets_lsp"
#: Entry points and adapters to other processes or libraries: tested end to end, not as
#: plain functions, so mutating them against the unit tests would measure nothing.
EXCLUDED_PACKAGES = ("client", "integrations", "mcp")
EXCLUDED_MODULES = (
    # The agents' command line and config files: argparse declarations, and writers of
    # other programs' files (JSONC, TOML) tested on those programs' real files
    # (tests/unit/test_agent_setup.py) and by the real agents (tests/agents).
    "arguments",
    "setup",
    "gemini_extension",
    "tomledit",
    "__init__",
    "__main__",
    "cli",
    # A process's threads and signals: tested end to end (tests/lsp/test_signals.py and
    # the daemon tests), where a mutant's effect is a process that hangs or exits.
    "offload",
    "signals",
)


def module_of(path: Path) -> str | None:
    """The dotted name of a module file of the package, at any depth (``.../grammar.py`` ->
    ``grammar``, ``.../core/grammar.py`` -> ``core.grammar``); None for any other file."""
    try:
        relative = path.resolve().relative_to(PACKAGE.resolve())
    except ValueError:
        return None
    if relative.suffix != ".py":
        return None
    return ".".join(relative.with_suffix("").parts)


def path_of(module: str) -> Path:
    """The file of a dotted module name: ``core.grammar`` -> ``.../core/grammar.py``."""
    return PACKAGE.joinpath(*module.split(".")).with_suffix(".py")


def candidates() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_of(path)
        if module is None:
            continue
        parts = module.split(".")
        if parts[0] in EXCLUDED_PACKAGES or parts[-1] in EXCLUDED_MODULES:
            continue
        if not defines_code(path):
            continue
        names.append(module)
    return names


def defines_code(path: Path) -> bool:
    """Whether a module defines a function or class: one of constants only has no
    rule for a mutant to break."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in tree.body
    )


def imports_pygls(module: str) -> bool:
    code = (
        "import sys, json, importlib; "
        f"importlib.import_module('pi_snippets_lsp.{module}'); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return any(m.split(".")[0] in ("pygls", "lsprotocol") for m in json.loads(out))


def core_modules(among: list[str] | None = None) -> list[str]:
    """The core modules: the candidates (or those of ``among``) that import no pygls."""
    return [m for m in (candidates() if among is None else among) if not imports_pygls(m)]


#: The unit tests that state each module's rules, when they are not (only)
#: ``tests/unit/test_<module>.py``. A module's mutants are run against these alone: a
#: mutant counts as caught only when the tests of the rule it breaks notice.
TESTS: dict[str, tuple[str, ...]] = {
    "agents.hook": ("test_agent_hook.py",),
    "agents.jsonedit": ("test_jsonedit.py", "test_agent_setup.py"),
    "agents.setup": ("test_agent_setup.py",),
    "agents.tomledit": ("test_tomledit.py", "test_agent_setup.py"),
    "api": ("test_api.py",),
    "core.code_actions": ("test_markers.py", "test_code_actions.py"),
    "core.completion": ("test_completion.py", "test_translate.py"),
    "core.config": ("test_config.py", "test_settings_files.py"),
    "core.documents": ("test_documents.py", "test_documents_blocks.py"),
    "core.edits": ("test_markers.py", "test_save_snippet.py"),
    "core.expansion": (
        "test_expansion.py",
        "test_expansion_bounds.py",
        "test_expansion_reference.py",
    ),
    "core.expansion_patterns": (
        "test_expansion.py",
        "test_expansion_bounds.py",
        "test_expansion_reference.py",
    ),
    "core.hover": ("test_hover.py", "test_long_lines.py"),
    "core.markers": ("test_markers.py",),
    "core.ranking": ("test_ranking.py", "test_ranking_index.py"),
    "core.ranking_columns": ("test_ranking_index.py",),
    "core.semantic_tokens": ("test_semantic_tokens.py", "test_markers.py", "test_long_lines.py"),
    "core.snippet": ("test_completion.py", "test_protocol.py", "test_snippet.py"),
    "settings.diagnostics": ("test_settings_diagnostics.py",),
    "settings.files": ("test_settings_files.py", "test_config.py"),
    "settings.layers": ("test_config.py", "test_settings_files.py", "test_api.py"),
    "settings.live": ("test_live.py", "test_session.py", "test_mcp_live.py"),
    "settings.jsontree": ("test_jsontree.py", "test_jsonedit.py"),
    "settings.locate": ("test_markers.py",),
    "settings.overlay": ("test_edited_files.py",),
    "settings.save_snippet": ("test_save_snippet.py", "test_jsonedit.py"),
    "settings.schema": ("test_config.py", "test_schema.py"),
    "wire.messages": ("test_protocol.py",),
}


def tests_of(module: str) -> list[str]:
    """The unit test files run against ``module``'s mutants."""
    files = TESTS.get(module, (f"test_{module.rsplit('.', 1)[-1]}.py",))
    return [f"tests/unit/{name}" for name in files]


def main(argv: list[str]) -> int:
    """Every core module, or with ``--tests MODULE``: that module's test files."""
    if argv[:1] == ["--tests"]:
        print(" ".join(tests_of(argv[1])))
        return 0
    for module in core_modules():
        print(module)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
