"""``pi-snippets-lsp setup AGENT``: each agent's own config files, edited in place.

docs/agents.md, "Setting an agent up". Every file here is in the agent's real format,
with the comments, odd layout and other entries people have in them: setup adds our
entries and nothing else, a second run changes nothing, ``--dry-run`` writes nothing,
``--remove`` gives the bytes back, and a file that does not parse is refused untouched.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import pi_snippets_lsp
from pi_snippets_lsp.agents.setup import (
    BACKUP_SUFFIX,
    SETUP_AGENTS,
    Place,
    edits_for,
    hook_recognizer,
    launcher,
    run_setup,
)
from pi_snippets_lsp.settings.jsontree import parse_jsonc

COMMAND = ["pi-snippets-lsp"]
SERVER = {"command": "pi-snippets-lsp", "args": ["mcp"]}
#: Where ``setup gemini`` writes the Gemini CLI extension it links.
EXTENSION = "~/.local/share/pi-snippets-lsp/gemini-extension"
#: A stand-in for Gemini CLI's own ``gemini extensions link PATH --consent`` and
#: ``gemini extensions uninstall NAME``: it keeps the record the real one keeps
#: (``~/.gemini/extensions/NAME/.gemini-extension-install.json``) and refuses what the
#: real one would ask about (no ``--consent``, a workspace not trusted).
FAKE_GEMINI = """\
import json, os, pathlib, shutil, sys
home = os.environ.get("GEMINI_CLI_HOME") or os.environ["HOME"]
extensions = pathlib.Path(home) / ".gemini" / "extensions"
args = sys.argv[1:]
with open(pathlib.Path(os.environ["HOME"]).parent / "gemini-calls", "a") as log:
    log.write(json.dumps(args) + "\\n")
trusted = os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true"
if args[:2] == ["extensions", "link"] and args[3:] == ["--consent"] and trusted:
    source = pathlib.Path(args[2])
    name = json.loads((source / "gemini-extension.json").read_text())["name"]
    (extensions / name).mkdir(parents=True)
    record = {"source": str(source), "type": "link"}
    (extensions / name / ".gemini-extension-install.json").write_text(json.dumps(record))
elif args[:2] == ["extensions", "uninstall"] and len(args) == 3:
    shutil.rmtree(extensions / args[2])
else:
    sys.exit("unexpected: " + " ".join(args))
