"""One left-to-right expansion pass over a whole prompt.

Rules: docs/grammar.md, "Expansion: one pass, no re-scan". Values are inserted literally and
never re-scanned, so a value that mentions another marker stays text; unknown markers
stay exactly as typed; ``%%name`` at a boundary yields the literal ``%name``.

How the pass stays fast on any text (it must beat Pi's own JavaScript pass, whose regex
engine compiles to machine code): the work per marker is done inside the regex engine
and by bulk operations over lists, not by Python statements per ``%``.

- The text is cut into windows after separators (``_WINDOWS`` of them), so the lists of
  one split stay a fraction of the text: memory is a few times the text whatever the
  number of markers. A cut after a separator changes no boundary (it is one), and no
  marker spans a separator. Each window is ``re.split`` by one of two patterns of the
  snippet table (``_Patterns``, made when a text first needs them and kept with a
  generation's values, ``SnippetTable``), into the text between the markers and each
  marker's captures, and one ``join`` makes the window's result.
- Both patterns find a ``%`` at a boundary: their lookbehinds (``_BOUNDARY``) hold the
  complete list of separators (``grammar.SEPARATORS``) and check runs of up to two
  wrappers; a longer run sets a group, and its boundary is checked outside the pattern
  (``_at_boundary``). A ``%`` glued to a letter (``x%a``, ``é%a``, ``50%``) or after a
  wrapper run that follows anything but a boundary (``x(%a``) is turned down in the engine.
- The *names* pattern (``_names_pattern``) takes an escape (``%%`` and the first character
  of its name) or any name whose first characters a known name could start with, and
  ``_Lookup`` gives each captured ``%name`` its value, an escape its ``%name``, and
  anything else (an unknown name) itself, in one C-level call for the window. Its cost
  per marker is the lowest; its weakness is a text full of unknown names (printf formats,
  ``%name`` typed with a suffix), each of which it takes and looks up.
- The *trie* pattern (``_trie_pattern``) finds only what the table can replace: the name
  is matched against a trie of the table's names (``_trie``) and unknown names are turned
  down inside the engine; or, past ``_MOST_TRIE_NAMES`` names (a trie that large takes
  long to compile) or with a name over ``_LONGEST_TRIE_NAME`` characters, against the
  pairs of first characters the names start with, the lookup deciding the rest. Walking
  the trie costs more per known name; it is compiled when a text first takes it.
- A window is expanded by the names pattern, except after a sample window (one window
  with a marker in ``_SAMPLE``, the first included, always by the names pattern) in which
  more than a quarter of what it took were unknown names: then by the trie pattern, until
  the next sample. Either way the text is the same; only the cost differs.
- A window with a long run of name characters, ``%`` and wrappers (where no cut may fall)
  takes the plain scan: each candidate ``%`` of ``MARKER_CANDIDATE_RE`` checked with
  ``is_boundary_before`` (``marker_spans``).

What changed (``Expansion.replacements``) is not stored per marker but produced again on
demand by that plain scan, which also counts it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, count, repeat
from operator import countOf, is_, itemgetter
from typing import Any, Final, NamedTuple, overload

from pi_snippets_lsp.core.grammar import (
    COMMON_SEPARATORS,
    MARKER_CANDIDATE_RE,
    SEPARATORS,
    TRIGGER,
    WRAPPERS,
    is_boundary_before,
    is_valid_name,
)

#: A text is cut into about this many windows (each at least ``_SMALLEST_WINDOW``
#: characters): the lists one split makes stay a small fraction of the text.
_WINDOWS: Final = 64  # pragma: no mutate (a cost choice: any size gives the same text)
_SMALLEST_WINDOW: Final = 256  # pragma: no mutate (a cost choice)
#: One window with a marker in this many (the first included) is a sample: expanded by
#: the names pattern, it tells which pattern the windows up to the next sample take.
_SAMPLE: Final = 64  # pragma: no mutate (a cost choice: either pattern gives the same text)
#: Up to this many valid names, the trie pattern holds them all (unknown names are turned
#: down inside the regex engine); compiling it costs ~25 ms per 1,000 names.
_MOST_TRIE_NAMES: Final = 2000  # pragma: no mutate (a cost choice; both patterns agree)
#: ... and none longer than this: each character of a name can nest a group, and the
#: ``re`` compiler recurses once per nesting level.
_LONGEST_TRIE_NAME: Final = 100  # pragma: no mutate (a limit with room: 300 compiles)

_W: Final = re.escape(WRAPPERS)
_S: Final = re.escape(SEPARATORS)
#: Right after the ``%``: the character before it is a separator, or there is none, or
#: it ends a run of one or two wrappers with a separator (or nothing) before it; or it
#: ends a longer run, and the group is the wrapper third from the ``%`` (the run's
#: boundary is checked outside the pattern then). Anything else before the ``%`` (a
#: letter, a digit, ``50%``, ``é%``, ``x(%``) is turned down here.
_BOUNDARY: Final = (
    rf"(?<![^{_S}{_W}]%)"
    rf"(?>(?<![{_W}]%)|(?<=[{_S}][{_W}]%)|(?<=\A[{_W}]%)"
    rf"|(?<=[{_S}][{_W}][{_W}]%)|(?<=\A[{_W}][{_W}]%)|(?<=([{_W}])[{_W}][{_W}]%))"
)
#: An escape: its second ``%`` and the first character of its name (what it becomes is
#: just that: the first ``%`` goes, the rest stays as typed).
_ESCAPE: Final = "%[a-z0-9]"
#: ``grammar.NAME_PATTERN``, possessive: the same maximal name, no backtracking.
_NAME: Final = r"[a-z0-9]++(?:[._-]++[a-z0-9]++)*+"
#: After a name: nothing that would make the name longer (``%use-mcpx``, ``%a.b``).
_NAME_ENDS: Final = r"(?![._-]*+[a-z0-9])"
#: The rest of a name after its first characters: the longest run of name characters,
#: given back to its last letter or digit (``%a.`` is the name ``a`` and a period).
_NAME_REST: Final = r"[a-z0-9._-]*(?<=[a-z0-9])"
#: Where a window may end: after a character no marker holds (no name character, no
#: ``%``), so no marker spans the cut, and which is no wrapper: the next window starts
#: with it, for the lookbehinds, and at its start ``\A`` must mean the text's start.
_CUT: Final = re.compile(rf"[^a-z0-9._%\-{_W}]")
#: A window longer than this many times its step (a long run of name characters, ``%``
#: and wrappers, where no cut is allowed) takes the plain scan: what one split would
#: keep of such a run is not bounded by the step.
_LONGEST_WINDOW: Final = 4  # pragma: no mutate (a cost choice)
_SEPARATOR_SET: Final = frozenset(SEPARATORS)
#: What each escape's capture (``%%a``) becomes in ``_Lookup``.
_ESCAPES: Final = {
    TRIGGER + TRIGGER + c: TRIGGER + c for c in "abcdefghijklmnopqrstuvwxyz0123456789"
}


_Node = dict[str, "_Node"]
_Get = Callable[..., "str | None"]


def _trie(names: Sequence[str]) -> str:
    """A pattern that matches exactly the given names (a trie: shared prefixes once)."""
    root: _Node = {}
    for name in names:
        node = root
        for char in name:
            node = node.setdefault(char, {})
        node[""] = {}  # pragma: no mutate (only the key matters: a name ends here)

    def emit(node: _Node) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        # One branch needs no group (a group would match the same).
        grouped = "(?:" + "|".join(branches) + ")"
        body = branches[0] if len(branches) == 1 else grouped  # pragma: no mutate
        return f"(?:{body}|)" if "" in node else body

    return emit(root)


def _first_pairs(names: Sequence[str]) -> str:
    """A lookahead pattern for the first two characters the names start with (a name of
    one character: that character, followed by anything)."""
    seconds: dict[str, set[str]] = {}
    for name in names:
        seconds.setdefault(name[0], set()).add(name[1:2])
    branches = []
    for first, following in sorted(seconds.items()):
        if "" in following:
            branches.append(re.escape(first))
        else:
            following_class = re.escape("".join(sorted(following)))  # pragma: no mutate
            branches.append(re.escape(first) + "[" + following_class + "]")
    return "(?=" + "|".join(branches) + ")"


def _starts(names: Sequence[str]) -> str:
    """A pattern for the first characters of a name the names could be: one of their
    first characters, then (unless one is a single character) one of their second ones.

    A superset of the names' starts (``ab`` and ``cd`` let ``ad`` through): a name it lets
    through is looked up, so it only saves the lookup of names no known one starts like
    (``%s``, ``%20``, ``%Name``), inside the regex engine."""
    firsts = re.escape("".join(sorted({name[0] for name in names})))  # pragma: no mutate
    if any(len(name) == 1 for name in names):
        return f"[{firsts}]"
    seconds = re.escape("".join(sorted({name[1] for name in names})))  # pragma: no mutate
    return f"[{firsts}][{seconds}]"


class _Compiled(NamedTuple):
    """The trie pattern for a table, and how to read what it finds."""

    pattern: re.Pattern[str]
    #: It finds known names only (a trie), not some unknown ones too (first pairs).
    exact: bool
    #: Some key starts with ``%``, as an escape's capture does: look up valid names only.
    clash: bool


def _trie_pattern(names: frozenset[str]) -> _Compiled:
    """The trie pattern for a table with these names.

    ``%`` at a boundary (``_BOUNDARY``; group 1 set after a run of three wrappers or
    more), then group 2: an escape's ``%`` and the first character of its name (the
    escape becomes just that: its first ``%`` goes, the rest stays as typed), or a name.
    """
    valid = sorted(name for name in names if is_valid_name(name))
    longest = max(map(len, valid), default=0)  # pragma: no mutate (no name: any length fits)
    exact = len(valid) <= _MOST_TRIE_NAMES and longest <= _LONGEST_TRIE_NAME
    if not valid:
        known = "(?!)"
    elif exact:
        known = _trie(valid) + _NAME_ENDS
    else:
        known = _first_pairs(valid) + _NAME
    clash = any(name.startswith(TRIGGER) for name in names)
    return _Compiled(re.compile(rf"%{_BOUNDARY}({_ESCAPE}|{known})"), exact, clash)


def _names_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """The names pattern for a table with these names.

    Group 1: the ``%`` at a boundary (``_BOUNDARY``; group 2 set after a run of three
    wrappers or more) and an escape's ``%`` with the first character of its name, or a
    whole name whose first characters a known name could start with (``_starts``).
    """
    valid = [name for name in names if is_valid_name(name)]
    # No name: nothing to take but escapes (what it took more would be given back as typed).
    name = _starts(valid) + _NAME_REST if valid else "(?!)"  # pragma: no mutate
    return re.compile(rf"(%{_BOUNDARY}(?:{_ESCAPE}|{name}))")


class _Patterns:
    """The two patterns of a table with these names: the names pattern, made at once, and
    the trie pattern, compiled when a text first takes it."""

    __slots__ = ("_trie", "names", "names_pattern")

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.names_pattern = _names_pattern(names)
        self._trie: _Compiled | None = None

    @property
    def trie(self) -> _Compiled:
        """``_trie_pattern`` for these names, made once."""
        if self._trie is None:
            self._trie = _trie_pattern(self.names)
        return self._trie


@lru_cache(maxsize=16)
def _patterns(names: frozenset[str]) -> _Patterns:
    return _Patterns(names)


class _Lookup(dict[str, str]):
    """A captured marker -> its new text: ``%name`` -> the snippet's value (``_lookup``),
    an escape's ``%%a`` -> ``%a``, anything else -> itself (so an unknown name stays as
    typed: ``str`` of a string is that string, without a Python-level call)."""

    __slots__ = ()
    __missing__ = str


def _lookup(snippets: Mapping[str, str]) -> _Lookup:
    """``_Lookup`` of a table. Every key is put under ``%key``: a key that is no name is
    never captured (a capture is ``%`` and a valid name), except ``%a``, which would be an
    escape's capture: the escapes are put last, over it."""
    lookup = _Lookup({TRIGGER + name: value for name, value in snippets.items()})
    lookup.update(_ESCAPES)
    return lookup


