"""The generation: Pi's merge of settings layers, validation and warnings, on plain values.

Rules: docs/configuration.md ("Layers", "Validation and warnings").

Layers, lowest first: the user settings file, the project settings file (only for a
trusted project, as Pi reads it only then), and the client's options. They are merged
the Pi way and only then validated, so every problem of one load is found in one place
and reported as one warning. A malformed part never takes the valid parts with it.
Reading the files is ``settings.layers``'s job; this module sees only their values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from pi_snippets_lsp.core.expansion import SnippetTable
from pi_snippets_lsp.core.grammar import JS_WHITESPACE, NAME_PATTERN, is_valid_name
from pi_snippets_lsp.core.snippet import Snippet

if TYPE_CHECKING:
    from pi_snippets_lsp.core.ranking import FuzzyIndex

SETTINGS_KEY: Final = "piSimpleSnippets"
MESSAGE_PREFIX: Final = "pi-simple-snippets:"
#: Where a JSON value sits: the keys and indexes from the document's root.
JsonPath = tuple[str | int, ...]

MODIFIERS: Final = frozenset({"ctrl", "shift", "alt", "super"})
NAMED_KEYS: Final = frozenset(
    {
        "escape", "esc", "enter", "return", "tab", "space", "backspace", "delete",
        "insert", "clear", "home", "end", "pageup", "pagedown", "up", "down", "left",
        "right", *(f"f{n}" for n in range(1, 13)),
    }
)  # fmt: skip


@dataclass(frozen=True)
class Config:
    """One generation: the validated configuration of one load, immutable.

    A plain frozen dataclass: it is built once per load from already validated parts,
    and holds tens of thousands of snippets, so it costs no model validation (and no
    model class to build at start-up).
    """

    snippets: tuple[Snippet, ...] = ()
    shortcut: str | None = None
    expand_on_completion: bool = False
    warnings: tuple[str, ...] = ()
    #: Settings files that were read for this generation.
    sources: tuple[str, ...] = ()
    #: Project settings files that exist but were skipped because the project is untrusted.
    untrusted_project_files: tuple[str, ...] = ()
    #: Whether any layer mentioned the namespace at all.
    namespace_present: bool = False

    _values: SnippetTable = field(init=False, repr=False, compare=False)
    _name_index: FuzzyIndex | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Derived once; frozen dataclasses set their own fields through object.
        object.__setattr__(self, "_values", SnippetTable({s.name: s.value for s in self.snippets}))
        object.__setattr__(self, "_name_index", None)

    @property
    def values(self) -> Mapping[str, str]:
        """Snippet name -> text, for expansion (a ``SnippetTable``: the pass's pattern for
        these names is made once per generation)."""
        return self._values

    @property
    def name_index(self) -> FuzzyIndex:
        """Pi's fuzzy filter over the snippet names, built once, when first asked for
        (completion on every keystroke; a CLI expansion never needs it)."""
        if self._name_index is None:
            # Imported here: a process that never ranks (``expand`` from the shell) does
            # not load the ranking at all.
            from pi_snippets_lsp.core.ranking import FuzzyIndex  # noqa: PLC0415

            object.__setattr__(self, "_name_index", FuzzyIndex([s.name for s in self.snippets]))
        assert self._name_index is not None
        return self._name_index

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
    if len(parts) < 2:  # an empty part is neither a modifier nor a key: refused below
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
    (arrays, primitives, ``null``) replaces. Keys absent from ``override`` are kept.

    Written with a stack, not recursion: a settings file may nest deeper than Python's
    recursion limit (``JSON.parse`` takes it), and merging it must not crash the load.
    Neither input is modified; merged objects are fresh dicts.
    """
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return override
    merged: dict[str, object] = dict(base)
    pending: list[tuple[dict[str, object], dict[str, object]]] = [(merged, override)]
    while pending:
        target, source = pending.pop()
        for key, value in source.items():
            current = target.get(key)
            if key in target and isinstance(current, dict) and isinstance(value, dict):
                child: dict[str, object] = dict(current)
                target[key] = child
                pending.append((child, value))
            else:
                target[key] = value
    return merged


def not_an_object(value: object) -> str:
    """Why a settings file whose content is ``value`` (not an object) holds no settings."""
    return f"must hold a JSON object, not {_json_type(value)}"


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
            # The last layer that sets a name defined it; a name no later layer sets
            # again keeps its layer, and one a non-object wiped out is not in the table.
            provenance.update(dict.fromkeys(table, layer.source))

    warnings = list(problems)
    namespace = merged.get(SETTINGS_KEY) if isinstance(merged, dict) else None
    snippets: list[Snippet] = []
    shortcut: str | None = None
    expand_on_completion = False
    if present:
        check = check_namespace(namespace)
        snippets = [
            Snippet._make((name, value, provenance[name])) for name, value in sorted(check.snippets)
        ]
        shortcut = check.shortcut
        expand_on_completion = check.expand_on_completion
        warnings.extend(problem_warnings(check.problems))
    return Config(
        snippets=tuple(snippets),
        shortcut=shortcut,
        expand_on_completion=expand_on_completion,
        warnings=tuple(warnings),
        sources=tuple(sources),
        untrusted_project_files=tuple(untrusted),
        namespace_present=present,
    )


# --------------------------------------------------------------------------- validation

