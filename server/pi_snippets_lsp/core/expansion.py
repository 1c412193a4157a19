"""One left-to-right expansion pass over a whole prompt.

Rules: docs/grammar.md, "Expansion: one pass, no re-scan". Values are inserted literally and
never re-scanned, so a value that mentions another marker stays text; unknown markers
stay exactly as typed; ``%%name`` at a boundary yields the literal ``%name``.

How the pass stays fast on any text (it must beat Pi's own JavaScript pass, whose regex
engine compiles to machine code): the work per marker is done inside the regex engine
and by bulk operations over lists, not by Python statements per ``%``.

- One pattern per snippet table (``SnippetTable``, built when a text first needs it and
  kept with a generation's values) finds only what the table can replace: an escape, or
  a ``%`` before a *known* name, at a boundary. Unknown names, a ``%`` glued to a letter
  (``x%a``, ``é%a``, ``50%``), and a wrapper run after anything but a boundary
  (``x(%a``) are turned down by the engine itself: its lookbehinds hold the complete
  list of separators (``grammar.SEPARATORS``) and check runs of up to two wrappers; the
  name is matched against a trie of the table's names (``_trie``), or, past
  ``_MOST_TRIE_NAMES`` names (a trie that large takes long to compile) or with a name
  over ``_LONGEST_TRIE_NAME`` characters, against the pairs of first characters the
  names start with, the lookup deciding the rest.
- ``re.split`` gives the text between the markers and each marker's escape and name;
  ``map`` over ``dict.get`` gives each one's new text (its value; an unknown name, past
  the trie's size, its own ``%name``), escapes become their ``%name``, and one ``join``
  makes the window's result.
- The text is cut into windows after separators (``_WINDOWS`` of them), so the lists of
  one split stay a fraction of the text: memory is a few times the text whatever the
  number of markers. A cut after a separator changes no boundary (it is one), and no
  marker spans a separator. A window with a run of three or more wrappers before a ``%``
  (which the lookbehinds cannot see whole) takes the plain scan: each candidate ``%``
  of ``MARKER_CANDIDATE_RE`` checked with ``is_boundary_before`` (``marker_spans``).

What changed (``Expansion.replacements``) is not stored per marker but produced again on
demand by that plain scan, which also checks the fast pass: both must find as many.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, count, repeat
from operator import is_
from typing import Final, NamedTuple, overload

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
#: Up to this many valid names, a table's pattern holds them all (a trie: unknown names
#: are turned down inside the regex engine); compiling it costs ~25 ms per 1,000 names.
_MOST_TRIE_NAMES: Final = 2000  # pragma: no mutate (a cost choice; both patterns agree)
#: ... and none longer than this: each character of a name can nest a group, and the
#: ``re`` compiler recurses once per nesting level.
_LONGEST_TRIE_NAME: Final = 100  # pragma: no mutate (a limit with room: 300 compiles)

_W: Final = re.escape(WRAPPERS)
_S: Final = re.escape(SEPARATORS)
#: Right after the ``%``: the character before it is a separator, or there is none, or
#: it ends a run of one or two wrappers with a separator (or nothing) before it; or it
#: ends a longer run, and group 1 is the wrapper third from the ``%`` (the run's boundary
#: is checked outside the pattern then). Anything else before the ``%`` (a letter, a
#: digit, ``50%``, ``é%``, ``x(%``) is turned down here.
_BOUNDARY: Final = (
    rf"(?<![^{_S}{_W}]%)"
    rf"(?>(?<![{_W}]%)|(?<=[{_S}][{_W}]%)|(?<=\A[{_W}]%)"
    rf"|(?<=[{_S}][{_W}][{_W}]%)|(?<=\A[{_W}][{_W}]%)|(?<=([{_W}])[{_W}][{_W}]%))"
)
#: ``grammar.NAME_PATTERN``, possessive: the same maximal name, no backtracking.
_NAME: Final = r"[a-z0-9]++(?:[._-]++[a-z0-9]++)*+"
#: After a name: nothing that would make the name longer (``%use-mcpx``, ``%a.b``).
_NAME_ENDS: Final = r"(?![._-]*+[a-z0-9])"
#: Where a window may end: after a character no marker holds (no name character, no
#: ``%``), so no marker spans the cut, and which is no wrapper: the next window starts
#: with it, for the lookbehinds, and at its start ``\A`` must mean the text's start. Never
#: between the two characters of a CRLF: each window's line breaks are whole (semantic
#: tokens count the lines window by window, ``marker_pieces``).
_CUT: Final = re.compile(rf"(?!\r\n)[^a-z0-9._%\-{_W}]")
#: A window longer than this many times its step (a long run of name characters, ``%``
#: and wrappers, where no cut is allowed) takes the plain scan: what one split would
#: keep of such a run is not bounded by the step.
_LONGEST_WINDOW: Final = 4  # pragma: no mutate (a cost choice)
_SEPARATOR_SET: Final = frozenset(SEPARATORS)
#: ``marker_pieces``' windows are at most this many characters apart: each costs one
#: split (a few milliseconds that hold the GIL) and a chunk of tokens.
_MOST_PIECES_STEP: Final = 16384
_ESCAPE: Final = TRIGGER + TRIGGER


_Node = dict[str, "_Node"]


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


class _Compiled(NamedTuple):
    """The pass's pattern for a table, and how to read what it finds."""

    pattern: re.Pattern[str]
    #: It finds known names only (a trie), not some unknown ones too (first pairs).
    exact: bool
    #: Some key starts with ``%``, as an escape's capture does: look up valid names only.
    clash: bool


