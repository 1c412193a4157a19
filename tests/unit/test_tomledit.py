"""Our MCP server in Codex's ``config.toml`` (``agents.tomledit``): a block appended at
the end, taken back exactly; anything else through ``tomlkit``, which keeps the rest.

docs/agents.md, "What setup changes".
"""

from __future__ import annotations

import tomllib

import pytest

from pi_snippets_lsp.agents.jsonedit import ConfigFileError
from pi_snippets_lsp.agents.tomledit import remove_server, set_server, toml_value

ENTRY: dict[str, object] = {"command": "pi-snippets-lsp", "args": ["mcp"]}
BLOCK = '[mcp_servers.pi-snippets]\ncommand = "pi-snippets-lsp"\nargs = ["mcp"]\n'


@pytest.mark.parametrize(
    ("text", "added"),
    [
        ("", BLOCK),
        ('model = "m"\n', f'model = "m"\n\n{BLOCK}'),
        ('model = "m"', f'model = "m"\n\n{BLOCK}'),
        ('[mcp_servers.a]\ncommand = "a"\n', f'[mcp_servers.a]\ncommand = "a"\n\n{BLOCK}'),
        ("[mcp_servers]\n# none yet\n", f"[mcp_servers]\n# none yet\n\n{BLOCK}"),
    ],
)
def test_a_new_server_is_a_block_at_the_end(text: str, added: str) -> None:
    assert set_server(text, "c", "pi-snippets", ENTRY) == added
    assert set_server(added, "c", "pi-snippets", ENTRY) == added
    prune = "mcp_servers" not in tomllib.loads(text)
    back = remove_server(added, "c", "pi-snippets", prune=prune)
    assert back == (text if text.endswith("\n") or not text else text + "\n")


def test_a_key_that_needs_quotes_is_quoted() -> None:
    added = set_server("", "c", "pi snippets", ENTRY)
    assert added.startswith('[mcp_servers."pi snippets"]\n')
    assert tomllib.loads(added)["mcp_servers"]["pi snippets"] == ENTRY
    assert remove_server(added, "c", "pi snippets", prune=True) == ""


def test_an_inline_table_is_edited_by_tomlkit() -> None:
    text = 'mcp_servers = { a = { command = "a" } }\n'
    added = set_server(text, "c", "pi-snippets", ENTRY)
    assert tomllib.loads(added)["mcp_servers"] == {"a": {"command": "a"}, "pi-snippets": ENTRY}
    assert tomllib.loads(remove_server(added, "c", "pi-snippets")) == tomllib.loads(text)


def test_an_entry_that_differs_is_updated_and_one_in_the_middle_removed_cleanly() -> None:
    text = (
        '# top\n[mcp_servers.pi-snippets]\ncommand = "old"  # was\n\n'
        '[profiles.fast]\nmodel = "mini"\n'
    )
    updated = set_server(text, "c", "pi-snippets", ENTRY)
    assert tomllib.loads(updated)["mcp_servers"]["pi-snippets"] == ENTRY
    assert updated.startswith("# top\n") and updated.endswith('[profiles.fast]\nmodel = "mini"\n')
    removed = remove_server(updated, "c", "pi-snippets", prune=True)
    assert removed == '# top\n[profiles.fast]\nmodel = "mini"\n'
    # A table that was only implied by ours leaves nothing behind (no servers either way).
    assert remove_server(updated, "c", "pi-snippets", prune=False) == removed


def test_nothing_of_ours_is_nothing_to_remove() -> None:
    text = '[mcp_servers.a]\ncommand = "a"\n'
    assert remove_server(text, "c", "pi-snippets") == text
    assert remove_server("", "c", "pi-snippets") == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[mcp_servers\n", "c is not valid TOML"),
        ('mcp_servers = "x"\n', "mcp_servers in c is not a table"),
    ],
)
def test_a_file_it_cannot_edit_is_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigFileError, match=f"^{message}"):
        set_server(text, "c", "pi-snippets", ENTRY)
    with pytest.raises(ConfigFileError, match=f"^{message}"):
        remove_server(text, "c", "pi-snippets")


def test_toml_value_is_the_plain_value() -> None:
    assert toml_value('a = 1\n[b]\nc = "d"\n', "c") == {"a": 1, "b": {"c": "d"}}
