"""``pi-snippets-lsp setup AGENT [--project] [--dry-run] [--remove]``.

docs/agents.md, "Setting an agent up". Each agent keeps its MCP servers (and hooks) in
its own file and format; ``setup`` merges ours into them, as the person would by hand:

- one MCP server entry named ``pi-snippets`` (``command`` ``pi-snippets-lsp``, ``args``
  ``["mcp"]``), and the prompt hook (``pi-snippets-lsp hook AGENT``) where the agent has
  one that can carry an expansion (Claude Code, Gemini CLI, Codex);
- every other byte of the file stays (``agents.jsonedit``, ``agents.tomledit``); a file
  that does not parse, or whose tables are not tables, is refused untouched;
- a run that would change nothing says so and writes nothing (setup is idempotent);
  ``--dry-run`` prints the change as a unified diff and writes nothing;
- a write is atomic (``settings.safe_write``), after a copy of the old file to
  ``<file>.pi-snippets-lsp.bak`` with the same permissions;
- ``--remove`` takes back exactly what setup added; a file setup created and that holds
  nothing else is deleted.

The command in the entries: ``pi-snippets-lsp`` when that name on ``PATH`` is the
running command (a config that travels, e.g. a project's, keeps working on another
machine), else the running script's absolute path, else ``python -m pi_snippets_lsp``
with this interpreter: an agent starts it without the person's shell set-up.

Gemini CLI (user scope) gets an extension, not settings entries: its slash commands
then appear at every start (``agents.gemini_extension``). A project (``--project``) has
no extensions: there the entries go into ``.gemini/settings.json`` (docs/agents.md).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import shlex
import shutil
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from pi_snippets_lsp.agents import gemini_extension, jsonedit
from pi_snippets_lsp.agents.jsonedit import ConfigFileError
from pi_snippets_lsp.core.config import JsonPath
from pi_snippets_lsp.settings.safe_write import SettingsWriteError, write_settings_file

#: The agents ``setup`` knows, as typed on the command line.
SETUP_AGENTS: Final = ("claude-code", "gemini", "codex", "vscode", "cursor", "zed", "opencode")
#: The name of our MCP server in every agent's config.
SERVER_NAME: Final = "pi-snippets"
BACKUP_SUFFIX: Final = ".pi-snippets-lsp.bak"
#: Seconds (Claude Code, Codex) and milliseconds (Gemini CLI) a hook may take.
HOOK_TIMEOUT_SECONDS: Final = 10
#: Gemini CLI folder trust: the value its own dialog writes for "trust this folder".
TRUST_FOLDER: Final = "TRUST_FOLDER"


@dataclass(frozen=True, slots=True)
class Edit:
    """What setup does to one file: ``add`` maps its text (``""`` for a missing file) to
    the new text; ``take_back(text, created)`` removes ours again, and with it each
    container at a path in ``created`` that it leaves empty. ``container`` is where our
    entry goes (its missing parts are created), ``read`` the file's plain value.

    ``owned``: the whole file is ours (the Gemini extension's files, in setup's own
    folder): ``add`` gives its text whatever was there, ``--remove`` deletes it.
    ``retired``: an entry an older setup wrote where it no longer belongs (Gemini's
    ``settings.json`` before the extension): setup takes it back in both directions."""

    path: Path
    add: Callable[[str], str]
    take_back: Callable[[str, frozenset[JsonPath]], str]
    container: JsonPath
    read: Callable[[str], object]
    owned: bool = False
    retired: bool = False


@dataclass(frozen=True, slots=True)
class Place:
    """Where things go: the user's home, the project folder, the environment."""

    home: Path
    project: Path
    env: dict[str, str]
    platform: str = sys.platform
    #: This package's version (the Gemini extension's manifest carries it).
    version: str = "0.0.0"

    @property
    def record_file(self) -> Path:
        """Where setup notes what it created (see ``Record``)."""
        state = self.env.get("XDG_STATE_HOME")
        base = Path(state) if state else self.home / ".local" / "state"
        return base / "pi-snippets-lsp" / "setup.json"

    @property
    def gemini_home(self) -> Path:
        """Gemini CLI's user folder (``GEMINI_CLI_HOME`` moves it, as Gemini's own
        ``homedir()`` does)."""
        moved = self.env.get("GEMINI_CLI_HOME")
        return (Path(moved) if moved else self.home) / ".gemini"

    @property
    def gemini_extension(self) -> Path:
        """The folder of the Gemini CLI extension setup writes and links: setup's own,
        outside Gemini's, so that ``pip``/``pipx`` installs need no package data."""
        data = self.env.get("XDG_DATA_HOME")
        base = Path(data) if data else self.home / ".local" / "share"
        return base / "pi-snippets-lsp" / "gemini-extension"


