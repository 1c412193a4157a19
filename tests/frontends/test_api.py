"""The in-process API gives what the real server gives: same layers, trust, warnings,
expansion and completion items (compared with a server driven by ``SnippetsClient``)."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from pathlib import Path
from types import MappingProxyType

import pytest
from pi_snippets_lsp.settings.layers import OPTIONS_SOURCE

import pi_snippets_lsp
from pi_snippets_lsp import complete, expand, load_config
from pi_snippets_lsp.client import SnippetsClient

from .conftest import EXAMPLES, ClientFactory, write_settings

WARNING = 2
INFO = 3


def server_view(client: SnippetsClient) -> dict[str, object]:
    listing = client.list()
    return {
        "snippets": [
            (
                s.name,
                s.value,
                s.preview,
                OPTIONS_SOURCE if s.source == "initializationOptions" else s.source,
            )
            for s in listing.snippets
        ],
        "shortcut": listing.shortcut,
        "expandOnCompletion": listing.expand_on_completion,
        "warnings": list(listing.warnings),
    }


def api_view(config: pi_snippets_lsp.Config) -> dict[str, object]:
    return {
        "snippets": [(s.name, s.value, s.preview, s.source) for s in config.snippets],
        "shortcut": config.shortcut,
        "expandOnCompletion": config.expand_on_completion,
        "warnings": list(config.warnings),
    }


def test_public_names_and_version() -> None:
    # The version is written once, in the package; the distribution's metadata reads it.
    assert pi_snippets_lsp.__version__ == importlib.metadata.version("pi-snippets-lsp")
    for name in ("load_config", "expand", "complete", "SnippetsClient", "SnippetsError"):
        assert name in pi_snippets_lsp.__all__
        assert hasattr(pi_snippets_lsp, name)


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
def test_layers_trust_and_warnings_match_the_server(
    home: Path, tmp_path: Path, stdio_client: ClientFactory, trusted: bool
) -> None:
    write_settings(
        home / "settings.json",
        {
            "snippets": {
                "use-mcp": "user value",
                "only-user": "from the user file",
                "Bad Name": "x",
                "empty": "",
            },
            "shortcut": "ctrl + s",
            "expandOnCompletion": "yes",
        },
    )
    project = (tmp_path / "project").resolve()
    project_file = write_settings(
        project / ".pi" / "settings.json",
        {"snippets": {"use-mcp": "project value", "proj": "P"}, "shortcut": "CTRL+SHIFT+P"},
    )
    options = {"snippets": {"opt": "line one\r\nline two"}, "expandOnCompletion": True}

    config = load_config(project=project, trust_project=trusted, options=options)
    client = stdio_client(
        project=project,
        trust_project=trusted,
        init_options={"piSimpleSnippets": options, "pollInterval": 0},
    )

    assert api_view(config) == server_view(client)
    names = [s.name for s in config.snippets]
    assert ("proj" in names) is trusted
    assert config.values["use-mcp"] == ("project value" if trusted else "user value")
    assert config.values["opt"] == "line one\r\nline two"
    # The options' flag replaces the user file's bad one; the project's good shortcut
    # replaces the user's bad one only when the project is trusted.
    assert config.expand_on_completion is True
    assert config.shortcut == ("ctrl+shift+p" if trusted else None)
    assert len(config.warnings) == (1 if trusted else 2)
    assert any("Bad Name" in w and '"empty"' in w for w in config.warnings)

    warnings = [m.message for m in client.messages if m.type == WARNING]
    assert warnings == [config.warning_message()]
    infos = [m.message for m in client.messages if m.type == INFO]
    if trusted:
        assert config.untrusted_project_files == ()
        assert infos == []
    else:
        assert config.untrusted_project_files == (str(project_file),)
        assert len(infos) == 1 and str(project_file) in infos[0]

    for text in ["%use-mcp and %opt", "(%only-user) %%proj %proj", "%empty %bad"]:
        local = expand(text, config)
        assert (local.text, local.changed) == tuple(client.expand(text))


def test_settings_file_override_and_a_broken_file(
    home: Path, tmp_path: Path, stdio_client: ClientFactory
) -> None:
    write_settings(home / "settings.json", {"snippets": {"ignored": "the env file"}})
    broken = tmp_path / "broken.json"
    broken.write_text('{"piSimpleSnippets": {"snippets": ', encoding="utf-8")

    config = load_config(settings=broken, options={"snippets": {"a": "A"}})
    client = stdio_client(
        settings=broken, init_options={"piSimpleSnippets": {"snippets": {"a": "A"}}}
    )

    assert api_view(config) == server_view(client)
    assert [s.name for s in config.snippets] == ["a"]
    assert len(config.warnings) == 1 and str(broken) in config.warnings[0]
    assert config.sources == (str(broken),)


def test_defaults_read_the_agent_folder(home: Path) -> None:
    write_settings(home / "settings.json", {"snippets": {"x": "from PI_CODING_AGENT_DIR"}})
    config = load_config()
    assert config.values == {"x": "from PI_CODING_AGENT_DIR"}
    assert config.sources == (str(home / "settings.json"),)
    assert config.warnings == ()


def test_nothing_configured(home: Path) -> None:
    config = load_config()
    assert config.snippets == () and config.warnings == ()
    assert expand("%%x %x", config).text == "%%x %x"
    assert complete("%", config) is None


def test_options_accept_any_mapping(home: Path) -> None:
    options = MappingProxyType({"snippets": MappingProxyType({"m": "mapped"})})
    config = load_config(options=options)
    assert config.values == {"m": "mapped"}
    assert config.snippets[0].source == OPTIONS_SOURCE


# ------------------------------------------------------------------ completion

MANY = {f"item-{n:02d}": f"Item number {n}" for n in range(25)}
SPECIAL = {
    "review": "Review $HOME ${1:x} and }\r\nthen\rreport",
    "use-mcp": "Use your MCP tools to find the information",
    "tests": "Write tests that fail when the rule breaks; no wall-clock assertions.",
    "cjk": "请用中文回答。",
    "long": "word " * 40,
}

TEXTS = [
    "%",
    "%re",
    "see %us",
    "(%t",
    "`%c",
    "😀 %re",
    "😀😀 [%it",
    "line one\n  {%u",
    "a\r\nb %rev",
    "one\rtwo %lo",
    "回答：%c",
    "%item-1",
    "%use-mcp.",
    "%zzz",
    "%-x",
    "no token",
    "50%",
    "a%re",
    "%%re",
]


@pytest.mark.parametrize("expand_on_completion", [False, True], ids=["marker", "expand"])
def test_complete_matches_the_servers_completion(
    home: Path, stdio_client: ClientFactory, expand_on_completion: bool
) -> None:
    write_settings(
        home / "settings.json",
        {"snippets": {**MANY, **SPECIAL}, "expandOnCompletion": expand_on_completion},
    )
    config = load_config()
    client = stdio_client()
    seen_incomplete = False
    for text in TEXTS:
        local = complete(text, config)
        # The client parses the server's LSP items back into the API's own values: the
        # two must be equal, field by field (order, ranks, previews, texts, ranges).
        assert client.complete(text) == local, text
        seen_incomplete |= bool(local and local.is_incomplete)
    assert seen_incomplete  # the bare "%" lists 20 of 30

    bare = complete("%", config)
    assert bare is not None and len(bare.items) == 20
    assert [i.name for i in bare.items] == sorted(MANY | SPECIAL)[:20]
    review = complete("%revi", config)
    assert review is not None
    item = review.items[0]
    assert item.label == "%review" and item.sort_text == "0000"
    if expand_on_completion:
        assert item.insert_text == "Review $HOME ${1:x} and }\nthen\nreport"
    else:
        assert item.insert_text == "%review"
    assert (review.replace_start, review.replace_end, review.query) == (0, 5, "revi")


def test_complete_with_no_snippets_matches_the_server(
    home: Path, stdio_client: ClientFactory
) -> None:
    config = load_config()
    client = stdio_client()
    for text in ["%", "see %us"]:
        assert complete(text, config) is None
        assert client.complete(text) is None


def test_complete_results_are_frozen_plain_data(home: Path) -> None:
    config = load_config(settings=EXAMPLES)
    result = complete("%", config)
    assert result is not None
    assert dataclasses.is_dataclass(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.is_incomplete = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.items[0].name = "x"  # type: ignore[misc]
    assert [i.label for i in result.items] == ["%cjk", "%review", "%tests", "%use-mcp"]
