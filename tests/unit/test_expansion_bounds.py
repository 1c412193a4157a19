"""The fast expansion pass against the previous one, and its memory bound.

``expand`` scans for ``%`` candidates and checks the boundary backwards only there
(``MARKER_CANDIDATE_RE`` + ``is_boundary_before``). Its results must be exactly those of
the previous pass, kept below as the reference: ``MARKER_PATTERN`` (the grammar written as one
Unicode regex) tried at every position. And whatever the number of markers, expanding a
text uses a few times its size in memory (the previous pass kept ~50 bytes per marker).
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import tracemalloc
from collections.abc import Iterator, Mapping

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core import expansion
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
    assert snippets.pattern  # made once per table, not per text
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
def first_pairs(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every table takes the pattern of a large one (first pairs, unknown names let through)."""
    monkeypatch.setattr(expansion, "_MOST_TRIE_NAMES", 0)
    expansion._pattern.cache_clear()
    expansion._marker_pattern.cache_clear()
    yield
    expansion._pattern.cache_clear()
    expansion._marker_pattern.cache_clear()


WINDOW_PIECES = [*PIECES, "((", "([`", "(((", "[{<`(", "，(", "x(", "%%%", "%a.", "%a-x"]


@pytest.mark.usefixtures("small_windows")
def test_the_fast_pass_equals_the_previous_one_window_by_window() -> None:
    """A cut after any character no marker holds (wrappers and separators included)
    changes nothing: each window sees the character before it."""
    rng = random.Random(77)
    for _ in range(sized(300)):
        text = "".join(rng.choices(WINDOW_PIECES, k=rng.randint(1, 60)))
        assert_same(text, SNIPPETS)


@pytest.mark.usefixtures("first_pairs")
def test_the_pattern_of_a_large_table_lets_unknown_names_through_unchanged() -> None:
    rng = random.Random(78)
    for _ in range(sized(2_000)):
        text = "".join(rng.choices(WINDOW_PIECES, k=rng.randint(1, 12)))
        assert_same(text, SNIPPETS)
    # Names that share their first pairs with known ones, and a one-character name.
    assert_same("%use %use-mcpx %use-mc %u %a %ab (%a) x%a %%u %%use-mcp", SNIPPETS)


@pytest.mark.usefixtures("first_pairs", "small_windows")
@settings(max_examples=examples(300))
@given(snippets=SNIPPET_TABLES, data=st.data())
def test_the_pattern_of_a_large_table_equals_the_previous_pass(
    snippets: dict[str, str], data: st.DataObject
) -> None:
    assert_same(data.draw(prompts(sorted(snippets))), snippets)


@pytest.mark.parametrize("run", range(7))
@pytest.mark.parametrize("before", ["", " ", "x", "，", "é", "%", ")", "\n"])
def test_runs_of_wrappers_of_every_length(before: str, run: int) -> None:
    """The pattern checks runs of up to two wrappers itself; a longer run is walked back."""
    for wrappers in ("(" * run, "[`{<("[:run], "`" * run):
        for marker in ("%a", "%%a", "%zz"):
            assert_same(f"{before}{wrappers}{marker} {before}{wrappers}{marker}", SNIPPETS)


@pytest.mark.usefixtures("small_windows")
def test_a_long_run_where_no_cut_may_fall_takes_the_plain_scan() -> None:
    text = "((%a" * 300 + " %a " + "%a%%a-" * 200
    assert_same(text, SNIPPETS)
    assert_same("x" + text, SNIPPETS)


@pytest.mark.parametrize("length", [99, 100, 101, 400])
def test_long_names_expand(length: int) -> None:
    """A name too long for the trie (the ``re`` compiler recurses per nesting level)
    puts its table on the first pairs; names that nest deeply are no trouble either."""
    long = "a" * length
    snippets = {"a" * k: str(k) for k in range(1, 40)} | {long: "LONG", "b": "B"}
    text = f"%{long} %{long}b %{'a' * 30} (%b) %%{long}"
    expanded = assert_same(text, snippets)
    assert expanded.text == f"LONG %{long}b 30 (B) %{long}"


def test_a_plain_mapping_with_keys_that_are_no_names() -> None:
    """Only valid names can be markers: a key like ``%a`` is never looked up, so an escape
    (whose capture is ``%a``) stays an escape."""
    snippets = {"%a": "NO", "A": "NO", "": "NO", "a": "yes", "%%a": "NO"}
    result = assert_same("%%a %A %a % %%%a", snippets)
    assert result.text == "%a %A yes % %%%a"


def test_a_generation_makes_its_pattern_once() -> None:
    table = SnippetTable({"a": "A", "Bad": "x"})
    assert table.pattern is table.pattern
    assert table == {"a": "A", "Bad": "x"}
    assert expand("%a %Bad", table).text == "A %Bad"
    assert SnippetTable().pattern[0].search("%a") is None  # nothing to find
    config = Config(snippets=(Snippet("a", "A", "test"),))
    assert isinstance(config.values, SnippetTable)
    assert dict(config.values) == {"a": "A"}


NAME_SETS = st.sets(NAMES, min_size=1, max_size=12)


@settings(max_examples=examples(200))
@given(names=NAME_SETS, other=NAMES)
def test_the_trie_matches_exactly_its_names(names: set[str], other: str) -> None:
    trie = re.compile(expansion._trie(sorted(names)))
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
    pairs = re.compile(expansion._first_pairs(sorted(names)))
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
    assert (re.match(expansion._first_pairs(names), text) is not None) == starts


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
    in windows of some 16 KB, not of a 64th of it."""
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
    assert table.marker_pattern is table.marker_pattern
    assert list(marker_pieces("%a", table)) == [(["", ""], ["%a"])]


def test_a_text_comes_in_about_a_64th_windows_of_at_most_16_ki() -> None:
    text = "x %a y " * 15_000  # 105,000 characters: windows of some 1,640
    windows = assert_pieces(text, SNIPPETS)
    assert 32 < len(windows) <= 65


@pytest.mark.parametrize("large", [False, True])
def test_an_ordinary_text_is_split_without_the_plain_scan(
    large: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plain scan costs a Python step per marker: only a window the pattern cannot
    answer alone takes it (a long run, three wrappers, a large table's unknown name)."""
    text = "x %a (%use-mcp) [`%%b` %1\n" * 5_000
    expected = list(marker_pieces(text, SNIPPETS))
    if large:
        monkeypatch.setattr(expansion, "_MOST_TRIE_NAMES", 0)
        expansion._marker_pattern.cache_clear()

    def scan(*args: object) -> Iterator[tuple[int, int, str]]:
        raise AssertionError("the plain scan")

    monkeypatch.setattr(expansion, "marker_spans", scan)
    try:
        assert list(marker_pieces(text, SNIPPETS)) == expected
    finally:
        expansion._marker_pattern.cache_clear()


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
    assert expansion._known(frozenset(names))[1] is exact
