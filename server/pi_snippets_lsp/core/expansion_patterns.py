"""The patterns and the lookup by which the expansion pass finds a snippet table's markers.

``core.expansion`` states the pass and when it takes each. Every pattern finds a ``%`` at a
boundary: its lookbehinds (``_BOUNDARY``) hold the complete list of separators
(``grammar.SEPARATORS``) and check runs of up to two wrappers; a longer run sets a group,
and the pass checks that run's boundary itself. A ``%`` glued to a letter (``x%a``, ``é%a``,
``50%``) or after a wrapper run that follows anything but a boundary (``x(%a``) is turned
down inside the regex engine. A table has three patterns (``Patterns``, one per set of
names, each compiled when a text first needs it):

- The *names* pattern (``_names_pattern``) takes any name whose first characters a known
  name could start with, or an escape's first ``%`` alone, and ``Lookup`` gives each
  captured ``%name`` its value and an escape's ``%`` nothing (the rest of the escape stays
  as typed), in one C-level call for a window (an unknown name stays as typed:
  ``expansion._by_names``). An escape costs no string of its own: a one-character capture
  is an object Python keeps, its hash known.
  Its cost per marker is the lowest; its weakness is a text full of unknown names
  (printf formats, ``%name`` typed with a suffix), each of which it takes and looks up.
- The *trie* pattern (``_trie_pattern``) finds only what the table can replace: the name
  is matched against a trie of the table's names (``_trie``) and unknown names are turned
  down inside the engine; or, past ``_MOST_TRIE_NAMES`` names (a trie that large takes
  long to compile) or with a name over ``_LONGEST_TRIE_NAME`` characters, against the
  pairs of first characters the names start with, the lookup deciding the rest. Walking
  the trie costs more per known name.
- The *marker* pattern (``_marker_pattern``, for ``expansion.marker_pieces``) matches the
  same names as the trie pattern (``_known``), with each marker whole, ``%%name``
  included. The names pattern cannot serve there: it takes unknown names (each would
  send its window to the plain scan) and only an escape's first ``%``.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Final, NamedTuple

from pi_snippets_lsp.core.grammar import SEPARATORS, TRIGGER, WRAPPERS, is_valid_name

#: Up to this many valid names, the trie pattern holds them all (unknown names are turned
#: down inside the regex engine); its compile time grows with the names, and each new
#: generation compiles it again.
_MOST_TRIE_NAMES: Final = 2000
#: ... and none longer than this: each character of a name can nest a group, and the
#: ``re`` compiler recurses once per nesting level.
_LONGEST_TRIE_NAME: Final = 100

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
#: How an escape starts, as typed.
ESCAPE_START: Final = TRIGGER + TRIGGER
#: An escape as the names pattern takes it: its first ``%`` only, when a second ``%`` and
#: the first character of a name follow. The second ``%`` is then no marker (the ``%``
#: before it is no boundary), and stays with the name, as the escape becomes.
_ESCAPE_AHEAD: Final = "(?=%[a-z0-9])"


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


class Compiled(NamedTuple):
    """The trie pattern for a table, and how to read what it finds."""

    pattern: re.Pattern[str]
    #: It finds known names only (a trie), not some unknown ones too (first pairs).
    exact: bool
    #: Some key starts with ``%``, as an escape's capture does: look up valid names only.
    clash: bool


def _trie_pattern(names: frozenset[str]) -> Compiled:
    """The trie pattern for a table with these names.

    ``%`` at a boundary (``_BOUNDARY``; group 1 set after a run of three wrappers or
    more), then group 2: an escape's ``%`` and the first character of its name (the
    escape becomes just that: its first ``%`` goes, the rest stays as typed), or a name.
    """
    known, exact = _known(names)
    clash = any(name.startswith(TRIGGER) for name in names)
    return Compiled(re.compile(rf"%{_BOUNDARY}({_ESCAPE}|{known})"), exact, clash)


def _marker_pattern(names: frozenset[str]) -> tuple[re.Pattern[str], bool]:
    """The marker pattern for a table with these names: ``_trie_pattern``, with the whole
    marker as group 1 (``%name``, or ``%%name`` with all its name) and the wrapper of a
    long run as group 2: what ``expansion.marker_pieces`` cuts at; and whether it finds
    known names only."""
    known, exact = _known(names)
    return re.compile(rf"(%{_BOUNDARY}(?:%{_NAME}|{known}))"), exact


def _known(names: frozenset[str]) -> tuple[str, bool]:
    """The part of the trie and marker patterns that matches a table's names, and whether
    it matches those only (a trie) or lets unknown ones through too (first pairs, for a
    large table: the lookup decides)."""
    valid = sorted(name for name in names if is_valid_name(name))
    longest = max(map(len, valid), default=0)
    exact = len(valid) <= _MOST_TRIE_NAMES and longest <= _LONGEST_TRIE_NAME
    if not valid:
        return "(?!)", exact
    if exact:
        return _trie(valid) + _NAME_ENDS, exact
    return _first_pairs(valid) + _NAME, exact


def _names_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """The names pattern for a table with these names.

    Group 1: the ``%`` at a boundary (``_BOUNDARY``; group 2 set after a run of three
    wrappers or more) and a whole name whose first characters a known name could start
    with (``_starts``), or, before the rest of an escape, that ``%`` alone.
    """
    valid = [name for name in names if is_valid_name(name)]
    # No name: nothing to take but escapes (what it took more would be given back as typed).
    name = _starts(valid) + _NAME_REST if valid else "(?!)"  # pragma: no mutate
    return re.compile(rf"(%{_BOUNDARY}(?:{name}|{_ESCAPE_AHEAD}))")


class Patterns:
    """The patterns of a table with these names: the names pattern, made at once; the trie
    pattern and the marker pattern, each compiled when a text first takes it."""

    __slots__ = ("_marker", "_trie", "names", "names_pattern")

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.names_pattern = _names_pattern(names)
        self._trie: Compiled | None = None
        self._marker: tuple[re.Pattern[str], bool] | None = None

    @property
    def trie(self) -> Compiled:
        """``_trie_pattern`` for these names, made once."""
        if self._trie is None:
            self._trie = _trie_pattern(self.names)
        return self._trie

    @property
    def marker(self) -> tuple[re.Pattern[str], bool]:
        """``_marker_pattern`` for these names, made once."""
        if self._marker is None:
            self._marker = _marker_pattern(self.names)
        return self._marker


@lru_cache(maxsize=16)
def patterns_of(names: frozenset[str]) -> Patterns:
    """``Patterns`` for these names, shared by the tables (and plain mappings) that have them."""
    return Patterns(names)


class Lookup:
    """A captured marker -> its new text (``new_texts``): ``%name`` -> the snippet's value
    (``lookup_of``), an escape's first ``%`` -> nothing; anything else (an unknown name) is
    not in it and stays as typed. ``snippets``: the snippets it was made of (name -> value).

    ``new_texts`` is a plain dict, not a subclass with ``__missing__``: C code that
    subscripts a dict subclass goes through a Python-level slot on every marker, where a
    plain dict's lookup stays in C."""

    __slots__ = ("__weakref__", "new_texts", "snippets")

    def __init__(self, snippets: Mapping[str, str]) -> None:
        self.new_texts = {TRIGGER + name: value for name, value in snippets.items()}
        self.new_texts[TRIGGER] = ""
        self.snippets = dict(snippets)


#: The lookups in use, by their snippets' names. Tables of the same snippets share one: a
#: daemon's sessions that load the same settings each make a table of their own, and a
#: lookup per session (every name again as ``%name``) would cost each of them its size.
#: Held weakly: a lookup goes with the last table that uses it.
_lookups: weakref.WeakValueDictionary[frozenset[str], Lookup] = weakref.WeakValueDictionary()
_lookups_lock: Final = threading.Lock()  # expansions run on worker threads too


def lookup_of(names: frozenset[str], snippets: Mapping[str, str]) -> Lookup:
    """``Lookup`` of a table (``names``: its keys), the one in use for the same snippets if
    there is one. Every key is put under ``%key``: a key that is no name is never captured
    (a capture is ``%`` and a valid name), except the empty key, whose ``%`` would be an
    escape's capture: the escape is put last, over it."""
    with _lookups_lock:
        lookup = _lookups.get(names)
    if lookup is not None and lookup.snippets == snippets:
        return lookup
    lookup = Lookup(snippets)
    with _lookups_lock:
        _lookups[names] = lookup
    return lookup
