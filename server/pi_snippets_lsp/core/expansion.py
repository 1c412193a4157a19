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
  marker spans a separator; no cut falls inside a CRLF (semantic tokens count the lines
  window by window).
- Each window is ``re.split`` by one of two patterns of the snippet table
  (``core.expansion_patterns``, made when a text first needs them and kept with a
  generation's values, ``SnippetTable``) into the text between the markers and each
  marker's captures, and one ``join`` makes the window's result. The *names* pattern
  takes any name that starts like a known one, and one C-level lookup gives each capture
  its new text: the lowest cost per marker, except in a text full of unknown names
  (printf formats, ``%name`` typed with a suffix), each of which it takes and looks up.
  The *trie* pattern turns unknown names down inside the regex engine.
- A window is expanded by the names pattern, except after a sample window (one window
  with a marker in ``_SAMPLE``, the first included, always by the names pattern) in which
  more than a quarter of what it took were unknown names: then by the trie pattern, until
  the next sample. Either way the text is the same; only the cost differs.
- A ``%`` after a run of three wrappers or more, which the patterns' lookbehinds cannot
  see whole, has that run's boundary checked here (``_at_boundary``).
- A window with a long run of name characters, ``%`` and wrappers (where no cut may fall)
  takes the plain scan: each candidate ``%`` of ``MARKER_CANDIDATE_RE`` checked with
  ``is_boundary_before`` (``marker_spans``).

``marker_pieces`` (semantic tokens) cuts the text at the markers the plain scan finds, in
windows cut by the same rule (but at most ``_MOST_PIECES_STEP`` characters apart: each
split holds the GIL), by the table's third pattern, the *marker* pattern: its known
names, each marker whole.

What changed (``Expansion.replacements``) is not stored per marker but produced again on
demand by that plain scan, which also counts it.

``expand_once`` is the pass for a table that expands one text and is dropped (a command
that exits after it): a text of up to ``ONCE_PLAIN_CHARS`` takes the plain scan, which
compiles nothing; compiling a table's patterns costs more than the plain scan of such a
text, and with one text there is nothing to spread that cost over.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import countOf, is_, itemgetter
from typing import Any, Final, NamedTuple, overload

from pi_snippets_lsp.core.expansion_patterns import (
    ESCAPE_START,
    Compiled,
    Lookup,
    Patterns,
    lookup_of,
    patterns_of,
)
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
_WINDOWS: Final = 32
_SMALLEST_WINDOW: Final = 256
#: One window with a marker in this many (the first included) is a sample: expanded by
#: the names pattern, it tells which pattern the windows up to the next sample take.
_SAMPLE: Final = 64
#: Where a window may end: after a character no marker holds (no name character, no
#: ``%``), so no marker spans the cut, and which is no wrapper: the next window starts
#: with it, for the lookbehinds, and at its start ``\A`` must mean the text's start. Never
#: between the two characters of a CRLF: each window's line breaks are whole (semantic
#: tokens count the lines window by window, ``marker_pieces``).
_CUT: Final = re.compile(rf"(?!\r\n)[^a-z0-9._%\-{re.escape(WRAPPERS)}]")
#: A window longer than this many times its step (a long run of name characters, ``%``
#: and wrappers, where no cut is allowed) takes the plain scan: what one split would
#: keep of such a run is not bounded by the step.
_LONGEST_WINDOW: Final = 4
_SEPARATOR_SET: Final = frozenset(SEPARATORS)
#: ``marker_pieces``' windows are at most this many characters apart: each costs one
#: split (one C call that holds the GIL) and a chunk of tokens.
_MOST_PIECES_STEP: Final = 16384
#: The longest text ``expand_once`` expands by the plain scan: the plain scan costs a
#: fraction of a microsecond more per character than the pass, and compiling a table's
#: patterns as much as the plain scan of tens of thousands of characters.
ONCE_PLAIN_CHARS: Final = 16384

_Get = Callable[..., "str | None"]


class _Table(NamedTuple):
    """What the pass needs of a table: its patterns and its lookup."""

    patterns: Patterns
    lookup: Lookup


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
        """``_new_table`` of this table, made once."""
        if self._table is None:
            self._table = _new_table(self)
        return self._table


def _new_table(snippets: Mapping[str, str]) -> _Table:
    """``patterns_of`` and ``lookup_of`` of ``snippets``."""
    names = frozenset(snippets)
    return _Table(patterns_of(names), lookup_of(names, snippets))


def _table_of(snippets: Mapping[str, str]) -> _Table:
    """The pass's patterns and lookup for ``snippets``: a table's own, made once (a
    generation's values, ``SnippetTable``), or a plain mapping's, made for this call."""
    if isinstance(snippets, SnippetTable):
        return snippets.table
    return _new_table(snippets)


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
    dense 4 MB prompt), as ``expand`` does: the table's marker pattern splits each window,
    which is cut as ``expand``'s are but at most ``_MOST_PIECES_STEP`` characters apart:
    what one window costs is one call that holds the GIL, and a worker thread shares it
    with the event loop. A window where ``expand`` takes the plain scan (a long run of
    markers and wrappers), with three wrappers or more before a ``%``, or where a large
    table's pattern let an unknown name through, is cut at what ``marker_spans`` finds
    there.
    """
    if not snippets or TRIGGER not in text:
        yield [text], []
        return
    if isinstance(snippets, SnippetTable):
        patterns = snippets.table.patterns
    else:
        patterns = patterns_of(frozenset(snippets))
    pattern, exact = patterns.marker
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
    return all(marker.startswith(ESCAPE_START) or marker[1:] in snippets for marker in markers)


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


def _unbounded(parts: list[str], wrappers: Sequence[str | None]) -> list[int]:
    """The candidates of a window's split (``parts``) after a run of three wrappers or more
    (``wrappers``: each candidate's group of the pattern's boundary) that starts at no boundary."""
    indexes = compress(count(), wrappers)
    return [index for index in indexes if not _at_boundary(parts[3 * index], index)]


def _by_names(parts: list[str], lookup: Lookup, sample: bool) -> bool:
    """``parts`` (a names pattern's split of a window) made the window's pieces, in
    place: each marker's new text, no group. For a sample window, returns whether more
    than a quarter of what it took were unknown names (``_SAMPLE``)."""
    captured = parts[1::3]
    found = len(captured)
    new_texts_of = lookup.new_texts
    try:
        # One C-level call looks them all up (``itemgetter`` of one key gives one item).
        new_texts = (
            itemgetter(*captured)(new_texts_of) if found > 1 else (new_texts_of[captured[0]],)
        )
    except KeyError:  # an unknown name: its new text is its capture itself
        new_texts = tuple(map(new_texts_of.get, captured, captured))
    unknown = sample and countOf(map(is_, new_texts, captured), True) * 4 > found
    wrappers = parts[2::3]
    if countOf(wrappers, None) != found:  # after three wrappers or more
        new_texts = list(new_texts)
        for index in _unbounded(parts, wrappers):
            new_texts[index] = captured[index]
    parts[1::3] = new_texts
    del parts[2::3]
    return unknown


def _trie_get(snippets: Mapping[str, str], compiled: Compiled) -> _Get:
    """How the trie path looks a capture up: in ``snippets``, or, when a key starts with
    ``%`` (as an escape's capture does), in its valid names only."""
    if compiled.clash:
        return {name: value for name, value in snippets.items() if is_valid_name(name)}.get
    return snippets.get


def _by_trie(parts: list[str], compiled: Compiled, get: _Get) -> None:
    """``parts`` (the trie pattern's split of a window) made the window's pieces, in place."""
    captured = parts[2::3]
    # An escape's capture (``%a``) is no name: ``get`` gives it back, and it is what
    # the escape ``%%a`` becomes. Past the trie's size an unknown name is None here, until
    # it is given its text below.
    new_texts: list[Any] = (
        list(map(get, captured, captured)) if compiled.exact else list(map(get, captured))
    )
    for index in _unbounded(parts, parts[1::3]):  # after three wrappers or more
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
    # Windows with a marker so far: one in ``_SAMPLE`` (the first included) is a sample.
    windows_with_markers = 0
    for start, end in _windows(text, step):
        if end - start > _LONGEST_WINDOW * step:  # pragma: no mutate (either way: same text)
            windows.append(_plain_window(text, snippets, start, end))
            matched = True
            continue
        lead = 1 if start else 0  # the character before the window, for the lookbehinds
        # The whole text is no copy; a window without a candidate needs no work.
        window = text if end - start == size else text[start - lead : end]  # pragma: no mutate
        sample = not windows_with_markers % _SAMPLE  # pragma: no mutate (a cost choice)
        trie = by_trie and not sample
        parts = (patterns.trie.pattern if trie else patterns.names_pattern).split(window)
        if len(parts) == 1:  # pragma: no mutate
            windows.append(parts[0][lead:])
            continue
        if trie:
            if trie_get is None:
                trie_get = _trie_get(snippets, patterns.trie)
            _by_trie(parts, patterns.trie, trie_get)
        else:  # a sample's vote holds up to the next sample (no other window votes)
            by_trie = _by_names(parts, lookup, sample)
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


def expand_once(text: str, snippets: Mapping[str, str]) -> Expansion:
    """``expand(text, snippets)``, for a table that expands this one text: the same
    result, at the least cost for a short text (``ONCE_PLAIN_CHARS``: the plain scan,
    ``marker_spans``, compiles no pattern of the table)."""
    if not snippets:  # nothing configured: the text unchanged, ``%%name`` included
        return Expansion(text=text, changed=False)
    if len(text) > ONCE_PLAIN_CHARS:  # pragma: no mutate (a cost choice: the same text)
        return expand(text, snippets)
    pieces: list[str] = []
    last = 0
    for found, after, new_text in marker_spans(text, snippets):
        pieces += (text[last:found], new_text)
        last = after
    if not pieces:
        return Expansion(text=text, changed=False)
    pieces.append(text[last:])
    expanded = "".join(pieces)
    changed = expanded != text
    return Expansion(
        text=expanded if changed else text,
        changed=changed,
        replacements=Replacements(text, snippets, frozenset(snippets)),
    )