class _Table(NamedTuple):
    """What the pass needs of a table: its patterns and its lookup."""

    patterns: _Patterns
    lookup: _Lookup


class SnippetTable(dict[str, str]):
    """Snippet name -> value, with the pass's patterns and lookup for these names and
    values, built when a text first needs them. A generation's values (``Config.values``):
    never changed after it is made, so they are made once for all the texts it expands."""

    __slots__ = ("_table",)

    def __init__(self, snippets: Mapping[str, str] | None = None) -> None:
        super().__init__(snippets or {})
        self._table: _Table | None = None

    @property
    def table(self) -> _Table:
        """``_patterns`` and ``_lookup`` of this table, made once."""
        if self._table is None:
            self._table = _Table(_patterns(frozenset(self)), _lookup(self))
        return self._table


class _Last(NamedTuple):
    """The plain mapping expanded last, as it was: its keys and values, each the very
    object it held, and what the pass made of them."""

    keys: tuple[str, ...]
    values: tuple[str, ...]
    table: _Table


#: A one-entry cache for plain mappings (a caller that passes the same ``dict`` for
#: every text); its one item is replaced whole, so threads see one entry or the other.
_last: list[_Last | None] = [None]


def _table_of(snippets: Mapping[str, str]) -> _Table:
    """The pass's patterns and lookup for ``snippets``.

    A plain mapping that holds, in the same order, the very key and value objects of the
    last one is that mapping unchanged (the cache holds those objects, so none of them can
    have been freed and its address reused): its table is used again.
    """
    if isinstance(snippets, SnippetTable):
        return snippets.table
    last = _last[0]
    if (
        last is not None
        and len(last.keys) == len(snippets)
        and all(map(is_, last.keys, snippets))
        and all(map(is_, last.values, snippets.values()))
    ):
        return last.table
    table = _Table(_patterns(frozenset(snippets)), _lookup(snippets))
    _last[0] = _Last(tuple(snippets), tuple(snippets.values()), table)
    return table


