"""Configuration: settings layers, Pi's deep merge, validation and warnings.

Rules: docs/configuration.md ("Settings", "Layers", "Reading a settings file",
"Validation and warnings").

Layers, lowest first: the user settings file, the project settings file (only for a
trusted project, as Pi reads it only then), and the client's options. They are merged
the Pi way and only then validated, so every problem of one load is found in one place
and reported as one warning. A malformed part never takes the valid parts with it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .grammar import JS_WHITESPACE, is_valid_name
from .snippet import Snippet

SETTINGS_KEY: Final = "piSimpleSnippets"
MESSAGE_PREFIX: Final = "pi-simple-snippets:"
PROJECT_SETTINGS: Final = Path(".pi") / "settings.json"

MODIFIERS: Final = frozenset({"ctrl", "shift", "alt", "super"})
NAMED_KEYS: Final = frozenset(
    {
        "escape", "esc", "enter", "return", "tab", "space", "backspace", "delete",
        "insert", "clear", "home", "end", "pageup", "pagedown", "up", "down", "left",
        "right", *(f"f{n}" for n in range(1, 13)),
    }
)  # fmt: skip


class Config(BaseModel):
    """One generation: the validated configuration of one load, immutable."""

    model_config = ConfigDict(frozen=True)

    snippets: tuple[Snippet, ...] = ()
    shortcut: str | None = None
    expand_on_completion: bool = Field(default=False, serialization_alias="expandOnCompletion")
    warnings: tuple[str, ...] = ()
    #: Settings files that were read for this generation.
    sources: tuple[str, ...] = ()
    #: Project settings files that exist but were skipped because the project is untrusted.
    untrusted_project_files: tuple[str, ...] = ()
    #: Whether any layer mentioned the namespace at all.
    namespace_present: bool = False

    _values: dict[str, str] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        self._values = {s.name: s.value for s in self.snippets}

    @property
    def values(self) -> Mapping[str, str]:
        """Snippet name -> text, for expansion."""
        return self._values

    def warning_message(self) -> str | None:
        """The one notification of this generation, or None when nothing is wrong."""
        if not self.warnings:
            return None
        return f"{MESSAGE_PREFIX} " + "; ".join(self.warnings)


EMPTY_CONFIG: Final = Config()


def normalize_shortcut(raw: str) -> str | None:
    """The normalized ``mod[+mod]+key`` form, or None when Pi would reject it.

    The whole string is trimmed and lowercased, the parts are not, so
    ``"ctrl + shift + s"`` is rejected while ``"CTRL+SHIFT+S"`` is accepted. At least
    one modifier is required so a bare key can never swallow ordinary typing.
    """
    parts = raw.strip(JS_WHITESPACE).lower().split("+")
    if len(parts) < 2 or any(part == "" for part in parts):
        return None
    *modifiers, base = parts
    if any(m not in MODIFIERS for m in modifiers) or len(set(modifiers)) != len(modifiers):
        return None
    printable = len(base) == 1 and "!" <= base <= "~"
    if not printable and base not in NAMED_KEYS:
        return None
    return "+".join(parts)


# --------------------------------------------------------------------------- merge


def plain_json(value: object) -> object:
    """Client or caller data as plain JSON shapes: dicts with str keys, and lists.

    pygls hands unknown JSON over as namedtuples and tuples; Python callers may pass any
    mapping or sequence. Validation and merging only ever see dicts and lists.
    """
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, Mapping):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return value


def deep_merge(base: object, override: object) -> object:
    """Pi's settings merge: plain objects merge key by key, recursively; anything else
    (arrays, primitives, ``null``) replaces. Keys absent from ``override`` are kept."""
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return override
    merged: dict[str, object] = dict(base)
    for key, value in override.items():
        merged[key] = deep_merge(merged[key], value) if key in merged else value
    return merged


# --------------------------------------------------------------------------- files


class SettingsFileError(Exception):
    """A settings file exists but cannot be used; the message names the file."""


def parse_settings_text(text: str, path: str) -> dict[str, object]:
    """Parse a settings file the way Pi does: JSON after a leading BOM, no comments.

    An empty file is ``{}``. JavaScript's ``JSON.parse`` rejects ``NaN`` and
    ``Infinity``, so we do too.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if text.strip(JS_WHITESPACE) == "":
        return {}

    def reject_constant(name: str) -> object:
        raise ValueError(f"{name} is not valid JSON")

    try:
        value = json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as exc:
        raise SettingsFileError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise SettingsFileError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise SettingsFileError(f"{path} must hold a JSON object, not {_json_type(value)}")
    return value


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


