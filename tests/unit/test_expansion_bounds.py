"""The fast expansion pass against the previous one, and its memory bound.

``expand`` scans for ``%`` candidates and checks the boundary backwards only there
(``MARKER_CANDIDATE_RE`` + ``is_boundary_before``). Its results must be exactly those of
the previous pass, kept below as the reference: ``MARKER_PATTERN`` (the grammar written as one
Unicode regex) tried at every position. And whatever the number of markers, expanding a
text uses a few times its size in memory (the previous pass kept ~50 bytes per marker).
"""

from __future__ import annotations

import random
import sys
import tracemalloc
from collections.abc import Mapping

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_snippets_lsp.core.expansion import Expansion, Replacement, Replacements, expand
from pi_snippets_lsp.core.grammar import MARKER_PATTERN, TRIGGER

from .conftest import PIECES, examples, random_texts, sized
from .test_expansion import SNIPPET_TABLES, prompts

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
    snippets = {"a": "AB"}  # the output is as large as the input
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