@dataclass(frozen=True, slots=True)
class Replacement:
    """One marker that changed: ``text[start:end]`` (code points) became ``new_text``."""

    start: int
    end: int
    new_text: str


def marker_spans(
    text: str, snippets: Mapping[str, str], start: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, str]]:
    """Every marker of ``text[start:end]`` that expands, left to right: (start, end, new
    text), the plain way: each candidate ``%`` of ``MARKER_CANDIDATE_RE``, its name looked
    up, its boundary checked backwards.

    ``start`` is the marker's ``%``; the boundary, the wrappers and the trailing
    punctuation are kept as typed, so only ``%name`` or ``%%name`` is replaced.
    """
    # A separator right before the ``%`` is a boundary (no separator is a wrapper); only
    # other characters need the whole test.
    separators = COMMON_SEPARATORS
    for match in MARKER_CANDIDATE_RE.finditer(text, start, len(text) if end is None else end):
        escape, name = match.groups()
        if escape:
            new_text = TRIGGER + name
        else:
            value = snippets.get(name)
            if value is None:
                continue
            new_text = value
        found, after = match.span()
        if not found or text[found - 1] in separators or is_boundary_before(text, found):
            yield found, after, new_text


class Replacements(Sequence[Replacement]):
    """What one pass replaced, in text order, produced and counted on demand.

    Storing a ``Replacement`` per marker would cost some 50 bytes each, far more than a
    marker's own characters; instead the scan runs again over the original text and the
    mapping ``expand`` was given (a generation's values never change). A mapping whose
    names have changed since cannot be replayed: the names the pass saw are kept (the
    pattern cache holds them anyway). Compares equal to any sequence of the same
    replacements, a tuple included.
    """

    __slots__ = ("_count", "_items", "_names", "_snippets", "_text")

    def __init__(self, text: str, snippets: Mapping[str, str], names: frozenset[str]) -> None:
        self._text = text
        self._snippets = snippets
        self._names = names
        self._count: int | None = None
        self._items: tuple[Replacement, ...] | None = None

    def __len__(self) -> int:
        if self._count is None:
            self._count = sum(1 for _ in self)
        return self._count

    def __iter__(self) -> Iterator[Replacement]:
        if self._items is not None:
            yield from self._items
            return
        if frozenset(self._snippets) != self._names:
            raise RuntimeError("the snippets mapping changed after expand(); cannot replay it")
        for start, end, new_text in marker_spans(self._text, self._snippets):
            yield Replacement(start, end, new_text)

    @overload
    def __getitem__(self, index: int) -> Replacement: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Replacement]: ...
    def __getitem__(self, index: int | slice) -> Replacement | Sequence[Replacement]:
        if self._items is None:
            self._items = tuple(self)
        return self._items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Replacements | tuple | list):
            return list(self) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Replacements({list(self)!r})"


