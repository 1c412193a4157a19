"""The in-process API: ``load_config``, ``load_request``, ``expand`` and ``complete``.

docs/agent-frontends.md, "The in-process API"; docs/configuration.md, "Layers". The API
reads the same layers with the same trust rule and warnings as the server, and answers
with the very functions the server's handlers call. tests/frontends/test_api.py compares
it with a real server; these tests state each rule of the API on its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest
from pi_snippets_lsp.core.completion import suggest
from pi_snippets_lsp.core.config import Config, Layer
from pi_snippets_lsp.core.expansion import expand as core_expand
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.settings.layers import OPTIONS_SOURCE, LoadRequest, load_request

from pi_snippets_lsp import api
from pi_snippets_lsp.api import complete, expand, load_config


def write(path: Path, namespace: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"piSimpleSnippets": namespace}), encoding="utf-8")
    return path


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$PI_CODING_AGENT_DIR``: where the user settings file is by default."""
    folder = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose ``.pi/settings.json`` defines the snippet ``proj``."""
    folder = tmp_path / "project"
    write(folder / ".pi" / "settings.json", {"snippets": {"proj": "from the project"}})
    return folder


# --------------------------------------------------------------------------- load_config


def test_options_snippets_have_the_source_options(agent_dir: Path) -> None:
    """A snippet from ``options`` names its layer ``"options"`` (``snippets/list`` shows
    the server's client layer the same way)."""
    config = load_config(options={"snippets": {"o": "opt"}})
    assert OPTIONS_SOURCE == "options"
    assert config.snippets == (Snippet("o", "opt", "options"),)


def test_the_default_user_file_is_the_agent_folders(agent_dir: Path) -> None:
    user = write(agent_dir / "settings.json", {"snippets": {"u": "user"}})
    config = load_config()
    assert config.snippets == (Snippet("u", "user", str(user)),)
    assert config.sources == (str(user),)
    assert config.warnings == ()


def test_a_missing_file_at_the_default_location_is_no_problem(agent_dir: Path) -> None:
    """Pi's default file not existing yet means "nothing configured", quietly."""
    config = load_config()
    assert config == Config()


def test_a_named_settings_file_replaces_the_default_one(agent_dir: Path, tmp_path: Path) -> None:
    write(agent_dir / "settings.json", {"snippets": {"ignored": "default file"}})
    named = write(tmp_path / "named.json", {"snippets": {"n": "named"}})
    config = load_config(settings=named)
    assert config.values == {"n": "named"}
    assert config.sources == (str(named),)


def test_a_named_settings_file_that_is_missing_is_a_warning(
    agent_dir: Path, tmp_path: Path
) -> None:
    """``settings`` is the server's ``--settings``: naming a file that is not there is a
    mistake worth saying, unlike Pi's default location."""
    missing = tmp_path / "missing.json"
    config = load_config(settings=missing)
    assert config.warnings == (f"settings file {missing} does not exist",)
    assert config.warning_message() == (
        f"pi-simple-snippets: settings file {missing} does not exist"
    )


def test_a_project_is_untrusted_unless_the_caller_says_so(agent_dir: Path, project: Path) -> None:
    """Pi reads a project's settings only for a trusted project: with the default left
    alone, the project file is not read, only listed as skipped."""
    config = load_config(project=project)
    assert config.values == {}
    assert config.untrusted_project_files == (str(project / ".pi" / "settings.json"),)


def test_a_trusted_project_file_is_read_over_the_user_file(agent_dir: Path, project: Path) -> None:
    write(agent_dir / "settings.json", {"snippets": {"proj": "user", "u": "user"}})
    config = load_config(project=project, trust_project=True)
    assert config.values == {"proj": "from the project", "u": "user"}
    assert config.untrusted_project_files == ()
    assert config.sources == (
        str(agent_dir / "settings.json"),
        str(project / ".pi" / "settings.json"),
    )


def test_the_project_folder_is_normalized(agent_dir: Path, project: Path) -> None:
    """``project/sub/..`` is the project: the skipped file is named by its plain path."""
    config = load_config(project=f"{project}/sub/..")
    assert config.untrusted_project_files == (str(project / ".pi" / "settings.json"),)


def test_options_are_the_top_layer(agent_dir: Path, project: Path) -> None:
    write(agent_dir / "settings.json", {"snippets": {"a": "user"}, "expandOnCompletion": True})
    config = load_config(
        project=project,
        trust_project=True,
        options={"snippets": {"a": "opt", "proj": "opt"}, "expandOnCompletion": False},
    )
    assert config.values == {"a": "opt", "proj": "opt"}
    assert config.expand_on_completion is False
    assert {s.source for s in config.snippets} == {OPTIONS_SOURCE}


def test_options_accept_any_mapping(agent_dir: Path) -> None:
    """Options are plain JSON to the validation, whatever mapping the caller passes."""
    options = MappingProxyType({"snippets": MappingProxyType({"m": "mapped"})})
    assert load_config(options=options).values == {"m": "mapped"}


def test_bad_options_are_warnings_not_errors(agent_dir: Path) -> None:
    config = load_config(options={"snippets": {"Bad Name": "x", "ok": "fine"}})
    assert config.values == {"ok": "fine"}
    assert len(config.warnings) == 1 and "Bad Name" in config.warnings[0]


# --------------------------------------------------------------------------- load_request


def test_the_request_of_the_defaults(agent_dir: Path) -> None:
    assert load_request() == LoadRequest(user_file=agent_dir / "settings.json", client_layers=[])


def test_the_request_of_every_argument(tmp_path: Path) -> None:
    """Each argument lands where ``load_config`` reads it: the named file (required), the
    normalized project folder, the trust flag, and the options as the one client layer."""
    request = load_request(
        settings=tmp_path / "s.json",
        project=f"{tmp_path}/p/",
        trust_project=True,
        options={"snippets": {"a": "b"}},
    )
    assert request == LoadRequest(
        user_file=tmp_path / "s.json",
        user_file_required=True,
        project_folder=tmp_path / "p",
        trust_project=True,
        client_layers=[Layer("options", {"piSimpleSnippets": {"snippets": {"a": "b"}}})],
    )
    assert request.files == [tmp_path / "s.json", tmp_path / "p" / ".pi" / "settings.json"]


def test_no_options_is_no_layer_and_empty_options_are_one(tmp_path: Path) -> None:
    """``None`` means "no such layer"; ``{}`` is a layer that sets nothing."""
    assert load_request(settings=tmp_path / "s.json").client_layers == []
    assert load_request(settings=tmp_path / "s.json", options={}).client_layers == [
        Layer("options", {"piSimpleSnippets": {}})
    ]


def test_a_named_settings_file_expands_the_home_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load_request(settings="~/s.json").user_file == tmp_path / "s.json"


# --------------------------------------------------------------------------- expand, complete


CONFIG = Config(
    snippets=(
        Snippet("review", "Review the diff", "s"),
        Snippet("rename", "Rename it", "s"),
    )
)


def test_expand_is_the_servers_expansion() -> None:
    result = expand("%review please, %%review, %nope", CONFIG)
    assert result == core_expand("%review please, %%review, %nope", CONFIG.values)
    assert result.text == "Review the diff please, %review, %nope"
    assert result.changed is True


def test_expand_without_snippets_changes_nothing() -> None:
    result = expand("%%a %a", Config())
    assert (result.text, result.changed) == ("%%a %a", False)


def test_complete_is_the_servers_completion() -> None:
    result = complete("see %re", CONFIG)
    assert result == suggest("see %re", CONFIG)
    assert result is not None
    assert [item.name for item in result.items] == ["review", "rename"]
    assert (result.replace_start, result.replace_end, result.query) == (4, 7, "re")


def test_complete_is_none_outside_a_token_or_without_snippets() -> None:
    assert complete("see re", CONFIG) is None
    assert complete("%", Config()) is None


def test_the_public_names() -> None:
    assert sorted(api.__all__) == [
        "Config",
        "Expansion",
        "OPTIONS_SOURCE",
        "Snippet",
        "Suggestion",
        "Suggestions",
        "complete",
        "expand",
        "load_config",
    ]
