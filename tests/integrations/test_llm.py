"""The ``llm`` plugin, driven through llm's own CLI.

The plugin is found the way users get it: through the ``llm`` entry point that the
editable install registered (nothing here registers it by hand). The model is the
test-only ``pi-echo`` (``llm_echo_model``), registered through llm's plugin manager, so
no network or API key is needed. ``LLM_USER_PATH`` points at a temporary folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import llm
import pytest
from click.testing import CliRunner, Result
from llm.cli import cli

from pi_snippets_lsp.core.catalog import closest_names
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.integrations.llm import TRUST_ENV, trusted_by_env

from . import llm_echo_model
from .conftest import SNIPPETS, USE_MCP, write_settings

ECHO_PLUGIN = "pi-snippets-test-echo"


@pytest.fixture(scope="module")
def llm_user_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One llm user folder for the module: llm migrates its log database into a new
    folder on first use, which takes seconds, and no test here reads the logs."""
    return tmp_path_factory.mktemp("llm-user")


@pytest.fixture
def received(
    home: Path, llm_user_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[llm.Prompt]]:
    """The prompts ``pi-echo`` receives; llm's user folder is a temporary one."""
    monkeypatch.setenv("LLM_USER_PATH", str(llm_user_path))
    monkeypatch.delenv(TRUST_ENV, raising=False)
    llm.plugins.pm.register(llm_echo_model, name=ECHO_PLUGIN)
    llm_echo_model.received.clear()
    try:
        yield llm_echo_model.received
    finally:
        llm.plugins.pm.unregister(name=ECHO_PLUGIN)


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def test_the_entry_point_registers_the_plugin(received: list[llm.Prompt]) -> None:
    [plugin] = [p for p in llm.get_plugins() if p["name"] == "pi-snippets-lsp"]
    assert set(plugin["hooks"]) == {"register_commands", "register_fragment_loaders"}
    result = run("fragments", "loaders")
    assert result.exit_code == 0
    assert "pi:\n  Pi's %name prompt snippets" in result.stdout


def test_fragment_sends_the_snippet_text(received: list[llm.Prompt]) -> None:
    result = run("-m", llm_echo_model.MODEL_ID, "-f", "pi:review", "Here is the diff.")
    assert result.exit_code == 0, result.output
    [prompt] = received
    assert prompt.fragments == [SNIPPETS["review"]]
    assert prompt.fragments[0].source == "pi:review"
    assert prompt.prompt == f"{SNIPPETS['review']}\nHere is the diff."
    assert result.stdout == f"{SNIPPETS['review']}\nHere is the diff.\n"

    result = run("-m", llm_echo_model.MODEL_ID, "-f", "pi:%use-mcp", "-f", "pi:focus", "go")
    assert result.exit_code == 0, result.output
    assert received[-1].prompt == f"{USE_MCP}\n{SNIPPETS['focus']}\ngo"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        # A typo: Pi's ranking of its longest prefix that matches.
        ("reveiw", 'no snippet named "reveiw"; did you mean %review?'),
        # Several close: in Pi's popup order, not A-Z.
        ("us", 'no snippet named "us"; did you mean %use-mcp, %focus or %status?'),
        (
            "zzz",
            'no snippet named "zzz"; the snippets are %focus, %review, %status and %use-mcp',
        ),
        ("", "no snippet name given (use pi:NAME); the snippets are %focus, %review,"),
    ],
)
def test_unknown_names_fail_naming_the_close_matches(
    received: list[llm.Prompt], name: str, message: str
) -> None:
    result = run("-m", llm_echo_model.MODEL_ID, "-f", f"pi:{name}", "hello")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: Could not load fragment pi:{name}: {message}")
    assert received == []  # the model was never asked


def test_no_snippets_at_all_says_where_it_looked(received: list[llm.Prompt], home: Path) -> None:
    (home / "settings.json").unlink()
    result = run("-m", llm_echo_model.MODEL_ID, "-f", "pi:review", "hello")
    assert result.exit_code == 1
    assert (
        f'no snippet named "review": no snippets are configured '
        f"(settings read from {home / 'settings.json'})" in result.stderr
    )