def launcher(which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The command that starts this ``pi-snippets-lsp`` (see the module's docstring)."""
    found = which("pi-snippets-lsp")
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "pi-snippets-lsp" and script.is_file():
        if found is not None and _same_file(found, script):
            return ["pi-snippets-lsp"]
        return [str(script.absolute())]
    if found is not None:
        return ["pi-snippets-lsp"]
    return [sys.executable, "-m", "pi_snippets_lsp"]


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def hook_recognizer(agent: str) -> Callable[[object], bool]:
    """Whether a hook group (``{"hooks": [{"command": …}]}``) is ours for ``agent``."""
    pattern = re.compile(
        r"(?:^|[\s/'\"])(?:pi-snippets-lsp|pi_snippets_lsp)['\"]?\s+hook\s+"
        + re.escape(agent)
        + r"(?:$|[\s'\"])"
    )

    def ours(group: object) -> bool:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            return False
        return any(
            isinstance(h, dict)
            and isinstance(h.get("command"), str)
            and pattern.search(h["command"])
            for h in group["hooks"]
        )

    return ours


def edits_for(agent: str, project: bool, place: Place, command: Sequence[str]) -> list[Edit]:
    """The files ``setup AGENT`` changes, and how."""
    exe, *pre = command
    mcp_args = [*pre, "mcp"]
    hook_command = shlex.join([*command, "hook", agent])
    home, root, env = place.home, place.project, place.env
    edits: list[Edit] = []

    def server(path: Path, table: tuple[str, ...], value: object) -> None:
        name = str(path)
        edits.append(
            Edit(
                path,
                lambda t: jsonedit.set_member(t, name, table, SERVER_NAME, value),
                lambda t, created: jsonedit.remove_member(t, name, table, SERVER_NAME, created),
                table,
                lambda t: jsonedit.json_value(t, name),
            )
        )

    def hook(path: Path, event: str, entry: dict[str, object]) -> None:
        name, ours, where = str(path), hook_recognizer(agent), ("hooks", event)
        group = {"hooks": [entry]}
        edits.append(
            Edit(
                path,
                lambda t: jsonedit.add_item(t, name, where, group, ours),
                lambda t, created: jsonedit.remove_items(t, name, where, ours, created),
                where,
                lambda t: jsonedit.json_value(t, name),
            )
        )

    def owned(path: Path, value: object) -> None:
        text = json.dumps(value, indent=2) + "\n"
        edits.append(Edit(path, lambda _: text, lambda _t, _c: "", (), lambda _: value, owned=True))

    command_hook: dict[str, object] = {"type": "command", "command": hook_command}
    if agent == "claude-code":
        config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
        entry = {"type": "stdio", "command": exe, "args": mcp_args}
        if project:
            server(root / ".mcp.json", ("mcpServers",), entry)
            settings = root / ".claude" / "settings.json"
        else:
            server((config_dir or home) / ".claude.json", ("mcpServers",), entry)
            settings = (config_dir or home / ".claude") / "settings.json"
        hook(settings, "UserPromptSubmit", {**command_hook, "timeout": HOOK_TIMEOUT_SECONDS})
    elif agent == "gemini":
        gemini_home = place.gemini_home
        settings = root / ".gemini" / "settings.json" if project else gemini_home / "settings.json"
        gemini_server: dict[str, object] = {"command": exe, "args": mcp_args}
        gemini_hook = {"name": SERVER_NAME, **command_hook, "timeout": HOOK_TIMEOUT_SECONDS * 1000}
        if not project:
            extension = place.gemini_extension
            owned(
                extension / "gemini-extension.json",
                gemini_extension.manifest(place.version, gemini_server),
            )
            owned(extension / "hooks" / "hooks.json", gemini_extension.hooks(gemini_hook))
        mark = len(edits)
        server(settings, ("mcpServers",), gemini_server)
        hook(settings, "BeforeModel", gemini_hook)
        if not project:
            # An older setup's entries: beside the extension they would start a second
            # server of the same name and run the hook twice.
            edits[mark:] = [replace(e, retired=True) for e in edits[mark:]]
        else:
            trust = gemini_home / "trustedFolders.json"
            folder = str(root)
            edits.append(
                Edit(
                    trust,
                    lambda t: _trust(t, str(trust), folder),
                    lambda t, created: (
                        jsonedit.remove_member(t, str(trust), (), folder)
                        if (folder,) in created
                        else t
                    ),
                    (folder,),
                    lambda t: jsonedit.json_value(t, str(trust)),
                )
            )
    elif agent == "codex":
        from pi_snippets_lsp.agents import tomledit  # noqa: PLC0415 (tomlkit: setup only)

        codex_home = root / ".codex" if project else Path(env.get("CODEX_HOME") or home / ".codex")
        config = codex_home / "config.toml"
        table: dict[str, object] = {"command": exe, "args": mcp_args}
        edits.append(
            Edit(
                config,
                lambda t: tomledit.set_server(t, str(config), SERVER_NAME, table),
                lambda t, created: tomledit.remove_server(
                    t, str(config), SERVER_NAME, prune=(tomledit.TABLE,) in created
                ),
                (tomledit.TABLE,),
                lambda t: tomledit.toml_value(t, str(config)),
            )
        )
        hook(
            codex_home / "hooks.json",
            "UserPromptSubmit",
            {**command_hook, "timeout": HOOK_TIMEOUT_SECONDS},
        )
    elif agent == "vscode":
        path = root / ".vscode" / "mcp.json" if project else _vscode_user_dir(place) / "mcp.json"
        server(path, ("servers",), {"type": "stdio", "command": exe, "args": mcp_args})
    elif agent == "cursor":
        server((root if project else home) / ".cursor" / "mcp.json", ("mcpServers",), {
            "command": exe, "args": mcp_args,
        })  # fmt: skip
    elif agent == "zed":
        path = root / ".zed" / "settings.json" if project else _xdg(place) / "zed" / "settings.json"
        server(path, ("context_servers",), {"command": exe, "args": mcp_args})
    elif agent == "opencode":
        opencode_dir = root if project else _xdg(place) / "opencode"
        path = opencode_dir / "opencode.json"
        if not path.exists() and (opencode_dir / "opencode.jsonc").exists():
            path = opencode_dir / "opencode.jsonc"
        server(path, ("mcp",), {"type": "local", "command": [exe, *mcp_args], "enabled": True})
    else:
        raise ValueError(f"unknown agent {agent!r}")
    return edits


def _trust(text: str, name: str, folder: str) -> str:
    """Trust ``folder`` in Gemini CLI's ``trustedFolders.json`` unless the file already
    says something of it: a person's "do not trust" stands."""
    value = jsonedit.json_value(text, name)
    if isinstance(value, dict) and folder in value:
        return text
    return jsonedit.set_member(text, name, (), folder, TRUST_FOLDER)


def _xdg(place: Place) -> Path:
    configured = place.env.get("XDG_CONFIG_HOME")
    return Path(configured) if configured else place.home / ".config"


def _vscode_user_dir(place: Place) -> Path:
    """VS Code's user profile folder, where its user ``mcp.json`` lives."""
    if place.platform == "darwin":
        return place.home / "Library" / "Application Support" / "Code" / "User"
    if place.platform == "win32":
        appdata = place.env.get("APPDATA")
        return (Path(appdata) if appdata else place.home / "AppData" / "Roaming") / "Code" / "User"
    return _xdg(place) / "Code" / "User"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's text before and after (None: no file); ``owned``: a file setup
    writes whole (no backup: setup would write the same text again)."""

    path: Path
    old: str | None
    new: str | None
    owned: bool = False

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        name = str(self.path)
        return "".join(
            difflib.unified_diff(
                (self.old or "").splitlines(keepends=True),
                (self.new or "").splitlines(keepends=True),
                fromfile=name if self.old is not None else "/dev/null",
                tofile=name if self.new is not None else "/dev/null",
            )
        )


@dataclass(frozen=True, slots=True)
class Record:
    """What setup created in one file, so that ``--remove`` takes back exactly that: the
    file itself, and the containers (``mcpServers``, ``hooks``, …) that were missing. A
    container that was there, even empty, stays; one setup created goes with our entry.
    Kept in ``Place.record_file``; without a record, ``--remove`` deletes our entries
    only."""

    created_file: bool = False
    containers: frozenset[JsonPath] = frozenset()
    #: The text of a file that was there but blank (a file setup filled in).
    blank: str | None = None

    def to_json(self) -> dict[str, object]:
        value: dict[str, object] = {
            "createdFile": self.created_file,
            "containers": sorted(map(list, self.containers)),
        }
        if self.blank is not None:
            value["blank"] = self.blank
        return value

    @classmethod
    def from_json(cls, value: object) -> Record:
        if not isinstance(value, dict):
            return cls()
        paths = value.get("containers")
        containers = frozenset(
            tuple(p) for p in paths if isinstance(p, list) and all(isinstance(k, str) for k in p)
        ) if isinstance(paths, list) else frozenset()  # fmt: skip
        blank = value.get("blank")
        blank = blank if isinstance(blank, str) and not blank.strip() else None
        return cls(value.get("createdFile") is True, containers, blank)


@dataclass(frozen=True, slots=True)
class Plan:
    """Every file's change, and the records to keep after them."""

    changes: list[FileChange]
    records: dict[str, Record | None]


def plan(edits: Sequence[Edit], remove: bool, records: dict[str, Record]) -> Plan:
    """Every file's change, computed before anything is written (one file that cannot
    be read or parsed stops the whole setup: ``ConfigFileError``)."""
    changes: dict[Path, FileChange] = {}
    updated: dict[str, Record | None] = {}
    for edit in edits:
        key = str(edit.path)
        previous = changes.get(edit.path)
        old = previous.old if previous else _read(edit.path, lenient=edit.owned)
        current = previous.new if previous else old
        text = current or ""
        record = updated.get(key) or records.get(key) or Record()
        if edit.owned:
            updated[key] = None
            new_text = None if remove else edit.add(text)
            changes[edit.path] = FileChange(edit.path, old, new_text, owned=True)
            continue
        if remove or edit.retired:
            new_text = edit.take_back(text, record.containers)
            updated[key] = None
        else:
            created = _missing(edit.read(text), edit.container) if text.strip() else {
                edit.container[:i] for i in range(1, len(edit.container) + 1)
            }  # fmt: skip
            new_text = edit.add(text)
            if new_text != text:
                blank = old is not None and not old.strip()
                updated[key] = Record(
                    record.created_file or old is None or blank,
                    record.containers | created,
                    record.blank if record.created_file else old if blank else None,
                )
        new: str | None = new_text
        if current is None and new_text == text:
            new = None
        elif (remove or edit.retired) and record.created_file and new_text.strip() in {"{}", ""}:
            new = record.blank  # nothing left but what setup created: the file goes
        changes[edit.path] = FileChange(edit.path, old, new)
    return Plan(list(changes.values()), updated)


def _missing(value: object, container: JsonPath) -> frozenset[JsonPath]:
    """The paths along ``container`` that ``value`` lacks (each missing level)."""
    missing = set()
    for depth in range(1, len(container) + 1):
        node = value
        for key in container[:depth]:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            missing.add(container[:depth])
    return frozenset(missing)


def load_records(path: Path) -> dict[str, Record]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: Record.from_json(v) for k, v in value.items()}


def save_records(path: Path, records: dict[str, Record], updates: dict[str, Record | None]) -> None:
    merged = {**records, **updates}
    kept = {k: v.to_json() for k, v in sorted(merged.items()) if v is not None}
    if not kept:
        path.unlink(missing_ok=True)
        return
    write_settings_file(path, json.dumps(kept, indent=2) + "\n", replace=True)


def _read(path: Path, lenient: bool = False) -> str | None:
    """A config file's text (None: no file); ``lenient`` for a file setup owns, which it
    rewrites whatever it holds."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8", errors="replace" if lenient else "strict")
    except UnicodeDecodeError:
        raise ConfigFileError(f"{path} is not UTF-8 text") from None


def write(change: FileChange) -> None:
    """Write one change atomically, the old file first copied to its backup."""
    # A config file that is a link (dotfiles kept in a repository) is written through:
    # replacing the link by a file would cut it off from where the person keeps it.
    path = change.path.resolve() if change.path.is_symlink() else change.path
    if change.old is not None and not change.owned:
        _backup(path, change.old)
    if change.new is None:
        path.unlink(missing_ok=True)
        return
    write_settings_file(path, change.new, replace=True)


def _backup(path: Path, text: str) -> None:
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    mode = stat.S_IMODE(path.stat().st_mode)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
    os.chmod(backup, mode)  # the copy is as private as the file (~/.claude.json)
    write_settings_file(backup, text, replace=True)


#: What the person sees next, per agent.
NEXT: Final = {
    "claude-code": "Start claude: `claude mcp list` shows pi-snippets, and %name in a prompt "
    "reaches the model expanded (a project's .mcp.json asks for your approval once).",
    "gemini": "Start gemini in a folder you trust (it asks the first time): every snippet "
    "is offered as a slash command (/review), `/mcp list` shows pi-snippets Ready, and "
    "%name in a prompt reaches the model expanded.",
    "gemini-project": "Start gemini here: `gemini mcp list` shows pi-snippets, and %name in "
    "a prompt reaches the model expanded; the snippets become slash commands (/review) "
    "after `/mcp refresh` (Gemini lists a settings.json server's prompts only if it "
    "answered while Gemini started).",
    "codex": "Start codex: `codex mcp list` shows pi-snippets; review and trust the new "
    "prompt hook when Codex asks, then %name in a prompt reaches the model expanded.",
    "vscode": "In VS Code's chat (agent mode), the pi-snippets tools and /mcp.pi-snippets.NAME "
    "prompts appear; `MCP: List Servers` shows it.",
    "cursor": "In Cursor's settings, MCP shows pi-snippets; its tools and prompts reach the chat.",
    "zed": "In Zed's agent panel, pi-snippets appears among the context servers.",
    "opencode": "Start opencode: its MCP list shows pi-snippets.",
}


def run_setup(
    agent: str,
    *,
    project: bool,
    dry_run: bool,
    remove: bool,
    place: Place,
    command: Sequence[str],
    out: Callable[[str], None],
    err: Callable[[str], None],
) -> int:
    """``setup``: 0 done (or nothing to do), 1 a file refused or not written."""
    records = load_records(place.record_file)
    try:
        planned = plan(edits_for(agent, project, place, command), remove, records)
        step = (
            gemini_extension.step(place.gemini_home, place.gemini_extension, remove)
            if agent == "gemini" and not project
            else None
        )
    except ConfigFileError as exc:
        err(f"pi-snippets-lsp setup: {exc}; fix it (or move it away) and run setup again. "
            "Nothing was changed.")  # fmt: skip
        return 1
    changes = planned.changes
    pending = [c for c in changes if c.changed]
    if not pending and step is None:
        what = "nothing of pi-snippets in" if remove else "already set up:"
        out(f"{what} {', '.join(str(c.path) for c in changes)}; nothing to change")
        return 0
    if dry_run:
        for change in pending:
            out(change.diff().rstrip("\n"))
        if step is not None:
            out(f"and run: {step.shown()}")
        out("(dry run: nothing written)")
        return 0
    gemini = gemini_extension.find_gemini(place.env)
    if step is not None and gemini is None:
        err("pi-snippets-lsp setup: Gemini CLI's `gemini` command is not on PATH; install "
            "Gemini CLI (npm install -g @google/gemini-cli), then run setup again. "
            "Nothing was changed.")  # fmt: skip
        return 1
    if step is not None and gemini is not None and remove:
        if not gemini_extension.run(gemini, step, place.project, place.env, err):
            err("Nothing was changed.")
            return 1
        out(step.done)
    for change in pending:
        try:
            write(change)
        except (OSError, SettingsWriteError) as exc:
            err(f"pi-snippets-lsp setup: cannot write {change.path}: {exc}")
            return 1
        verb = "deleted" if change.new is None else "created" if change.old is None else "updated"
        saved = change.old is not None and not change.owned
        backup = f" (backup: {change.path.name}{BACKUP_SUFFIX})" if saved else ""
        out(f"{verb} {change.path}{backup}")
    try:
        save_records(place.record_file, records, planned.records)
    except (OSError, SettingsWriteError) as exc:
        err(f"pi-snippets-lsp setup: cannot note what was added in {place.record_file}: {exc}")
    if agent == "gemini" and not project and remove:
        gemini_extension.prune(place.gemini_extension)
    if step is not None and gemini is not None and not remove:
        if not gemini_extension.run(gemini, step, place.project, place.env, err):
            err("The extension's files are written; run setup again to link them.")
            return 1
        out(step.done)
    if not remove:
        out(NEXT["gemini-project" if agent == "gemini" and project else agent])
    return 0


def run_setup_command(args: argparse.Namespace, version: str) -> int:
    """The ``setup`` command line (``version``: this package's)."""
    place = Place(home=Path.home(), project=Path.cwd(), env=dict(os.environ), version=version)
    return run_setup(
        args.agent,
        project=args.project_scope,
        dry_run=args.dry_run,
        remove=args.remove,
        place=place,
        command=launcher(),
        out=print,
        err=lambda text: print(text, file=sys.stderr),
    )
