"""The fast expansion pass against the previous one, and its memory bound.

``expand`` scans for ``%`` candidates and checks the boundary backwards only there
(``MARKER_CANDIDATE_RE`` + ``is_boundary_before``). Its results must be exactly those of
the previous pass, kept below as the reference: ``MARKER_PATTERN`` (the grammar written as one
Unicode regex) tried at every position. And whatever the number of markers, expanding a
text uses a few times its size in memory (the previous pass kept ~50 bytes per marker).
"""

from __future__ import annotations

import gc
import itertools
import random
import re
import sys
import tracemalloc
import weakref
from collections.abc import Iterator, Mapping

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core import expansion, expansion_patterns
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.expansion import (
    Expansion,
    Replacement,
    Replacements,
    SnippetTable,
    cut_at,
    expand,
    marker_pieces,
    marker_spans,
)
from pi_snippets_lsp.core.grammar import MARKER_PATTERN, TRIGGER
from pi_snippets_lsp.core.snippet import Snippet

from .conftest import PIECES, examples, random_texts, sized
from .test_expansion import NAMES, SNIPPET_TABLES, prompts

MARKER_RE = regex.compile(MARKER_PATTERN)


def previous_expand(text: str, snippets: Mapping[str, str]) -> Expansion:
    """REFERENCE: the pass as it was before the candidate scan, unchanged."""
    if not snippets or TRIGGER not in text:
        return Expansion(text=text, changed=False)
    pieces: list[str] = []
    replacements: list[Replacement] = []
    last = 0
    for match in MARKER_RE.finditer(text):
        name = match.group("name")
        if match.group("escape"):
            new_text = TRIGGER + name
        else:
            value = snippets.get(name)
            if value is None:
                continue
            new_text = value
        start = match.start("wrappers") + len(match.group("wrappers"))
        end = match.end("name")
        pieces.append(text[last:start])
        pieces.append(new_text)
        last = end
        replacements.append(Replacement(start=start, end=end, new_text=new_text))
    if not replacements:
        return Expansion(text=text, changed=False)
    pieces.append(text[last:])
    expanded = "".join(pieces)
    return Expansion(text=expanded, changed=expanded != text, replacements=tuple(replacements))


def assert_same(text: str, snippets: Mapping[str, str]) -> Expansion:
    ours = expand(text, snippets)
    reference = previous_expand(text, snippets)
    assert (ours.text, ours.changed) == (reference.text, reference.changed), text
    assert tuple(ours.replacements) == tuple(reference.replacements), text
    assert len(ours.replacements) == len(reference.replacements)
    return ours


# --------------------------------------------------------------------------- old vs new

SNIPPETS = {"a": "A", "use-mcp": "V", "x.y": "D", "1": "ONE", "mcp": "%a", "b": "b b"}


def test_the_fast_pass_equals_the_previous_one_on_random_prompts() -> None:
    changed = 0
    for text in random_texts(seed=1010, count=sized(20_000)):
        changed += assert_same(text, SNIPPETS).changed
    assert changed > sized(2_000)  # the generator does reach real markers


def test_the_fast_pass_equals_the_previous_one_on_long_prompts() -> None:
    """Long texts: many markers in one pass, chunked output, every kind of neighbour."""
    rng = random.Random(2020)
    for _ in range(sized(200)):
        text = "".join(rng.choices(PIECES, k=rng.randint(100, 3_000)))
        assert_same(text, SNIPPETS)


@settings(max_examples=examples(500))
@given(snippets=SNIPPET_TABLES, data=st.data())
def test_the_fast_pass_equals_the_previous_one(
    snippets: dict[str, str], data: st.DataObject
) -> None:
    text = data.draw(prompts(sorted(snippets)))
    assert_same(text, snippets)


@settings(max_examples=examples(300))
@given(pieces=st.lists(st.sampled_from([*PIECES, "é", "\u0300", "\ud800", "%%%"]) | st.text()))
def test_the_fast_pass_equals_the_previous_one_on_any_text(pieces: list[str]) -> None:
    assert_same("".join(pieces), SNIPPETS)


# --------------------------------------------------------------------------- replacements


def test_replacements_are_a_sequence_equal_to_the_tuple_of_them() -> None:
    result = expand("%a (%b) %%c x%a", SNIPPETS)
    expected = (
        Replacement(0, 2, "A"),
        Replacement(4, 6, "b b"),
        Replacement(8, 11, "%c"),
    )
    assert result.replacements == expected
    assert list(result.replacements) == list(expected)
    assert list(result.replacements) == list(result.replacements)  # replayable
    assert len(result.replacements) == 3
    assert result.replacements[1] == expected[1]
    assert result.replacements[-1] == expected[-1]
    assert tuple(result.replacements[1:]) == expected[1:]
    assert Replacement(4, 6, "b b") in result.replacements
    assert result.replacements != expected[:2]
    assert hash(result.replacements) == hash(expected)