@dataclass(frozen=True, slots=True)
class Expansion:
    """The result of one pass: the new text, whether it changed, and what changed."""

    text: str
    changed: bool
    replacements: Sequence[Replacement] = ()


def _plain_window(text: str, snippets: Mapping[str, str], start: int, end: int) -> str:
    """``text[start:end]`` expanded the plain way (``marker_spans``)."""
    pieces: list[str] = []
    last = start
    for found, after, new_text in marker_spans(text, snippets, start, end):
        pieces += (text[last:found], new_text)
        last = after
    pieces.append(text[last:end])
    return "".join(pieces)


def _at_boundary(before: str, index: int) -> bool:
    """Whether the wrappers that end ``before`` (the text between candidate ``index - 1``
    and candidate ``index`` of a window) start at a boundary."""
    rest = before.rstrip(WRAPPERS)
    if rest:
        return rest[-1] in _SEPARATOR_SET
    # The run fills the text since the previous candidate, whose name ends in a letter or
    # a digit: no boundary. Or it goes back to the window's start, which is then the
    # text's (a later window starts with the character before it, which is no wrapper).
    return index == 0


def _by_names(parts: list[str], lookup: _Lookup, sample: bool) -> bool:
    """``parts`` (a names pattern's split of a window) made the window's pieces, in
    place: each marker's new text, no group. For a sample window, returns whether more
    than a quarter of what it took were unknown names (``_SAMPLE``)."""
    captured = parts[1::3]
    found = len(captured)
    # One C-level call looks them all up (``itemgetter`` of one key gives one item).
    new_texts = itemgetter(*captured)(lookup) if found > 1 else (lookup[captured[0]],)
    # An unknown name's new text is its capture itself (``_Lookup``).
    unknown = sample and countOf(map(is_, new_texts, captured), True) * 4 > found
    wrappers = parts[2::3]
    if countOf(wrappers, None) != found:  # after three wrappers or more
        new_texts = list(new_texts)
        for index in compress(count(), wrappers):
            if not _at_boundary(parts[3 * index], index):
                new_texts[index] = captured[index]
    parts[1::3] = new_texts
    del parts[2::3]
    return unknown


