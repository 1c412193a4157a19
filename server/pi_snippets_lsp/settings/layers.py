"""Settings files as layers: where they are, reading them the way Pi does, one load.

Rules: docs/configuration.md ("Settings", "Layers", "Reading a settings file").

A file that stops parsing, or is found empty mid-save, keeps the content it last had
(``SettingsFiles``), so an editor's intermediate save never wipes the snippets. The
merge and validation of what was read are ``core.config``'s.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pi_snippets_lsp.core.config import (
    Config,
    Layer,
    client_layer,
    not_an_object,
    plain_json,
    validate_layers,
)
from pi_snippets_lsp.core.documents import line_starts
from pi_snippets_lsp.core.grammar import JS_WHITESPACE
from pi_snippets_lsp.settings import jsontree
from pi_snippets_lsp.settings.files import (
    SettingsFileError,
    is_regular_file,
    read_settings_bytes,
    same_file,
)
from pi_snippets_lsp.settings.jsontree import BOM, JsonParseError

PROJECT_SETTINGS: Final = Path(".pi") / "settings.json"
#: The ``source`` of snippets given as ``options`` to :func:`load_request`.
OPTIONS_SOURCE: Final = "options"


def settings_text_is_empty(text: str) -> bool:
    """An empty or blank file (after a BOM) holds no settings: it parses as ``{}``.
    ``SettingsFiles.read`` reports it (an editor's truncate-then-write save read in
    between looks like this) and keeps the file's last good content.

    Blank is JavaScript's ``trim()``, the way Pi tests the file before ``JSON.parse``.
    """
    return text.removeprefix(BOM).strip(JS_WHITESPACE) == ""


def parse_settings_text(text: str, path: str) -> dict[str, object]:
    """Parse a settings file the way Pi does: JSON after a leading BOM, no comments.

    An empty file is ``{}``. JavaScript's ``JSON.parse`` rejects ``NaN`` and
    ``Infinity``, so we do too, and reads any integer, however long, so we do too.

    ``json.loads`` is the fast path (a reload of thousands of snippets must be quick).
    When it refuses, :mod:`.jsontree` (exactly ``JSON.parse``, and iterative) has the last
    word: it names the error and its position in the words the settings diagnostics use,
    or parses what ``json.loads`` gives up on (nesting deeper than Python recursion).
    """
    text = text.removeprefix(BOM)
    if settings_text_is_empty(text):
        return {}
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_int=jsontree.decode_number)
    except (ValueError, RecursionError):
        try:
            value = jsontree.parse(text).value
        except JsonParseError as error:
            where = line_and_column(text, error.offset)
            raise SettingsFileError(
                f"{path} is not valid JSON: {error.message} at {where}"
            ) from None
    if not isinstance(value, dict):
        raise SettingsFileError(f"{path} {not_an_object(value)}")
    return value


def _reject_constant(name: str) -> object:
    """Makes ``json.loads`` refuse ``NaN`` and ``Infinity``; ``jsontree`` then names the
    error, so this message is never shown."""
    raise ValueError(name)  # pragma: no mutate (the message is never shown)


def line_and_column(text: str, offset: int) -> str:
    """``line L column C`` of a code-point offset, both counted from 1 as editors show them.

    Lines end at ``\n``, ``\r\n`` or ``\r``, as in the editor; columns count code points.
    """
    starts = line_starts(text)
    line = bisect_right(starts, offset) - 1
    return f"line {line + 1} column {offset - starts[line] + 1}"


@dataclass
class SettingsFiles:
    """Reads settings files and remembers the last good content of each.

    A file that stops parsing, or is found empty (a save that truncates, then writes,
    read in between), keeps the content it last had, so an editor's intermediate save
    never wipes the snippets; at first read it counts as ``{}``. Either way the problem
    is reported.
    """

    last_good: dict[str, dict[str, object]] = field(default_factory=dict)
    #: Files whose last read found nothing usable (a save may be in progress).
    unusable: set[str] = field(default_factory=set)
    #: Files whose last read failed in a way that may pass (``SettingsFileError.retry``).
    failed: set[str] = field(default_factory=set)

    def read(self, path: Path) -> tuple[dict[str, object] | None, str | None]:
        """(settings or None when absent, warning or None)."""
        key = str(path)
        self.unusable.discard(key)
        self.failed.discard(key)
        try:
            data = read_settings_bytes(path)
        except SettingsFileError as exc:
            if exc.retry:
                self.failed.add(key)
            return self._fallback(key, str(exc))
        if data is None:
            self.last_good.pop(key, None)
            return None, None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._fallback(key, f"{key} is not UTF-8 text (byte {exc.start})")
        if settings_text_is_empty(text):
            return self._fallback(key, f"{key} is empty")
        try:
            settings = parse_settings_text(text, key)
        except SettingsFileError as exc:
            return self._fallback(key, str(exc))
        self.last_good[key] = settings
        return settings, None

    def _fallback(self, key: str, problem: str) -> tuple[dict[str, object], str]:
        self.unusable.add(key)
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
    agent_dir = environ.get("PI_CODING_AGENT_DIR")
    if agent_dir:
        return Path(agent_dir).expanduser() / "settings.json"
    return Path("~/.pi/agent/settings.json").expanduser()


def project_settings_path(folder: str | os.PathLike[str]) -> Path:
    return Path(folder) / PROJECT_SETTINGS


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

    @property
    def files(self) -> list[Path]:
        """Every settings file this request may read, present or not: the user file and,
        for a trusted project, its ``.pi/settings.json``. What a reloader watches."""
        files = [self.user_file]
        if self.project_folder is not None and self.trust_project:
            files.append(project_settings_path(self.project_folder))
        return files


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
            if not same_file(project_file, request.user_file):
                add_file(project_file)
        elif is_regular_file(project_file):
            untrusted.append(str(project_file))
    layers.extend(request.client_layers)
    return validate_layers(layers, problems, sources, untrusted)


def load_request(
    *,
    settings: str | os.PathLike[str] | None = None,
    project: str | os.PathLike[str] | None = None,
    trust_project: bool = False,
    options: Mapping[str, object] | None = None,
) -> LoadRequest:
    """Where ``load_config`` reads from, for the same arguments (see ``load_config``).

    For callers that load repeatedly and want the server's reload behaviour: pass the
    request to ``load_config`` with one ``SettingsFiles`` kept across loads, so a
    half-written save keeps the file's last good content, and watch ``request.files``.
    """
    layers: list[Layer] = []
    if options is not None:
        layer = client_layer(OPTIONS_SOURCE, plain_json(options))
        if layer is not None:
            layers.append(layer)
    folder = Path(os.path.normpath(os.fspath(project))) if project is not None else None
    return LoadRequest(
        user_file=user_settings_path(override=settings),
        user_file_required=settings is not None,
        project_folder=folder,
        trust_project=trust_project,
        client_layers=layers,
    )