@dataclass
class SettingsFiles:
    """Reads settings files and remembers the last good content of each.

    A file that stops parsing (a half-written save) keeps the content it last had, so
    an editor's intermediate save never wipes the snippets; at first read it counts as
    ``{}``. Either way the problem is reported.
    """

    last_good: dict[str, dict[str, object]] = field(default_factory=dict)

    def read(self, path: Path) -> tuple[dict[str, object] | None, str | None]:
        """(settings or None when absent, warning or None)."""
        key = str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self.last_good.pop(key, None)
            return None, None
        except IsADirectoryError:
            return self._fallback(key, f"{key} is a directory, not a settings file")
        except OSError as exc:
            return self._fallback(key, f"cannot read {key}: {exc.strerror or exc}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._fallback(key, f"{key} is not UTF-8 text (byte {exc.start})")
        try:
            settings = parse_settings_text(text, key)
        except SettingsFileError as exc:
            return self._fallback(key, str(exc))
        self.last_good[key] = settings
        return settings, None

    def _fallback(self, key: str, problem: str) -> tuple[dict[str, object], str]:
        previous = self.last_good.get(key)
        if previous is not None:
            return previous, f"{problem}; keeping its last valid content"
        return {}, problem


def user_settings_path(
    env: Mapping[str, str] | None = None, override: str | os.PathLike[str] | None = None
) -> Path:
    """``--settings FILE``, else ``$PI_CODING_AGENT_DIR/settings.json``, else Pi's default."""
    if override is not None:
        return Path(override).expanduser()
    environ = os.environ if env is None else env
    agent_dir = environ.get("PI_CODING_AGENT_DIR", "")
    if agent_dir:
        return Path(agent_dir).expanduser() / "settings.json"
    return Path("~/.pi/agent/settings.json").expanduser()


def project_settings_path(folder: str | os.PathLike[str]) -> Path:
    return Path(folder) / PROJECT_SETTINGS


# --------------------------------------------------------------------------- layers


@dataclass(frozen=True)
class Layer:
    """Whole settings (a JSON object) from one source, named for ``snippets/list``."""

    source: str
    settings: Mapping[str, object]


def client_layer(source: str, namespace_value: object) -> Layer | None:
    """A client option (the value of the ``piSimpleSnippets`` section) as a layer.

    A client that has nothing configured sends ``null`` or nothing; that is "absent",
    not an instruction to wipe the files' snippets.
    """
    if namespace_value is None:
        return None
    return Layer(source=source, settings={SETTINGS_KEY: namespace_value})


@dataclass(frozen=True)
class LoadRequest:
    """Where one generation's configuration comes from."""

    user_file: Path
    project_folder: Path | None = None
    trust_project: bool = False
    client_layers: Sequence[Layer] = ()
    #: The user file was named explicitly (``--settings``): its absence is a problem,
    #: not the quiet "no settings yet" of Pi's default location.
    user_file_required: bool = False


def load_config(request: LoadRequest, files: SettingsFiles | None = None) -> Config:
    """Read, merge and validate one generation."""
    files = files if files is not None else SettingsFiles()
    layers: list[Layer] = []
    problems: list[str] = []
    sources: list[str] = []
    untrusted: list[str] = []

    def add_file(path: Path) -> bool:
        settings, problem = files.read(path)
        if problem is not None:
            problems.append(problem)
        if settings is not None:
            sources.append(str(path))
            layers.append(Layer(source=str(path), settings=settings))
        return settings is not None or problem is not None

    if not add_file(request.user_file) and request.user_file_required:
        problems.append(f"settings file {request.user_file} does not exist")
    if request.project_folder is not None:
        project_file = project_settings_path(request.project_folder)
        if request.trust_project:
            if project_file.resolve() != request.user_file.resolve():
                add_file(project_file)
        elif project_file.is_file():
            untrusted.append(str(project_file))
    layers.extend(request.client_layers)
    return validate_layers(layers, problems, sources, untrusted)


def validate_layers(
    layers: Sequence[Layer],
    problems: Sequence[str] = (),
    sources: Sequence[str] = (),
    untrusted: Sequence[str] = (),
) -> Config:
    """Merge ``layers`` the Pi way, then validate the merged namespace."""
    merged: object = {}
    present = False
    provenance: dict[str, str] = {}
    for layer in layers:
        merged = deep_merge(merged, dict(layer.settings))
        if SETTINGS_KEY not in layer.settings:
            continue
        present = True
        namespace = layer.settings[SETTINGS_KEY]
        table = namespace.get("snippets") if isinstance(namespace, dict) else None
        if isinstance(table, dict):
            for name in table:
                provenance[name] = layer.source
        elif not isinstance(namespace, dict) or "snippets" in namespace:
            provenance.clear()  # a non-object replaced what came before

    warnings = list(problems)
    namespace = merged.get(SETTINGS_KEY) if isinstance(merged, dict) else None
    snippets: list[Snippet] = []
    shortcut: str | None = None
    expand_on_completion = False
    if present:
        snippets, shortcut, expand_on_completion = _validate_namespace(
            namespace, provenance, warnings
        )
    return Config(
        snippets=tuple(snippets),
        shortcut=shortcut,
        expand_on_completion=expand_on_completion,
        warnings=tuple(warnings),
        sources=tuple(sources),
        untrusted_project_files=tuple(untrusted),
        namespace_present=present,
    )


def _validate_namespace(
    namespace: object, provenance: Mapping[str, str], warnings: list[str]
) -> tuple[list[Snippet], str | None, bool]:
    if not isinstance(namespace, dict):
        warnings.append(
            f'"{SETTINGS_KEY}" must be an object, not {_json_type(namespace)}; '
            "ignoring the whole namespace"
        )
        return [], None, False

    shortcut: str | None = None
    if "shortcut" in namespace:
        raw = namespace["shortcut"]
        if not isinstance(raw, str):
            warnings.append(f"`shortcut` must be a string, not {_json_type(raw)}; ignoring it")
        else:
            shortcut = normalize_shortcut(raw)
            if shortcut is None:
                warnings.append(
                    f'`shortcut` "{raw}" needs "modifier[+modifier]+key" with at least one of '
                    "ctrl, shift, alt, super and a known key; ignoring it"
                )

    expand_on_completion = False
    if "expandOnCompletion" in namespace:
        raw = namespace["expandOnCompletion"]
        if isinstance(raw, bool):
            expand_on_completion = raw
        else:
            warnings.append(
                f"`expandOnCompletion` must be true or false, not {_json_type(raw)}; "
                "ignoring it (snippets are inserted as markers)"
            )

    snippets: list[Snippet] = []
    if "snippets" in namespace:
        table = namespace["snippets"]
        if not isinstance(table, dict):
            warnings.append(
                f"`snippets` must be an object of name to text, not {_json_type(table)}; "
                "ignoring it"
            )
        else:
            skipped: list[str] = []
            for name, value in table.items():
                if not is_valid_name(name):
                    skipped.append(f"{json.dumps(name, ensure_ascii=False)} (invalid name)")
                elif not isinstance(value, str) or value == "":
                    skipped.append(
                        f"{json.dumps(name, ensure_ascii=False)} (value must be a non-empty string)"
                    )
                else:
                    source = provenance.get(name, "")
                    snippets.append(Snippet(name=name, value=value, source=source))
            if skipped:
                label = "entry" if len(skipped) == 1 else "entries"
                warnings.append(f"ignored {len(skipped)} snippet {label}: {', '.join(skipped)}")
    snippets.sort(key=lambda s: s.name)
    return snippets, shortcut, expand_on_completion


# --------------------------------------------------------------------------- schema


def settings_json_schema() -> dict[str, object]:
    """JSON schema of a settings file's ``piSimpleSnippets`` key, for editors."""
    name = {"type": "string", "pattern": r"^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$"}
    namespace = {
        "type": "object",
        "description": "pi-simple-snippets: %name prompt snippets.",
        "properties": {
            "snippets": {
                "type": "object",
                "description": "Snippet name to text. Type %name in a prompt to use one.",
                "propertyNames": name,
                "additionalProperties": {"type": "string", "minLength": 1},
            },
            "shortcut": {
                "type": "string",
                "description": 'Key that types "%" and opens the list, e.g. "ctrl+shift+s": '
                "one or more of ctrl, shift, alt, super, then a key.",
            },
            "expandOnCompletion": {
                "type": "boolean",
                "default": False,
                "description": "Accepting a completion inserts the snippet's text, not %name.",
            },
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Pi settings (piSimpleSnippets)",
        "type": "object",
        "properties": {SETTINGS_KEY: namespace},
    }