def _trie_get(snippets: Mapping[str, str], compiled: _Compiled) -> _Get:
    """How the trie path looks a capture up: in ``snippets``, or, when a key starts with
    ``%`` (as an escape's capture does), in its valid names only."""
    if compiled.clash:
        return {name: value for name, value in snippets.items() if is_valid_name(name)}.get
    return snippets.get


def _by_trie(parts: list[str], compiled: _Compiled, get: _Get) -> None:
    """``parts`` (the trie pattern's split of a window) made the window's pieces, in place."""
    captured = parts[2::3]
    # An escape's capture (``%a``) is no name: ``get`` gives it back, and it is what
    # the escape ``%%a`` becomes. Past the trie's size an unknown name is None here, until
    # it is given its text below.
    new_texts: list[Any] = (
        list(map(get, captured, captured)) if compiled.exact else list(map(get, captured))
    )
    # After three wrappers or more (the check holds for any candidate; only these need it).
    # This path never takes the text's first window (a sample), so a run of wrappers that
    # reaches back to the window's start has the window's first character (no wrapper)
    # before it, and ``index`` never decides.
    for index in compress(count(), parts[1::3]):  # pragma: no mutate
        before = parts[3 * index]
        if not _at_boundary(before, index):  # pragma: no mutate (see above)
            new_texts[index] = TRIGGER + captured[index]
    if not compiled.exact:
        for index in compress(count(), map(is_, new_texts, repeat(None))):
            typed = captured[index]
            # An escape's capture is what it becomes; an unknown name stays as typed.
            new_texts[index] = typed if typed[0] == TRIGGER else TRIGGER + typed
    parts[2::3] = new_texts
    del parts[1::3]