@lru_cache(maxsize=16)
def _pattern(names: frozenset[str]) -> _Compiled:
    """The pass's pattern for a table with these names.

    ``%`` at a boundary (``_BOUNDARY``; group 1 set after a run of three wrappers or
    more), then group 2: an escape's ``%`` and the first character of its name (the
    escape becomes just that: its first ``%`` goes, the rest stays as typed), or a name.
    """
    known, exact = _known(names)
    clash = any(name.startswith(TRIGGER) for name in names)
    return _Compiled(re.compile(rf"%{_BOUNDARY}(%[a-z0-9]|{known})"), exact, clash)


@lru_cache(maxsize=16)
def _marker_pattern(names: frozenset[str]) -> tuple[re.Pattern[str], bool]:
    """``_pattern``, with the whole marker as group 1 (``%name``, or ``%%name`` with
    all its name) and the wrapper of a long run as group 2: what ``marker_pieces`` cuts
    at; and whether it finds known names only."""
    known, exact = _known(names)
    return re.compile(rf"(%{_BOUNDARY}(?:%{_NAME}|{known}))"), exact


def _known(names: frozenset[str]) -> tuple[str, bool]:
    """The part of a table's patterns that matches its names, and whether it matches
    those only (a trie) or lets unknown ones through too (first pairs, for a large
    table: the lookup decides)."""
    valid = sorted(name for name in names if is_valid_name(name))
    longest = max(map(len, valid), default=0)
    exact = len(valid) <= _MOST_TRIE_NAMES and longest <= _LONGEST_TRIE_NAME
    if not valid:
        return "(?!)", exact
    if exact:
        return _trie(valid) + _NAME_ENDS, exact
    return _first_pairs(valid) + _NAME, exact


class SnippetTable(dict[str, str]):
    """Snippet name -> value, with the pass's pattern for these names, built when a text
    first needs it. A generation's values (``Config.values``): never changed after it is
    made, so the pattern is made once for all the texts it expands."""

    __slots__ = ("_compiled", "_marker_compiled")

    def __init__(self, snippets: Mapping[str, str] | None = None) -> None:
        super().__init__(snippets or {})
        self._compiled: _Compiled | None = None
        self._marker_compiled: tuple[re.Pattern[str], bool] | None = None

    @property
    def pattern(self) -> _Compiled:
        """``_pattern`` for these names, made once."""
        if self._compiled is None:
            self._compiled = _pattern(frozenset(self))
        return self._compiled

    @property
    def marker_pattern(self) -> tuple[re.Pattern[str], bool]:
        """``_marker_pattern`` for these names, made once (when a text first needs it)."""
        if self._marker_compiled is None:
            self._marker_compiled = _marker_pattern(frozenset(self))
        return self._marker_compiled


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