"""

#: Per agent and scope: each file it edits (``~/`` the home, ``./`` the project) with
#: the text a person may have there.
FILES: dict[tuple[str, bool], dict[str, str]] = {
    ("claude-code", False): {
        "~/.claude.json": '{\n  "numStartups": 12,\n  "projects": {\n    "/work/x": {\n'
        '      "allowedTools": []\n    }\n  },\n  "mcpServers": {\n    "github": {\n'
        '      "type": "http",\n      "url": "https://api.example.com/mcp"\n    }\n  },\n'
        '  "userID": "abc"\n}',
        "~/.claude/settings.json": '{\n  "permissions": {"allow": ["Bash(ls:*)"]},\n'
        '  "hooks": {\n    "UserPromptSubmit": [\n      {\n        "hooks": [\n'
        '          {"type": "command", "command": "date"}\n        ]\n      }\n    ],\n'
        '    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]\n'
        "  }\n}\n",
    },
    ("claude-code", True): {
        "./.mcp.json": '{\n    "mcpServers": {}\n}\n',
        "./.claude/settings.json": '{"model": "opus"}\n',
    },
    ("gemini", False): {
        "~/.gemini/settings.json": "// Gemini CLI settings\n{\n"
        '  "general": { "vimMode": true, }, // trailing comma, as JSONC allows\n'
        "  /* servers\n     of mine */\n"
        '  "mcpServers": {\n    "fs": {"command": "npx", "args": ["-y", "fs-mcp"]},\n  },\n'
        '  "security": {"folderTrust": {"enabled": true}}\n}\n',
    },
    ("gemini", True): {
        "./.gemini/settings.json": '{\n\t"hooks": {\n\t\t"AfterAgent": [\n\t\t\t{"hooks": '
        '[{"type": "command", "command": "./log.sh"}]}\n\t\t]\n\t}\n}\n',
        "~/.gemini/trustedFolders.json": '{\n  "/elsewhere": "TRUST_PARENT"\n}',
    },
    ("codex", False): {
        "~/.codex/config.toml": '# Codex\nmodel = "gpt-5"   # the default\n'
        'approval_policy = "on-request"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
        'args = ["--stdio"]   # keep\n\n[profiles.fast]\nmodel = "gpt-5-mini"\n',
        "~/.codex/hooks.json": '{ "hooks": { "Stop": [ { "hooks": [ { "type": "command",'
        ' "command": "say done" } ] } ] } }\n',
    },
    ("codex", True): {
        "./.codex/config.toml": "[mcp_servers]\n# none yet\n",
    },
    ("vscode", False): {
        "~/.config/Code/User/mcp.json": '{\n\t// my servers\n\t"servers": {\n\t\t"gh": {\n'
        '\t\t\t"type": "http",\n\t\t\t"url": "https://example.com/mcp",\n\t\t},\n\t},\n'
        '\t"inputs": [\n\t\t{"type": "promptString", "id": "token", "password": true}\n\t]\n}\n',
    },
    ("vscode", True): {"./.vscode/mcp.json": "{}"},
    ("cursor", False): {
        "~/.cursor/mcp.json": '{"mcpServers":{"a":{"command":"a-mcp"}}}',
    },
    ("cursor", True): {"./.cursor/mcp.json": ""},
    ("zed", False): {
        "~/.config/zed/settings.json": "// Zed settings\n//\n// For information on how to "
        "configure Zed, see the Zed\n// documentation: https://zed.dev/docs/configuring-zed\n"
        '{\n  "ui_font_size": 16,\n  "buffer_font_size": 15, // big\n  "theme": {\n'
        '    "mode": "system",\n    "light": "One Light",\n    "dark": "One Dark",\n  },\n}\n',
    },
    ("zed", True): {
        "./.zed/settings.json": '{\n  "context_servers": {\n    "x": {"command": "x"}, /* x */\n'
        "  }\n}\n",
    },
    ("opencode", False): {
        "~/.config/opencode/opencode.json": '{\n  "$schema": "https://opencode.ai/config.json",'
        '\n  "theme": "opencode",\n  "mcp": {\n    "other": {\n      "type": "remote",\n'
        '      "url": "https://example.com/mcp"\n    }\n  }\n}\n',
    },
    ("opencode", True): {"./opencode.json": '{"$schema": "https://opencode.ai/config.json"}\n'},
}

#: Where each agent keeps our MCP server: the file and the path of the entry in it.
SERVER_AT: dict[tuple[str, bool], tuple[str, tuple[str, ...]]] = {
    ("claude-code", False): ("~/.claude.json", ("mcpServers", "pi-snippets")),
    ("claude-code", True): ("./.mcp.json", ("mcpServers", "pi-snippets")),
    ("gemini", False): (f"{EXTENSION}/gemini-extension.json", ("mcpServers", "pi-snippets")),
    ("gemini", True): ("./.gemini/settings.json", ("mcpServers", "pi-snippets")),
    ("codex", False): ("~/.codex/config.toml", ("mcp_servers", "pi-snippets")),
    ("codex", True): ("./.codex/config.toml", ("mcp_servers", "pi-snippets")),
    ("vscode", False): ("~/.config/Code/User/mcp.json", ("servers", "pi-snippets")),
    ("vscode", True): ("./.vscode/mcp.json", ("servers", "pi-snippets")),
    ("cursor", False): ("~/.cursor/mcp.json", ("mcpServers", "pi-snippets")),
    ("cursor", True): ("./.cursor/mcp.json", ("mcpServers", "pi-snippets")),
    ("zed", False): ("~/.config/zed/settings.json", ("context_servers", "pi-snippets")),
    ("zed", True): ("./.zed/settings.json", ("context_servers", "pi-snippets")),
    ("opencode", False): ("~/.config/opencode/opencode.json", ("mcp", "pi-snippets")),
    ("opencode", True): ("./opencode.json", ("mcp", "pi-snippets")),
}
SERVER_VALUE = {
    "claude-code": {"type": "stdio", **SERVER},
    "vscode": {"type": "stdio", **SERVER},
    "opencode": {"type": "local", "command": ["pi-snippets-lsp", "mcp"], "enabled": True},
}
#: Where the prompt hook goes: the file and the event.
HOOK_AT: dict[tuple[str, bool], tuple[str, str]] = {
    ("claude-code", False): ("~/.claude/settings.json", "UserPromptSubmit"),
    ("claude-code", True): ("./.claude/settings.json", "UserPromptSubmit"),
    ("gemini", False): (f"{EXTENSION}/hooks/hooks.json", "BeforeModel"),
    ("gemini", True): ("./.gemini/settings.json", "BeforeModel"),
    ("codex", False): ("~/.codex/hooks.json", "UserPromptSubmit"),
    ("codex", True): ("./.codex/hooks.json", "UserPromptSubmit"),
}
CASES = sorted(FILES)


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.out: list[str] = []
        self.err: list[str] = []
        self.bin = root / "bin"
        self.bin.mkdir()
        gemini = self.bin / "gemini"
        gemini.write_text(f"#!{sys.executable}\n{FAKE_GEMINI}")
        gemini.chmod(0o755)
        self.env = {"PATH": str(self.bin), "HOME": str(self.home)}

    def path(self, name: str) -> Path:
        base = self.home if name.startswith("~/") else self.project
        return base / name[2:]

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            path = self.path(name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode())

    def read(self, name: str) -> str | None:
        path = self.path(name)
        return path.read_bytes().decode() if path.exists() else None

    def setup(self, agent: str, project: bool = False, **flags: bool) -> int:
        self.out.clear()
        self.err.clear()
        return run_setup(
            agent,
            project=project,
            dry_run=flags.get("dry_run", False),
            remove=flags.get("remove", False),
            place=Place(home=self.home, project=self.project, env=self.env, platform="linux"),
            command=COMMAND,
            out=self.out.append,
            err=self.err.append,
        )

    def snapshot(self) -> dict[str, bytes]:
        """Every file of the home and the project (not the fake ``gemini``, nor setup's
        backups and record)."""
        return {
            str(p.relative_to(self.home.parent)): p.read_bytes()
            for folder in (self.home, self.project)
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(BACKUP_SUFFIX) and "/.local/state/" not in str(p)
        }

    def gemini_calls(self) -> list[list[str]]:
        log = self.home.parent / "gemini-calls"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def value_of(name: str, text: str) -> dict[str, object]:
    if name.endswith(".toml"):
        return tomllib.loads(text)
    result = parse_jsonc(text).value
    assert isinstance(result, dict)
    return result


def dig(value: object, path: tuple[str, ...]) -> object:
    for key in path:
        assert isinstance(value, dict), path
        value = value[key]
    return value


@pytest.mark.parametrize(("agent", "project"), CASES)
def test_setup_adds_our_entries_and_keeps_every_other_one(
    box: Sandbox, agent: str, project: bool
) -> None:
    files = FILES[agent, project]
    box.write(files)
    before = {name: value_of(name, text) if text.strip() else {} for name, text in files.items()}
    assert box.setup(agent, project) == 0, box.err
    name, path = SERVER_AT[agent, project]
    after = value_of(name, box.read(name) or "")
    assert dig(after, path) == SERVER_VALUE.get(agent, SERVER)
    if (agent, project) in HOOK_AT:
        hook_file, event = HOOK_AT[agent, project]
        groups = dig(value_of(hook_file, box.read(hook_file) or ""), ("hooks", event))
        assert isinstance(groups, list)
        ours = [g for g in groups if hook_recognizer(agent)(g)]
        assert len(ours) == 1
        (entry,) = ours[0]["hooks"]
        assert entry["command"] == f"pi-snippets-lsp hook {agent}"
    # Everything that was there is there still, with the same values.
    for name, old in before.items():
        new = value_of(name, box.read(name) or "")
        assert_contains(new, old)


def assert_contains(new: object, old: object) -> None:
    if isinstance(old, dict):
        assert isinstance(new, dict)
        for key, value in old.items():
            assert_contains(new[key], value)
    elif isinstance(old, list):
        assert isinstance(new, list) and new[: len(old)] == old
    else:
        assert new == old


@pytest.mark.parametrize(("agent", "project"), CASES)
def test_a_second_run_changes_nothing_and_says_so(box: Sandbox, agent: str, project: bool) -> None:
    box.write(FILES[agent, project])
    box.setup(agent, project)
    once = box.snapshot()
    assert box.setup(agent, project) == 0
    assert box.snapshot() == once
    assert box.out[-1].startswith("already set up: ") and "nothing to change" in box.out[-1]


@pytest.mark.parametrize(("agent", "project"), CASES)
def test_dry_run_prints_the_diff_and_writes_nothing(
    box: Sandbox, agent: str, project: bool
) -> None:
    box.write(FILES[agent, project])
    before = box.snapshot()
    assert box.setup(agent, project, dry_run=True) == 0
    assert box.snapshot() == before
    text = "\n".join(box.out)
    assert (
        '+    "pi-snippets"' in text
        or "+[mcp_servers.pi-snippets]" in text
        or ('"pi-snippets"' in text and "\n+" in text)
    )
    assert box.out[-1] == "(dry run: nothing written)"
    box.setup(agent, project)
    once = box.snapshot()
    assert box.setup(agent, project, remove=True, dry_run=True) == 0
    assert box.snapshot() == once


@pytest.mark.parametrize(("agent", "project"), CASES)
def test_remove_gives_back_the_bytes_of_before(box: Sandbox, agent: str, project: bool) -> None:
    box.write(FILES[agent, project])
    before = box.snapshot()
    box.setup(agent, project)
    assert box.snapshot() != before
    assert box.setup(agent, project, remove=True) == 0
    assert box.snapshot() == before
    assert box.setup(agent, project, remove=True) == 0
    assert "nothing of pi-snippets in" in box.out[-1]


@pytest.mark.parametrize("agent", SETUP_AGENTS)
@pytest.mark.parametrize("project", [False, True])
def test_remove_deletes_a_file_setup_created(box: Sandbox, agent: str, project: bool) -> None:
    assert box.setup(agent, project) == 0
    assert any(line.startswith("created ") for line in box.out)
    created = box.snapshot()
    assert box.setup(agent, project, remove=True) == 0
    assert box.snapshot() == {}
    assert created


@pytest.mark.parametrize(("agent", "project"), CASES)
def test_a_file_that_does_not_parse_is_refused_untouched(
    box: Sandbox, agent: str, project: bool
) -> None:
    # setup gemini rewrites its own extension's files whatever they hold; it reads
    # Gemini's settings.json (for an older setup's entries).
    name = (
        "~/.gemini/settings.json"
        if (agent, project) == ("gemini", False)
        else SERVER_AT[agent, project][0]
    )
    box.write(FILES[agent, project])
    box.write({name: '[mcp_servers\nbroken = "' if name.endswith(".toml") else '{"a": 1,, }'})
    before = box.snapshot()
    assert box.setup(agent, project) == 1
    assert box.snapshot() == before
    assert len(box.err) == 1 and str(box.path(name)) in box.err[0]
    assert "Nothing was changed" in box.err[0]
    assert box.setup(agent, project, remove=True) == 1
    assert box.snapshot() == before


@pytest.mark.parametrize(
    ("agent", "project", "text"),
    [
        ("cursor", False, '{"mcpServers": []}'),
        ("cursor", False, "[]"),
        ("claude-code", False, '{"mcpServers": 3}'),
        ("gemini", True, '{"hooks": {"BeforeModel": {}}}'),
        ("codex", False, 'mcp_servers = "none"\n'),
    ],
)
def test_a_file_of_the_wrong_shape_is_refused_untouched(
    box: Sandbox, agent: str, project: bool, text: str
) -> None:
    name, _ = SERVER_AT[agent, project]
    box.write({name: text})
    assert box.setup(agent, project) == 1
    assert box.read(name) == text


def test_an_entry_that_differs_is_updated_in_place(box: Sandbox) -> None:
    old = (
        '{\n  "mcpServers": {\n    "pi-snippets": {"command": "/old/pi-snippets-lsp"},\n'
        '    "z": {}\n  }\n}\n'
    )
    box.write({"~/.cursor/mcp.json": old})
    assert box.setup("cursor") == 0
    assert box.read("~/.cursor/mcp.json") == (
        '{\n  "mcpServers": {\n    "pi-snippets": {\n      "command": "pi-snippets-lsp",\n'
        '      "args": ["mcp"]\n    },\n    "z": {}\n  }\n}\n'
    )


def test_a_hook_of_an_older_command_is_replaced_not_doubled(box: Sandbox) -> None:
    old = {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "/old/bin/pi-snippets-lsp hook claude-code"}
    ]}]}}  # fmt: skip
    box.write({"~/.claude/settings.json": json.dumps(old, indent=2) + "\n"})
    box.setup("claude-code")
    groups = json.loads(box.read("~/.claude/settings.json") or "")["hooks"]["UserPromptSubmit"]
    assert groups == [
        {
            "hooks": [
                {"type": "command", "command": "pi-snippets-lsp hook claude-code", "timeout": 10}
            ]
        }
    ]


def test_the_exact_text_setup_writes_into_a_claude_settings_file(box: Sandbox) -> None:
    box.write(FILES["claude-code", False])
    box.setup("claude-code")
    assert box.read("~/.claude/settings.json") == (
        '{\n  "permissions": {"allow": ["Bash(ls:*)"]},\n  "hooks": {\n'
        '    "UserPromptSubmit": [\n      {\n        "hooks": [\n'
        '          {"type": "command", "command": "date"}\n        ]\n      },\n'
        '      {\n        "hooks": [\n          {\n'
        '            "type": "command",\n'
        '            "command": "pi-snippets-lsp hook claude-code",\n'
        '            "timeout": 10\n          }\n        ]\n      }\n    ],\n'
        '    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]\n'
        "  }\n}\n"
    )


def test_gemini_project_setup_trusts_the_folder_once_and_never_overrides_a_no(
    box: Sandbox,
) -> None:
    box.setup("gemini", project=True)
    trust = json.loads(box.read("~/.gemini/trustedFolders.json") or "")
    assert trust == {str(box.project): "TRUST_FOLDER"}
    box.setup("gemini", project=True, remove=True)
    assert box.read("~/.gemini/trustedFolders.json") is None
    box.write({"~/.gemini/trustedFolders.json": json.dumps({str(box.project): "TRUST_FOLDER"})})
    box.setup("gemini", project=True)
    box.setup("gemini", project=True, remove=True)  # a trust the person gave stays
    assert json.loads(box.read("~/.gemini/trustedFolders.json") or "") == trust
    box.write({"~/.gemini/trustedFolders.json": json.dumps({str(box.project): "DO_NOT_TRUST"})})
    box.setup("gemini", project=True)
    assert json.loads(box.read("~/.gemini/trustedFolders.json") or "") == {
        str(box.project): "DO_NOT_TRUST"
    }


def test_the_backup_holds_the_old_bytes_with_the_old_permissions(box: Sandbox) -> None:
    box.write(FILES["claude-code", False])
    path = box.path("~/.claude.json")
    os.chmod(path, 0o600)
    box.setup("claude-code")
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    assert backup.read_bytes().decode() == FILES["claude-code", False]["~/.claude.json"]
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_config_dirs_follow_the_agents_environment_variables(tmp_path: Path) -> None:
    place = Place(
        home=tmp_path,
        project=tmp_path / "p",
        env={
            "CLAUDE_CONFIG_DIR": "/c",
            "CODEX_HOME": "/x",
            "XDG_CONFIG_HOME": "/xdg",
            "GEMINI_CLI_HOME": "/g",
            "XDG_DATA_HOME": "/d",
        },
        platform="linux",
    )
    paths = {
        agent: [str(e.path) for e in edits_for(agent, False, place, COMMAND)]
        for agent in SETUP_AGENTS
    }
    assert paths["claude-code"] == ["/c/.claude.json", "/c/settings.json"]
    assert paths["codex"] == ["/x/config.toml", "/x/hooks.json"]
    assert paths["zed"] == ["/xdg/zed/settings.json"]
    assert paths["vscode"] == ["/xdg/Code/User/mcp.json"]
    assert paths["opencode"] == ["/xdg/opencode/opencode.json"]
    extension = "/d/pi-snippets-lsp/gemini-extension"
    assert paths["gemini"] == [
        f"{extension}/gemini-extension.json",
        f"{extension}/hooks/hooks.json",
        "/g/.gemini/settings.json",  # an older setup's entries, taken back
        "/g/.gemini/settings.json",
    ]
    mac = Place(home=tmp_path, project=tmp_path, env={}, platform="darwin")
    assert [str(e.path) for e in edits_for("vscode", False, mac, COMMAND)] == [
        f"{tmp_path}/Library/Application Support/Code/User/mcp.json"
    ]


def test_the_launcher_is_the_bare_name_when_path_finds_this_command(tmp_path: Path) -> None:
    script = tmp_path / "pi-snippets-lsp"
    script.write_text("#!/bin/sh\n")
    argv = sys.argv[:]
    try:
        sys.argv[0] = str(script)
        assert launcher(lambda name: str(script)) == ["pi-snippets-lsp"]
        assert launcher(lambda name: None) == [str(script)]
        assert launcher(lambda name: "/usr/bin/true") == [str(script)]
        sys.argv[0] = "-c"
        assert launcher(lambda name: None) == [sys.executable, "-m", "pi_snippets_lsp"]
        assert launcher(lambda name: "/usr/bin/x") == ["pi-snippets-lsp"]
    finally:
        sys.argv[:] = argv


def test_the_real_command_sets_claude_code_up_and_takes_it_back(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"CLAUDE_CONFIG_DIR", "XDG_STATE_HOME"}}
    env["HOME"] = str(tmp_path)
    package_root = str(Path(pi_snippets_lsp.__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pi_snippets_lsp", "setup", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    done = run("claude-code")
    assert done.returncode == 0, done.stderr
    entry = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["pi-snippets"]
    assert entry["args"][-1] == "mcp"
    assert run("claude-code").stdout.startswith("already set up")
    assert run("claude-code", "--remove").returncode == 0
    assert not (tmp_path / ".claude.json").exists()
    bad = run("nope")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_a_config_file_that_is_a_link_is_written_through(box: Sandbox) -> None:
    real = box.home / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}\n')
    link = box.path("~/.cursor/mcp.json")
    link.parent.mkdir()
    link.symlink_to(real)
    assert box.setup("cursor") == 0
    assert link.is_symlink()
    assert "pi-snippets" in json.loads(real.read_text())["mcpServers"]
    assert box.setup("cursor", remove=True) == 0
    assert link.is_symlink() and real.read_text() == '{"mcpServers": {}}\n'


OLD_GEMINI_SETTINGS = """{
  "mcpServers": {
    "fs": {"command": "fs-mcp"},
    "pi-snippets": {"command": "pi-snippets-lsp", "args": ["mcp"]}
  },
  "hooks": {
    "BeforeModel": [
      {"hooks": [{"type": "command", "command": "./log.sh"}]},
      {"hooks": [{"name": "pi-snippets", "type": "command",
                  "command": "pi-snippets-lsp hook gemini", "timeout": 10000}]}
    ]
  }
}
"""


def test_setup_gemini_links_its_extension_with_geminis_own_command(box: Sandbox) -> None:
    """The extension's files are written first, then ``gemini extensions link``
    (consent given, the workspace trusted for that command only) records it; the
    second run finds it linked and changes nothing; ``--remove`` unlinks it with
    ``gemini extensions uninstall``, then deletes the files and their folders."""
    assert box.setup("gemini", dry_run=True) == 0
    folder = box.path(EXTENSION)
    assert f"and run: gemini extensions link {folder} --consent" in box.out
    assert box.gemini_calls() == [] and box.snapshot() == {}
    assert box.setup("gemini") == 0, box.err
    assert box.gemini_calls() == [["extensions", "link", str(folder), "--consent"]]
    manifest = json.loads(box.read(f"{EXTENSION}/gemini-extension.json") or "")
    assert manifest["name"] == "pi-snippets" and manifest["version"] == "0.0.0"
    record = json.loads(
        box.read("~/.gemini/extensions/pi-snippets/.gemini-extension-install.json") or ""
    )
    assert record == {"source": str(folder), "type": "link"}
    assert f"linked {folder} as Gemini CLI's extension pi-snippets" in box.out
    assert "slash command" in box.out[-1]
    assert box.setup("gemini") == 0 and box.out[-1].startswith("already set up: ")
    assert len(box.gemini_calls()) == 1
    assert box.setup("gemini", remove=True) == 0, box.err
    assert box.gemini_calls()[-1] == ["extensions", "uninstall", "pi-snippets"]
    assert box.snapshot() == {}
    assert not folder.exists() and not folder.parent.exists()
    assert box.path("~/.local/share").is_dir()


def test_setup_gemini_takes_back_the_settings_entries_of_an_older_setup(box: Sandbox) -> None:
    """An older setup wrote the server and the hook into ``~/.gemini/settings.json``:
    beside the extension they would start a second server and run the hook twice."""
    box.write({"~/.gemini/settings.json": OLD_GEMINI_SETTINGS})
    assert box.setup("gemini") == 0, box.err
    settings = value_of("settings.json", box.read("~/.gemini/settings.json") or "")
    assert settings == {
        "mcpServers": {"fs": {"command": "fs-mcp"}},
        "hooks": {"BeforeModel": [{"hooks": [{"type": "command", "command": "./log.sh"}]}]},
    }
    assert box.setup("gemini") == 0 and box.out[-1].startswith("already set up: ")


def test_setup_gemini_without_gemini_on_the_path_changes_nothing(box: Sandbox) -> None:
    box.write({"~/.gemini/settings.json": OLD_GEMINI_SETTINGS})
    box.env["PATH"] = str(box.home)
    before = box.snapshot()
    assert box.setup("gemini") == 1
    assert "`gemini` command is not on PATH" in box.err[0] and "Nothing was changed" in box.err[0]
    assert box.snapshot() == before
    box.env["PATH"] = str(box.bin)
    assert box.setup("gemini") == 0
    box.env["PATH"] = str(box.home)
    once = box.snapshot()
    assert box.setup("gemini", remove=True) == 1  # the link is Gemini's to take back
    assert box.snapshot() == once


def test_setup_gemini_leaves_an_extension_of_the_same_name_from_elsewhere(box: Sandbox) -> None:
    record = {"source": "/src/pi-snippets-lsp/editors/gemini", "type": "link"}
    box.write(
        {"~/.gemini/extensions/pi-snippets/.gemini-extension-install.json": json.dumps(record)}
    )
    before = box.snapshot()
    assert box.setup("gemini") == 1
    assert "already has an extension named pi-snippets (from /src/" in box.err[0]
    assert box.snapshot() == before
    assert box.setup("gemini", remove=True) == 0
    assert box.snapshot() == before and box.gemini_calls() == []


def test_a_failing_gemini_command_is_reported(box: Sandbox) -> None:
    (box.bin / "gemini").write_text("#!/bin/sh\necho 'Extension not allowed' >&2\nexit 3\n")
    assert box.setup("gemini") == 1
    assert "`gemini extensions link " in box.err[0] and "(3): Extension not allowed" in box.err[0]
    assert "run setup again" in box.err[1]