def expand(text: str, snippets: Mapping[str, str]) -> Expansion:
    """Expand every ``%name`` marker of ``text`` with ``snippets`` (name -> value).

    With nothing configured the text is returned unchanged, ``%%name`` included, as the
    original extension does: it has no work to do and touches nothing.
    """
    if not snippets or TRIGGER not in text:
        return Expansion(text=text, changed=False)
    patterns, lookup = _table_of(snippets)
    size = len(text)
    step = max(_SMALLEST_WINDOW, size // _WINDOWS)  # pragma: no mutate (a cost choice)
    windows: list[str] = []
    # Nothing taken in any window: the text itself, and no replacements to replay.
    matched = False  # pragma: no mutate (an early return of the same result)
    by_trie = False  # pragma: no mutate (the first sample decides before it counts)
    trie_get: _Get | None = None
    start = 0
    # Windows with a marker so far: one in ``_SAMPLE`` (the first included) is a sample.
    windows_with_markers = 0
    while start < size:
        cut = _CUT.search(text, start + step)
        end = size if cut is None else cut.end()
        if end - start > _LONGEST_WINDOW * step:  # pragma: no mutate (either way: same text)
            windows.append(_plain_window(text, snippets, start, end))
            matched = True
            start = end
            continue
        lead = 1 if start else 0  # the character before the window, for the lookbehinds
        # The whole text is no copy; a window without a candidate needs no work.
        window = text if end - start == size else text[start - lead : end]  # pragma: no mutate
        start = end
        sample = not windows_with_markers % _SAMPLE  # pragma: no mutate (a cost choice)
        if by_trie and not sample:
            compiled = patterns.trie
            parts = compiled.pattern.split(window)
            if len(parts) == 1:  # pragma: no mutate
                windows.append(parts[0][lead:])
                continue
            if trie_get is None:
                trie_get = _trie_get(snippets, compiled)
            _by_trie(parts, compiled, trie_get)
        else:
            parts = patterns.names_pattern.split(window)
            if len(parts) == 1:  # pragma: no mutate
                windows.append(parts[0][lead:])
                continue
            unknown = _by_names(parts, lookup, sample)
            if sample:
                by_trie = unknown
        windows_with_markers += 1  # pragma: no mutate (a cost choice: which are samples)
        matched = True
        if lead:
            parts[0] = parts[0][1:]
        windows.append("".join(parts))
    if not matched:
        return Expansion(text=text, changed=False)
    expanded = windows[0] if len(windows) == 1 else "".join(windows)  # pragma: no mutate (a copy)
    del windows
    changed = expanded != text
    return Expansion(
        text=expanded if changed else text,
        changed=changed,
        replacements=Replacements(text, snippets, patterns.names),
    )