def test_replacements_refuse_to_replay_after_the_mapping_changed() -> None:
    snippets = dict(SNIPPETS)
    result = expand("%a %b", snippets)
    del snippets["b"]
    message = "the snippets mapping changed after expand(); cannot replay it"
    with pytest.raises(RuntimeError) as raised:
        list(result.replacements)
    assert str(raised.value) == message


def test_replacements_show_their_items() -> None:
    result = expand("%a x", SNIPPETS)
    assert repr(result.replacements) == f"Replacements({list(result.replacements)!r})"
    assert "Replacement(start=0, end=2" in repr(result.replacements)


@pytest.mark.parametrize("markers", [127, 128, 129, 1000, 5000])
def test_many_markers_expand_to_exactly_their_texts(markers: int) -> None:
    """A text with many markers is assembled in pieces (memory stays bounded); the
    pieces must join to exactly the expanded text, whatever their number."""
    text = " ".join(f"w{i} %a" for i in range(markers))
    result = expand(text, SNIPPETS)
    assert result.text == " ".join(f"w{i} {SNIPPETS['a']}" for i in range(markers))
    assert len(result.replacements) == markers


# --------------------------------------------------------------------------- memory

MARKERS = sized(250_000)


def _peak(run: object) -> int:
    assert callable(run)
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("marker", "count"),
    [
        pytest.param(" %a", MARKERS, id="markers"),
        pytest.param(" %%a", MARKERS // 5, id="escapes"),
        pytest.param("，%a", MARKERS // 5, id="after-cjk-punctuation"),
        pytest.param(" (%a)", MARKERS // 5, id="inside-wrappers"),
    ],
)
def test_expanding_many_markers_uses_a_few_times_the_text_size(marker: str, count: int) -> None:
    """Many markers: the pass holds its input, its output and a bounded number of pieces.

    (The previous pass kept a ``Replacement`` and two pieces per marker: ~50 bytes each,
    40-55 times the size of these texts.)
    """
    text = marker * count
    snippets = SnippetTable({"a": "AB"})  # the output is as large as the input
    assert snippets.table  # made once per table, not per text
    size = sys.getsizeof(text)
    result: list[Expansion] = []
    peak = _peak(lambda: result.append(expand(text, snippets)))
    assert len(result[0].replacements) == count
    assert peak < 3 * size, f"{peak} bytes for a text of {size}"
    # Walking the replacements costs one at a time, not one per marker.
    walk_peak = _peak(lambda: sum(1 for _ in result[0].replacements))
    assert walk_peak < size // 4


def test_replacements_hold_no_per_marker_data() -> None:
    text = " %a" * MARKERS
    result = expand(text, {"a": "AB"})
    assert isinstance(result.replacements, Replacements)
    assert sys.getsizeof(result.replacements) < 200


# --------------------------------------------------------------------------- the fast pass


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows of a few characters: cuts fall everywhere a cut may fall."""
    monkeypatch.setattr(expansion, "_SMALLEST_WINDOW", 3)
    monkeypatch.setattr(expansion, "_WINDOWS", 1_000_000)


@pytest.fixture
def trie_after_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every window after the first with a marker takes the trie pattern (as after a
    sample window full of unknown names)."""
    monkeypatch.setattr(expansion, "_SAMPLE", 1_000_000)
    by_names = expansion._by_names

    def voting_for_the_trie(
        parts: list[str], lookup: expansion_patterns.Lookup, sample: bool
    ) -> bool:
        return by_names(parts, lookup, sample) or sample

    monkeypatch.setattr(expansion, "_by_names", voting_for_the_trie)


@pytest.fixture
def trie_path(small_windows: None, trie_after_the_first: None) -> None:
    """Windows of a few characters, and every one after the first with a marker takes the
    trie pattern."""


@pytest.fixture
def first_pairs(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every table takes the trie pattern of a large one (first pairs, unknown names let
    through)."""
    monkeypatch.setattr(expansion_patterns, "_MOST_TRIE_NAMES", 0)
    expansion_patterns.patterns_of.cache_clear()
    yield
    expansion_patterns.patterns_of.cache_clear()


WINDOW_PIECES = [*PIECES, "((", "([`", "(((", "[{<`(", "，(", "x(", "%%%", "%a.", "%a-x"]


@pytest.mark.usefixtures("small_windows")
def test_the_fast_pass_equals_the_previous_one_window_by_window() -> None:
    """A cut after any character no marker holds (wrappers and separators included)
    changes nothing: each window sees the character before it."""
    rng = random.Random(77)
    for _ in range(sized(300)):
        text = "".join(rng.choices(WINDOW_PIECES, k=rng.randint(1, 60)))
        assert_same(text, SNIPPETS)


@pytest.mark.usefixtures("trie_path")
def test_the_trie_pattern_equals_the_previous_pass_window_by_window() -> None:
    rng = random.Random(79)
    for _ in range(sized(300)):
        text = "".join(rng.choices(WINDOW_PIECES, k=rng.randint(1, 60)))
        assert_same(text, SNIPPETS)
    assert_same("%a %%b %zz (%a) (((%a x(((%a %a%a", SNIPPETS)


@pytest.mark.usefixtures("trie_path")
@settings(max_examples=examples(300))
@given(snippets=SNIPPET_TABLES, data=st.data())
def test_the_trie_pattern_equals_the_previous_pass(
    snippets: dict[str, str], data: st.DataObject
) -> None:
    assert_same(data.draw(prompts(sorted(snippets))), snippets)


@pytest.mark.usefixtures("first_pairs", "trie_path")
def test_the_pattern_of_a_large_table_lets_unknown_names_through_unchanged() -> None:
    rng = random.Random(78)
    for _ in range(sized(2_000)):
        text = "".join(rng.choices(WINDOW_PIECES, k=rng.randint(1, 12)))
        assert_same(text, SNIPPETS)
    # Names that share their first pairs with known ones, and a one-character name.
    assert_same("%use %use-mcpx %use-mc %u %a %ab (%a) x%a %%u %%use-mcp", SNIPPETS)


@pytest.mark.usefixtures("first_pairs", "trie_path")
@settings(max_examples=examples(300))
@given(snippets=SNIPPET_TABLES, data=st.data())
def test_the_pattern_of_a_large_table_equals_the_previous_pass(
    snippets: dict[str, str], data: st.DataObject
) -> None:
    assert_same(data.draw(prompts(sorted(snippets))), snippets)


@pytest.mark.parametrize("path", ["names", "trie"])
@pytest.mark.parametrize("run", range(7))
@pytest.mark.parametrize("before", ["", " ", "x", "，", "é", "%", ")", "\n"])
def test_runs_of_wrappers_of_every_length(
    before: str, run: int, path: str, request: pytest.FixtureRequest
) -> None:
    """The patterns check runs of up to two wrappers themselves; a longer run is walked
    back."""
    # The trie pattern takes no first window (a sample): the text starts further on.
    lead = ""
    if path == "trie":
        request.getfixturevalue("trie_path")
        lead = "%aa %aa "
    for wrappers in ("(" * run, "[`{<("[:run], "`" * run):
        for marker in ("%a", "%%a", "%zz", "%aa"):
            assert_same(f"{lead}{before}{wrappers}{marker} {before}{wrappers}{marker}", SNIPPETS)


@pytest.mark.usefixtures("small_windows")
def test_a_long_run_where_no_cut_may_fall_takes_the_plain_scan() -> None:
    text = "((%a" * 300 + " %a " + "%a%%a-" * 200
    assert_same(text, SNIPPETS)
    assert_same("x" + text, SNIPPETS)
    assert assert_same("((%a" * 300, SNIPPETS).changed  # nothing but the plain scan


#: Text that makes a first window with a marker (an escape, whatever the names: a sample)
#: of its own, before the text a test is about; and what it becomes.
FIRST_WINDOW = "%%zz " + "w " * expansion._SMALLEST_WINDOW + "\n"
FIRST_EXPANDED = FIRST_WINDOW[1:]


@pytest.mark.parametrize("path", ["names", "trie"])
@pytest.mark.parametrize("length", [99, 100, 101, 400])
def test_long_names_expand(length: int, path: str, request: pytest.FixtureRequest) -> None:
    """A name too long for the trie (the ``re`` compiler recurses per nesting level)
    puts its table on the first pairs; names that nest deeply are no trouble either."""
    first = expanded = ""
    if path == "trie":
        request.getfixturevalue("trie_after_the_first")
        first, expanded = FIRST_WINDOW, FIRST_EXPANDED
    long = "a" * length
    snippets = {"a" * k: str(k) for k in range(1, 40)} | {long: "LONG", "b": "B"}
    text = f"%{long} %{long}b %{'a' * 30} (%b) %%{long}"
    result = assert_same(first + text, snippets)
    assert result.text == expanded + f"LONG %{long}b 30 (B) %{long}"


def test_a_key_like_an_escapes_capture_clashes() -> None:
    assert expansion_patterns._trie_pattern(frozenset({"a", "%a"})).clash is True
    assert expansion_patterns._trie_pattern(frozenset({"a", "a%"})).clash is False


@pytest.mark.parametrize("path", ["names", "trie"])
def test_a_plain_mapping_with_keys_that_are_no_names(
    path: str, request: pytest.FixtureRequest
) -> None:
    """Only valid names can be markers: a key like ``%a`` is never looked up, so an escape
    (whose capture is ``%a``) stays an escape."""
    first = expanded = ""
    if path == "trie":
        request.getfixturevalue("trie_after_the_first")
        first, expanded = FIRST_WINDOW, FIRST_EXPANDED
    snippets = {"%a": "NO", "A": "NO", "": "NO", "a": "yes", "%%a": "NO"}
    result = assert_same(first + "%%a %A %a % %%%a (%%a) %None", snippets)
    assert result.text == expanded + "%a %A yes % %%%a (%a) %None"
    nothing = {"A": "NO", "None": "NO"}  # no valid name (None is no name either)
    result = assert_same(first + "%%a %A %a % %%%a (%%a) %None", nothing)
    assert result.text == expanded + "%a %A %a % %%%a (%a) %None"


@pytest.mark.usefixtures("trie_after_the_first")
def test_runs_of_wrappers_anywhere_in_a_window_of_the_trie() -> None:
    """Several markers in one window of the trie pattern, runs of three wrappers or more
    before some, at a boundary or not."""
    rng = random.Random(81)
    pieces = ["(((%a ", "x(((%a ", "%a ", "(%%a ", "(((%%a ", "x(((%%b ", "[{<`(%b ", "((%zz "]
    for _ in range(sized(100)):
        text = FIRST_WINDOW + "".join(rng.choices(pieces, k=rng.randint(20, 200)))
        assert_same(text, SNIPPETS)


def test_the_names_pattern_takes_an_escape_as_its_first_percent_alone() -> None:
    """An escape's capture is one character: the object Python keeps for it, its hash
    known, so an escape costs no string and no hashing of its own. The rest of the
    escape stays between the captures, and its second ``%`` is taken by nothing."""
    pattern = SnippetTable({"ab": "X"}).table.patterns.names_pattern
    parts = pattern.split("x %%ab (%%c %%-")
    assert parts == ["x ", "%", None, "%ab (", "%", None, "%c %%-"]
    assert parts[1] is TRIGGER
    assert expand("x %%ab (%%c %%- %%%ab", {"ab": "X"}).text == "x %ab (%c %%- %%%ab"


def test_a_generation_makes_its_patterns_and_lookup_once() -> None:
    table = SnippetTable({"a": "A", "Bad": "x"})
    assert table.table is table.table
    assert table == {"a": "A", "Bad": "x"}
    assert expand("%a %Bad", table).text == "A %Bad"
    empty = SnippetTable().table.patterns
    assert empty.names_pattern.search("%a") is None  # no name to find
    assert empty.names_pattern.search("%%a")  # escapes all the same
    assert empty.trie.pattern.search("%a") is None
    config = Config(snippets=(Snippet("a", "A", "test"),))
    assert isinstance(config.values, SnippetTable)
    assert dict(config.values) == {"a": "A"}


NAME_SETS = st.sets(NAMES, min_size=1, max_size=12)


@settings(max_examples=examples(200))
@given(names=NAME_SETS, other=NAMES)
def test_the_trie_matches_exactly_its_names(names: set[str], other: str) -> None:
    trie = re.compile(expansion_patterns._trie(sorted(names)))
    for name in names:
        assert trie.fullmatch(name)
    assert (trie.fullmatch(other) is not None) == (other in names)
    # Its matches are names of the set (the pattern adds the check that the name ends).
    for candidate in [*names, other]:
        match = trie.match(candidate)
        assert match is None or match.group() in names


@settings(max_examples=examples(200))
@given(names=NAME_SETS, other=NAMES)
def test_the_first_pairs_are_the_starts_of_the_names(names: set[str], other: str) -> None:
    pairs = re.compile(expansion_patterns._first_pairs(sorted(names)))
    starts = {name[:2] for name in names if len(name) > 1}
    singles = {name for name in names if len(name) == 1}
    assert (pairs.match(other) is not None) == (other[:2] in starts or other[:1] in singles)


@pytest.mark.parametrize(
    ("names", "text", "starts"),
    [
        pytest.param(["abc"], "abx", True, id="same-first-pair"),
        pytest.param(["abc"], "acx", False, id="third-character-is-no-second"),
        pytest.param(["abc", "a"], "ax", True, id="a-one-character-name-takes-any"),
        pytest.param(["a.b"], "a.x", True, id="punctuation-second"),
        pytest.param(["a.b"], "a-x", False, id="other-punctuation"),
        pytest.param(["xy", "ab"], "xb", False, id="pairs-do-not-mix"),
    ],
)
def test_first_pairs(names: list[str], text: str, starts: bool) -> None:
    assert (re.match(expansion_patterns._first_pairs(names), text) is not None) == starts


# --------------------------------------------------------------------------- marker pieces


def assert_pieces(text: str, snippets: Mapping[str, str]) -> list[tuple[list[str], list[str]]]:
    """``marker_pieces`` is the text cut exactly at the plain scan's markers (none with
    nothing configured: then submission leaves the text alone, escapes included)."""
    windows = list(marker_pieces(text, snippets))
    spans: list[tuple[int, int]] = []
    offset = 0
    for between, markers in windows:
        assert len(between) == len(markers) + 1
        for piece, marker in zip(between, markers, strict=False):
            offset += len(piece)
            spans.append((offset, offset + len(marker)))
            assert text[offset : offset + len(marker)] == marker
            offset += len(marker)
        offset += len(between[-1])
    assert offset == len(text)
    joined = "".join("".join(p + m for p, m in zip(b, [*ms, ""], strict=True)) for b, ms in windows)
    assert joined == text
    plain = marker_spans(text, snippets) if snippets else iter(())
    assert spans == [(start, end) for start, end, _ in plain], text
    return windows


def test_the_pieces_are_the_text_cut_at_its_markers() -> None:
    windows = assert_pieces("x %a (%use-mcp), %%b x%a %zz 50% %a", SNIPPETS)
    assert windows == [(["x ", " (", "), ", " x%a %zz 50% ", ""], ["%a", "%use-mcp", "%%b", "%a"])]


def test_the_pieces_on_random_prompts() -> None:
    for index, text in enumerate(random_texts(seed=2121, count=sized(5_000))):
        assert_pieces(text, SNIPPETS if index % 2 else SnippetTable(SNIPPETS))


@pytest.mark.usefixtures("small_windows")
def test_the_pieces_window_by_window() -> None:
    rng = random.Random(79)
    for _ in range(sized(300)):
        text = "".join(rng.choices(WINDOW_PIECES, k=rng.randint(1, 60)))
        assert_pieces(text, SNIPPETS)


@pytest.mark.usefixtures("first_pairs", "small_windows")
@settings(max_examples=examples(300))
@given(snippets=SNIPPET_TABLES, data=st.data())
def test_the_pieces_of_a_large_table_are_its_markers_only(
    snippets: dict[str, str], data: st.DataObject
) -> None:
    assert_pieces(data.draw(prompts(sorted(snippets))), snippets)


@pytest.mark.usefixtures("first_pairs")
def test_a_large_tables_unknown_name_is_no_piece() -> None:
    text = "%use %use-mcpx %use-mc %u %a %ab (%a) x%a %%u %%use-mcp"
    windows = assert_pieces(text, SNIPPETS)
    assert [marker for _, markers in windows for marker in markers] == [
        "%a", "%a", "%%u", "%%use-mcp"
    ]  # fmt: skip
    assert_pieces("%a %b %mcp", SnippetTable(SNIPPETS))


@pytest.mark.parametrize("run", range(6))
@pytest.mark.parametrize("before", ["", " ", "x", "，", "%", "\n"])
def test_the_pieces_after_runs_of_wrappers(before: str, run: int) -> None:
    for wrappers in ("(" * run, "[`{<("[:run]):
        for marker in ("%a", "%%a", "%zz"):
            assert_pieces(f"{before}{wrappers}{marker} {before}{wrappers}{marker}", SNIPPETS)


@pytest.mark.usefixtures("small_windows")
def test_the_pieces_of_a_long_run_where_no_cut_may_fall() -> None:
    text = "((%a" * 300 + " %a " + "%a%%a-" * 200
    assert len(assert_pieces(text, SNIPPETS)) > 1
    assert_pieces("x" + text, SNIPPETS)


def test_with_nothing_configured_the_text_is_one_piece() -> None:
    assert list(marker_pieces("%%a %a", {})) == [(["%%a %a"], [])]
    assert list(marker_pieces("no percent sign", SNIPPETS)) == [(["no percent sign"], [])]


def test_a_large_text_comes_in_windows_of_a_bounded_size() -> None:
    """Each window is one split, which holds the GIL while it runs: a 2 MB text comes
    in windows of some 16 KB, not of a 32nd of it."""
    text = "x %a y " * 300_000
    windows = assert_pieces(text, SnippetTable(SNIPPETS))
    sizes = [sum(map(len, between)) + sum(map(len, markers)) for between, markers in windows]
    assert max(sizes) < 17_000
    assert len(windows) > 100


def test_windows_never_cut_a_crlf() -> None:
    """A CRLF is one line break: no window ends between its CR and its LF."""
    text = "%a\r\n" * 2000
    windows = list(marker_pieces(text, SNIPPETS))
    assert len(windows) > 1
    for (before, _), (after, _) in itertools.pairwise(windows):
        assert not (before[-1].endswith("\r") and after[0].startswith("\n"))


def test_cut_at_spans() -> None:
    text = "ab %a cd %%b"
    assert cut_at(text, [(3, 5, ""), (9, 12, "")], 1, 12) == (["b ", " cd ", ""], ["%a", "%%b"])
    assert cut_at(text, [], 2, 7) == ([" %a c"], [])
    assert cut_at(text, [(3, 5, "")]) == (["ab ", " cd %%b"], ["%a"])


def test_a_generation_makes_its_marker_pattern_once() -> None:
    table = SnippetTable({"a": "A"})
    assert table.table.patterns.marker is table.table.patterns.marker
    assert list(marker_pieces("%a", table)) == [(["", ""], ["%a"])]


def test_a_text_comes_in_about_a_32nd_windows_of_at_most_16_ki() -> None:
    text = "x %a y " * 15_000  # 105,000 characters: windows of some 3,280
    windows = assert_pieces(text, SNIPPETS)
    assert 16 < len(windows) <= 33


@pytest.mark.parametrize("large", [False, True])
def test_an_ordinary_text_is_split_without_the_plain_scan(
    large: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plain scan costs a Python step per marker: only a window the pattern cannot
    answer alone takes it (a long run, three wrappers, a large table's unknown name)."""
    text = "x %a (%use-mcp) [`%%b` %1\n" * 5_000
    expected = list(marker_pieces(text, SNIPPETS))
    if large:
        monkeypatch.setattr(expansion_patterns, "_MOST_TRIE_NAMES", 0)
        expansion_patterns.patterns_of.cache_clear()

    def scan(*args: object) -> Iterator[tuple[int, int, str]]:
        raise AssertionError("the plain scan")

    monkeypatch.setattr(expansion, "marker_spans", scan)
    try:
        assert list(marker_pieces(text, SNIPPETS)) == expected
    finally:
        expansion_patterns.patterns_of.cache_clear()


@pytest.mark.parametrize(
    ("names", "exact"),
    [
        pytest.param(["a"], True, id="one"),
        pytest.param([f"n{i}" for i in range(2000)], True, id="2000-names"),
        pytest.param([f"n{i}" for i in range(2001)], False, id="2001-names"),
        pytest.param(["a" * 100, "b"], True, id="a-name-of-100"),
        pytest.param(["a" * 101, "b"], False, id="a-name-of-101"),
        pytest.param(["A", "%a"], True, id="no-valid-name"),
    ],
)
def test_a_table_takes_the_trie_up_to_2000_names_of_100_characters(
    names: list[str], exact: bool
) -> None:
    assert expansion_patterns._known(frozenset(names))[1] is exact
    assert expansion_patterns._trie_pattern(frozenset(names)).exact is exact
    assert expansion_patterns._marker_pattern(frozenset(names))[1] is exact


# --------------------------------------------------------------------------- the names pattern


@settings(max_examples=examples(200))
@given(names=NAME_SETS, other=NAMES)
def test_the_starts_let_every_name_through_and_turn_down_starts_no_name_has(
    names: set[str], other: str
) -> None:
    starts = re.compile(expansion_patterns._starts(sorted(names)))
    for name in names:
        assert starts.match(name)
    firsts = {name[0] for name in names}
    seconds = {name[1] for name in names if len(name) > 1}
    one_character = any(len(name) == 1 for name in names)
    possible = other[0] in firsts and (one_character or other[1:2] in seconds)
    assert (starts.match(other) is not None) == possible


@pytest.mark.parametrize(
    ("names", "text", "starts"),
    [
        pytest.param(["abc"], "abx", True, id="same-first-two"),
        pytest.param(["abc"], "acx", False, id="third-character-is-no-second"),
        pytest.param(["abc", "cd"], "ad", True, id="a-superset-of-the-pairs"),
        pytest.param(["abc"], "a", False, id="one-character-too-short"),
        pytest.param(["abc", "a"], "ax", True, id="a-one-character-name-takes-any"),
        pytest.param(["a.b"], "a.x", True, id="punctuation-second"),
        pytest.param(["a.b"], "a-x", False, id="other-punctuation"),
        pytest.param(["a-b"], "a-x", True, id="hyphen-in-the-class"),
        pytest.param(["ab"], "-b", False, id="hyphen-not-first"),
    ],
)
def test_starts(names: list[str], text: str, starts: bool) -> None:
    assert (re.match(expansion_patterns._starts(names), text) is not None) == starts


def lookup_of(snippets: dict[str, str]) -> expansion_patterns.Lookup:
    return expansion_patterns.lookup_of(frozenset(snippets), snippets)


def test_the_lookup_gives_values_and_escapes() -> None:
    new_texts = lookup_of({"a": "A", "x.y": "D", "%b": "NO", "B": "NO", "": "NO"}).new_texts
    assert type(new_texts) is dict  # a subclass's subscript is slower from C
    assert new_texts["%a"] == "A"
    assert new_texts["%x.y"] == "D"
    # No capture is ever "%%b": the key "%b" does not stand for the escape.
    assert expand("%%b", {"%b": "NO", "b": "B"}).text == "%b"
    # An escape's capture is its first "%", which goes (the rest stays as typed); the
    # escape goes last, over the key "".
    assert new_texts["%"] == ""
    assert lookup_of({}).new_texts == {"%": ""}


@pytest.mark.parametrize("sample", [False, True])
def test_a_window_with_an_unknown_name_gives_it_back_as_typed(sample: bool) -> None:
    """All known: one lookup of them all; one unknown among them: each looked up, the
    unknown one given back as it was captured (the same object: the sample counts it)."""
    lookup = lookup_of({"a": "A"})
    unknown = "".join(["%z", "z"])  # a capture of its own, as a split makes it
    for captured, expected in (
        (["%a"], ["A"]),
        (["%a", "%"], ["A", ""]),
        ([unknown], [unknown]),
        (["%a", unknown, "%a", "%a"], ["A", unknown, "A", "A"]),
    ):
        parts = [piece for capture in captured for piece in (" ", capture, None)] + ["."]
        voted = expansion._by_names(parts, lookup, sample)
        assert parts == [piece for new_text in expected for piece in (" ", new_text)] + ["."]
        assert voted == (sample and 4 * captured.count(unknown) > len(captured))
    assert "%zz" not in lookup.new_texts  # nothing is added by looking up


def test_tables_of_the_same_snippets_share_one_lookup_while_one_lives() -> None:
    """A daemon's sessions each make a table of the same settings: one lookup serves them
    all, not a copy of every name and value per session; other values get their own, and
    the lookup goes with its last table."""
    first = SnippetTable({"a": "A", "b": "B"})
    same = SnippetTable({"b": "B", "a": "A"})  # the same snippets, another order
    other = SnippetTable({"a": "A", "b": "other"})  # the same names, another value
    fewer = SnippetTable({"a": "A"})
    assert same.table.lookup is first.table.lookup
    assert other.table.lookup is not first.table.lookup
    assert fewer.table.lookup is not first.table.lookup
    assert expand("%b %a", other).text == "other A"
    assert expand("%b %a", first).text == "B A"  # the names' newest lookup is another's
    assert expand("%b %a", SnippetTable({"a": "A", "b": "B"})).text == "B A"
    assert expand("%b %a", {"a": "A", "b": "B"}).text == "B A"  # a plain mapping alike
    alive = weakref.ref(fewer.table.lookup)
    del fewer
    gc.collect()
    assert alive() is None


def test_unknown_names_let_through_stay_as_typed() -> None:
    """The names pattern takes names that start like known ones; the lookup gives the
    unknown ones back as typed."""
    snippets = {"use-mcp": "V", "ab": "AB"}
    for text in ("%use %use-mcpx %use-mc (%abc) %ab. %%abx %ax %%ax %use-mcp", "%abab %ab"):
        assert_same(text, snippets)
    assert expand("%use-mcpx %ab %abc", snippets).text == "%use-mcpx AB %abc"


def test_the_names_of_a_plain_mapping_count_not_its_order_alone() -> None:
    first = {"a": "A", "b": "B"}
    second = {"b": "A", "a": "B"}  # the same values, under the other names
    assert expand("%a", first).text == "A"
    assert expand("%a", second).text == "B"
    assert expand("%a", first).text == "A"


def test_a_table_is_made_once_per_generation_of_values() -> None:
    table = SnippetTable({"a": "A"})
    assert expansion._table_of(table) is table.table
    assert expand("%a", table).text == "A"


def test_replacements_are_counted_on_demand_by_the_replay() -> None:
    snippets = dict(SNIPPETS)
    result = expand("%a %zz %%q (((%a x(((%a %b", snippets)
    assert len(result.replacements) == 4
    assert len(result.replacements) == len(list(result.replacements))
    snippets["a"] = "NEW"  # the same names: the replay reads the values as they are
    assert [r.new_text for r in result.replacements] == ["NEW", "%q", "NEW", "b b"]


def test_nothing_to_replace_keeps_the_text_itself() -> None:
    text = "".join(["%zz 50% x%a ", "%%"])
    for snippets in (SNIPPETS, {"zzz": "Z"}, SnippetTable(SNIPPETS)):
        result = expand(text, snippets)
        assert result.text is text
        assert result.changed is False
        assert result.replacements == ()
        assert len(result.replacements) == 0
    same = expand("%a", {"a": "%a"})  # replaced, by the same text
    assert same.text == "%a"
    assert same.changed is False
    assert same.replacements == (Replacement(0, 2, "%a"),)


# --------------------------------------------------------------------------- which pattern


def _uses_the_trie(text: str, snippets: dict[str, str]) -> bool:
    expansion_patterns.patterns_of.cache_clear()  # the patterns of these names, new
    table = SnippetTable(snippets)
    assert_same(text, table)
    return table.table.patterns._trie is not None


def test_windows_full_of_unknown_names_take_the_trie() -> None:
    """The first window (of at least ``_SMALLEST_WINDOW`` characters) is a sample: more
    than a quarter of unknown names in it, and the next windows take the trie."""
    snippets = {"ab": "AB", "cd": "CD"}
    assert _uses_the_trie("%abx %cdx %abz %ab " * 40, snippets)  # 3 in 4 unknown
    assert _uses_the_trie("%abx %ab %cdx %ab " * 40, snippets)  # 2 in 4
    assert not _uses_the_trie("%ab %cd %ab %abx %cd %ab %cd %ab " * 20, snippets)  # 1 in 8
    assert not _uses_the_trie("%ab %cd 50% x%ab %zz " * 40, snippets)  # none taken unknown
    assert not _uses_the_trie("%abx %cdx %abz %ab", snippets)  # one window
    assert not _uses_the_trie("no marker here " * 40, snippets)


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize(
    ("captures", "votes"),
    [
        pytest.param("%a %a %a %zz", False, id="a-quarter"),
        pytest.param("%a %a %a %a %zz", False, id="a-fifth"),
        pytest.param("%a %a %zz %zz", True, id="a-half"),
        pytest.param("%a %a %a %zz %zz", True, id="two-fifths"),
        pytest.param("%zz", True, id="one-unknown"),
        pytest.param("%a", False, id="one-known"),
        pytest.param("%%zz %%zz %%zz %a", False, id="escapes-are-no-unknown-names"),
    ],
)
def test_a_sample_votes_for_the_trie_past_a_quarter_of_unknown_names(
    captures: str, votes: bool
) -> None:
    snippets = {"a": "A", "zzz": "Z"}
    patterns, lookup = expansion._table_of(snippets)
    parts = patterns.names_pattern.split(captures)
    assert expansion._by_names(list(parts), lookup, True) is votes
    assert expansion._by_names(list(parts), lookup, False) is False  # no sample, no vote


def test_a_sample_window_decides_for_the_windows_up_to_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Runs of unknown names, then of known ones: the pattern changes on the way, and the
    text is the same."""
    monkeypatch.setattr(expansion, "_SAMPLE", 3)
    snippets = {"ab": "AB", "cd": "CD"}
    rng = random.Random(80)
    pieces = ["%abx ", "%cdx ", "%ab ", "%cd ", "(((%ab ", "x(((%ab ", "%%ab ", "x ", "%zz "]
    unknown = [9, 9, 1, 1, 1, 1, 1, 1, 1]
    known = [1, 1, 9, 9, 1, 1, 1, 1, 1]
    for _ in range(sized(300)):
        runs = [
            rng.choices(pieces, rng.choice([unknown, known]), k=rng.randint(1, 40))
            for _ in range(4)
        ]
        assert_same("".join(piece for run in runs for piece in run), snippets)