def marker_pieces(text: str, snippets: Mapping[str, str]) -> Iterator[tuple[list[str], list[str]]]:
    """The text cut at the markers ``marker_spans`` finds, a window at a time: the window's
    markers as typed (``%name``, ``%%name``), and the text around them, one piece more
    (before the first marker, between each two, after the last). Joined in turn, window
    after window, the pieces are the text.

    For a caller that works on the markers in bulk (semantic tokens: half a million in a
    dense 4 MB prompt), as ``expand`` does: the table's pattern with the whole marker as
    a group (``_marker_pattern``) splits each window, which is cut as ``expand``'s are
    but at most ``_MOST_PIECES_STEP`` characters apart: what one window costs is one
    call that holds the GIL, and a worker thread shares it with the event loop. A window
    where ``expand`` takes the plain scan (a long run of markers and wrappers, or three
    wrappers or more before a ``%``), or where a large table's pattern let an unknown
    name through, is cut at what ``marker_spans`` finds there.
    """
    if not snippets or TRIGGER not in text:
        yield [text], []
        return
    if isinstance(snippets, SnippetTable):
        pattern, exact = snippets.marker_pattern
    else:
        pattern, exact = _marker_pattern(frozenset(snippets))
    step = max(_SMALLEST_WINDOW, min(len(text) // _WINDOWS, _MOST_PIECES_STEP))
    for start, end in _windows(text, step):
        if end - start <= _LONGEST_WINDOW * step:
            lead = 1 if start else 0  # the character before the window, for the lookbehinds
            parts = pattern.split(text[start - lead : end])
            markers = parts[1::3]
            if not any(parts[2::3]) and (exact or _all_known(markers, snippets)):
                between = parts[0::3]
                between[0] = between[0][lead:]
                yield between, markers
                continue
        yield cut_at(text, marker_spans(text, snippets, start, end), start, end)


def _all_known(markers: list[str], snippets: Mapping[str, str]) -> bool:
    """Whether each marker a large table's pattern found is one: an escape, or a
    ``%name`` that names a snippet."""
    return all(marker.startswith(_ESCAPE) or marker[1:] in snippets for marker in markers)


def cut_at(
    text: str, spans: Iterable[tuple[int, int, object]], start: int = 0, end: int | None = None
) -> tuple[list[str], list[str]]:
    """``text[start:end]`` (all of it by default) cut at ``spans`` (in text order, within
    it), as ``marker_pieces`` gives a window: the spans' texts, and the text around them."""
    between: list[str] = []
    markers: list[str] = []
    last = start
    for found, after, _ in spans:
        between.append(text[last:found])
        markers.append(text[found:after])
        last = after
    between.append(text[last:end])
    return between, markers


def _windows(text: str, step: int) -> Iterator[tuple[int, int]]:
    """The text cut into windows (start, end) of about ``step`` characters or more, each
    ending after a character where a cut may fall (``_CUT``)."""
    size = len(text)
    start = 0
    while start < size:
        cut = _CUT.search(text, start + step)
        end = size if cut is None else cut.end()
        yield start, end
        start = end


class Replacements(Sequence[Replacement]):
    """What one pass replaced, in text order, produced on demand.

    Storing a ``Replacement`` per marker would cost some 50 bytes each, far more than a
    marker's own characters; instead the scan runs again over the original text and the
    mapping ``expand`` was given (a generation's values never change). Compares equal to
    any sequence of the same replacements, a tuple included.
    """

    __slots__ = ("_count", "_items", "_snippets", "_text")

    def __init__(self, text: str, snippets: Mapping[str, str], count: int) -> None:
        self._text = text
        self._snippets = snippets
        self._count = count
        self._items: tuple[Replacement, ...] | None = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Replacement]:
        if self._items is not None:
            yield from self._items
            return
        seen = 0
        for start, end, new_text in marker_spans(self._text, self._snippets):
            seen += 1
            yield Replacement(start, end, new_text)
        if seen != self._count:
            raise RuntimeError("the snippets mapping changed after expand(); cannot replay it")

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


def _plain_window(text: str, snippets: Mapping[str, str], start: int, end: int) -> tuple[str, int]:
    """``text[start:end]`` expanded the plain way (``marker_spans``), and its replacements."""
    pieces: list[str] = []
    last = start
    replaced = 0
    for found, after, new_text in marker_spans(text, snippets, start, end):
        pieces += (text[last:found], new_text)
        last = after
        replaced += 1
    pieces.append(text[last:end])
    return "".join(pieces), replaced


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


def expand(text: str, snippets: Mapping[str, str]) -> Expansion:
    """Expand every ``%name`` marker of ``text`` with ``snippets`` (name -> value).

    With nothing configured the text is returned unchanged, ``%%name`` included, as the
    original extension does: it has no work to do and touches nothing.
    """
    if not snippets or TRIGGER not in text:
        return Expansion(text=text, changed=False)
    if isinstance(snippets, SnippetTable):
        pattern, exact, clash = snippets.pattern
    else:
        pattern, exact, clash = _pattern(frozenset(snippets))
    get = snippets.get
    if clash:  # a key no marker can name, which an escape's capture could look up
        get = {name: value for name, value in snippets.items() if is_valid_name(name)}.get
    size = len(text)
    step = max(_SMALLEST_WINDOW, size // _WINDOWS)  # pragma: no mutate (a cost choice)
    windows: list[str] = []
    found = 0
    for start, end in _windows(text, step):
        if end - start > _LONGEST_WINDOW * step:  # pragma: no mutate (either way: same text)
            expanded, replaced = _plain_window(text, snippets, start, end)
            windows.append(expanded)
            found += replaced
            continue
        lead = 1 if start else 0  # the character before the window, for the lookbehinds
        # The whole text is no copy; a window without a candidate needs no work.
        window = text if end - start == size else text[start - lead : end]  # pragma: no mutate
        parts = pattern.split(window)
        if len(parts) == 1:  # pragma: no mutate
            windows.append(parts[0][lead:])
            continue
        captured = parts[2::3]
        # An escape's capture (``%a``) is no name: ``get`` gives it back, and it is what
        # the escape ``%%a`` becomes. Past the trie's size an unknown name is None here.
        new_texts = list(map(get, captured, captured)) if exact else list(map(get, captured))
        kept = 0
        # After three wrappers or more (the check holds for any candidate; only these need it).
        for index in compress(count(), parts[1::3]):  # pragma: no mutate
            if not _at_boundary(parts[3 * index], index):
                new_texts[index] = TRIGGER + captured[index]
                kept += 1
        if not exact:
            for index in compress(count(), map(is_, new_texts, repeat(None))):
                typed = captured[index]
                if typed[0] == TRIGGER:
                    new_texts[index] = typed
                else:  # an unknown name stays as typed
                    new_texts[index] = TRIGGER + typed
                    kept += 1
        found += len(captured) - kept
        parts[1::3] = [""] * len(captured)
        parts[2::3] = new_texts
        if lead:
            parts[0] = parts[0][1:]
        windows.append("".join(parts))
    if not found:
        return Expansion(text=text, changed=False)
    expanded = windows[0] if len(windows) == 1 else "".join(windows)  # pragma: no mutate (a copy)
    del windows
    return Expansion(
        text=expanded,
        changed=expanded != text,
        replacements=Replacements(text, snippets, found),
    )