#: What a problem is about: the member's key (a snippet name) or its value.
ProblemTarget = Literal["key", "value"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing validation rejects, where it is, and the load warning's words for it.

    ``path`` leads from the settings root to the JSON member concerned, e.g.
    ``("piSimpleSnippets", "snippets", "Bad Name")``, and ``target`` says whether the
    problem is that member's key or its value, so a settings diagnostic can sit on it.
    ``message`` is the load warning this problem would give alone. Skipped snippet
    entries share one load warning; ``entry`` is this entry's part of its list
    (``'"Bad Name" (invalid name)'``), None for any other problem.
    """

    path: JsonPath
    target: ProblemTarget
    message: str
    entry: str | None = None


@dataclass(frozen=True, slots=True)
class NamespaceCheck:
    """What validation makes of one ``piSimpleSnippets`` value.

    ``snippets`` holds the usable entries, ``(name, value)`` in the table's order.
    """

    snippets: tuple[tuple[str, str], ...] = ()
    shortcut: str | None = None
    expand_on_completion: bool = False
    problems: tuple[Problem, ...] = ()


#: Names, one per line, all valid (``_all_usable``).
_VALID_NAME_LINES: Final = re.compile(f"(?:{NAME_PATTERN}\n)*{NAME_PATTERN}")


def _all_usable(table: dict[str, object]) -> bool:
    """Whether every entry of a snippet table is usable: a valid name, a non-empty
    string value. The common case, told at C speed for a table of thousands, so a
    reload validates them without a Python step per entry; any other table is checked
    entry by entry, for its warnings.

    The names are checked as lines of one text; a name holding a line break would split
    into lines that may each be valid, so the line count must be the name count.
    """
    if not table:
        return True
    names = "\n".join(table)
    if names.count("\n") != len(table) - 1 or _VALID_NAME_LINES.fullmatch(names) is None:
        return False
    values = table.values()
    return set(map(type, values)) == {str} and "" not in values


def check_namespace(namespace: object) -> NamespaceCheck:
    """Validate a ``piSimpleSnippets`` value: what is usable, and every problem.

    Rules: docs/configuration.md, "Validation and warnings". Each part fails alone: a
    bad entry is skipped and the others kept, a bad shortcut or ``expandOnCompletion`` is
    ignored and snippets still work; only a namespace that is not an object discards
    everything. The problems come in the order of the load warning.
    """
    root: JsonPath = (SETTINGS_KEY,)
    if not isinstance(namespace, dict):
        return NamespaceCheck(
            problems=(
                Problem(
                    root,
                    "value",
                    f'"{SETTINGS_KEY}" must be an object, not {_json_type(namespace)}; '
                    "ignoring the whole namespace",
                ),
            )
        )

    problems: list[Problem] = []
    shortcut: str | None = None
    if "shortcut" in namespace:
        raw = namespace["shortcut"]
        path = (*root, "shortcut")
        if not isinstance(raw, str):
            problems.append(
                Problem(
                    path,
                    "value",
                    f"`shortcut` must be a string, not {_json_type(raw)}; ignoring it",
                )
            )
        else:
            shortcut = normalize_shortcut(raw)
            if shortcut is None:
                problems.append(
                    Problem(
                        path,
                        "value",
                        f'`shortcut` "{raw}" needs "modifier[+modifier]+key" with at least one '
                        "of ctrl, shift, alt, super and a known key; ignoring it",
                    )
                )

    expand_on_completion = False
    if "expandOnCompletion" in namespace:
        raw = namespace["expandOnCompletion"]
        if isinstance(raw, bool):
            expand_on_completion = raw
        else:
            problems.append(
                Problem(
                    (*root, "expandOnCompletion"),
                    "value",
                    f"`expandOnCompletion` must be true or false, not {_json_type(raw)}; "
                    "ignoring it (snippets are inserted as markers)",
                )
            )

    snippets: list[tuple[str, str]] = []
    if "snippets" in namespace:
        table = namespace["snippets"]
        path = (*root, "snippets")
        if not isinstance(table, dict):
            problems.append(
                Problem(
                    path,
                    "value",
                    f"`snippets` must be an object of name to text, not {_json_type(table)}; "
                    "ignoring it",
                )
            )
        elif _all_usable(table):
            snippets = list(table.items())
        else:
            for name, value in table.items():
                if not is_valid_name(name):
                    problems.append(_skipped((*path, name), "key", "invalid name"))
                elif not isinstance(value, str) or value == "":
                    problems.append(
                        _skipped((*path, name), "value", "value must be a non-empty string")
                    )
                else:
                    snippets.append((name, value))
    return NamespaceCheck(
        snippets=tuple(snippets),
        shortcut=shortcut,
        expand_on_completion=expand_on_completion,
        problems=tuple(problems),
    )


def _skipped(path: JsonPath, target: ProblemTarget, reason: str) -> Problem:
    """A snippet entry skipped for ``reason``; its name is the last key of ``path``."""
    entry = f"{json.dumps(path[-1], ensure_ascii=False)} ({reason})"
    return Problem(path, target, _skipped_warning([entry]), entry)


def _skipped_warning(entries: Sequence[str]) -> str:
    label = "entry" if len(entries) == 1 else "entries"
    return f"ignored {len(entries)} snippet {label}: {', '.join(entries)}"


def problem_warnings(problems: Sequence[Problem]) -> list[str]:
    """The load warnings of ``problems``: one per problem, except that all skipped
    snippet entries share one (``ignored 2 snippet entries: ...``), where the first was."""
    warnings: list[str] = []
    entries = [p.entry for p in problems if p.entry is not None]
    for problem in problems:
        if problem.entry is None:
            warnings.append(problem.message)
        elif entries:
            warnings.append(_skipped_warning(entries))
            entries = []
    return warnings