def test_project_snippets_need_trust(
    received: list[llm.Prompt], monkeypatch: pytest.MonkeyPatch
) -> None:
    project_file = write_settings(
        Path.cwd() / ".pi" / "settings.json", {"snippets": {"local": "Project text."}}
    )
    result = run("-m", llm_echo_model.MODEL_ID, "-f", "pi:local", "x")
    assert result.exit_code == 1
    assert (
        f"skipped project settings {project_file}: the project is not trusted "
        f"(set {TRUST_ENV}=1 to read it)" in result.stderr
    )

    monkeypatch.setenv(TRUST_ENV, "1")
    result = run("-m", llm_echo_model.MODEL_ID, "-f", "pi:local", "-f", "pi:focus", "x")
    assert result.exit_code == 0, result.output
    assert received[-1].prompt == f"Project text.\n{SNIPPETS['focus']}\nx"

    monkeypatch.setenv(TRUST_ENV, "maybe")
    result = run("-m", llm_echo_model.MODEL_ID, "-f", "pi:local", "x")
    assert result.exit_code == 1
    assert f"{TRUST_ENV} must be 1 or 0 (true/false, yes/no), not 'maybe'" in result.stderr


def test_settings_problems_go_to_stderr(received: list[llm.Prompt], home: Path) -> None:
    write_settings(home / "settings.json", {"snippets": {**SNIPPETS, "Bad": "x"}})
    result = run("-m", llm_echo_model.MODEL_ID, "-f", "pi:focus", "x")
    assert result.exit_code == 0, result.output
    assert result.stderr == 'pi-simple-snippets: ignored 1 snippet entry: "Bad" (invalid name)\n'
    assert received[-1].fragments == [SNIPPETS["focus"]]


def test_list(received: list[llm.Prompt], home: Path) -> None:
    result = run("pi", "list")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"{home / 'settings.json'}\n"
        "  %focus    Focus on the failing test first.\n"
        "  %review   Review this change for correctness. List problems first.\n"
        "  %status   Report the status in one line.\n"
        f"  %use-mcp  {USE_MCP}\n"
    )
    assert result.stderr == ""


def test_list_groups_by_source_file_and_names_skipped_files(
    received: list[llm.Prompt], home: Path
) -> None:
    project_file = write_settings(
        Path.cwd() / ".pi" / "settings.json",
        {"snippets": {"focus": "Project focus.", "local": "Project text."}},
    )
    result = run("pi", "list")
    assert result.exit_code == 0
    assert "%local" not in result.stdout
    assert result.stderr == (
        f"pi-simple-snippets: skipped project settings {project_file}: the project is not "
        f"trusted (pass --trust-project or set {TRUST_ENV}=1 to read it)\n"
    )

    result = run("pi", "list", "--trust-project")
    assert result.exit_code == 0
    assert result.stdout == (
        f"{project_file}\n"
        "  %focus    Project focus.\n"
        "  %local    Project text.\n"
        "\n"
        f"{home / 'settings.json'}\n"
        "  %review   Review this change for correctness. List problems first.\n"
        "  %status   Report the status in one line.\n"
        f"  %use-mcp  {USE_MCP}\n"
    )
    assert result.stderr == ""


def test_list_other_settings_and_nothing_configured(
    received: list[llm.Prompt], tmp_path: Path
) -> None:
    other = write_settings(tmp_path / "other.json", {"snippets": {"brief": "Be brief."}})
    result = run("pi", "list", "--settings", str(other))
    assert result.stdout == f"{other}\n  %brief  Be brief.\n"

    empty = write_settings(tmp_path / "empty.json", {})
    result = run("pi", "list", "--settings", str(empty))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == f"pi-simple-snippets: no snippets are configured ({empty})\n"


def test_expand(received: list[llm.Prompt]) -> None:
    result = run("pi", "expand", "Please %use-mcp. (%focus) x%status %%review %nope")
    assert result.exit_code == 0, result.output
    assert result.stdout == (f"Please {USE_MCP}. ({SNIPPETS['focus']}) x%status %review %nope\n")

    result = run("pi", "expand", stdin="%review\n")
    assert result.stdout == f"{SNIPPETS['review']}\n"
    assert received == []


def test_close_matches_use_pis_ranking() -> None:
    config = Config(
        snippets=tuple(Snippet(name=n, value="v", source="s") for n in sorted(SNIPPETS))
    )

    def names(query: str) -> list[str]:
        return closest_names(config, query)

    assert names("us") == ["use-mcp", "focus", "status"]
    assert names("statsu") == ["status"]  # via its prefix "stats"
    assert names("q") == []
    assert names("") == []


@pytest.mark.parametrize(
    ("value", "trusted"),
    [("", False), ("0", False), ("no", False), ("1", True), ("TRUE", True), (" yes ", True)],
)
def test_trust_env(value: str, trusted: bool) -> None:
    assert trusted_by_env({TRUST_ENV: value}) is trusted


def test_trust_env_unset_is_untrusted_and_a_bad_value_is_an_error() -> None:
    assert trusted_by_env({}) is False
    with pytest.raises(ValueError, match=f"{TRUST_ENV} must be 1 or 0 .*, not 'maybe'"):
        trusted_by_env({TRUST_ENV: "maybe"})
