"""The catalog of a generation (``core.catalog``): the one rule by which every front end
finds a snippet by name, answers an unknown name with the closest ones, and words the
note for a project settings file it did not read."""

from __future__ import annotations

import pytest

from pi_snippets_lsp.core import catalog
from pi_snippets_lsp.core.catalog import closest_names, snippet_named, untrusted_note
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.ranking import fuzzy_filter
from pi_snippets_lsp.core.snippet import Snippet

NAMES = ("brief", "focus", "refactor", "review", "status", "use-mcp")


def config_of(*names: str, source: str = "/u/settings.json") -> Config:
    return Config(snippets=tuple(Snippet(n, f"text of {n}", source) for n in sorted(names)))


CONFIG = config_of(*NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_snippet_is_found_by_its_exact_name(name: str) -> None:
    assert snippet_named(CONFIG, name) == Snippet(name, f"text of {name}", "/u/settings.json")


@pytest.mark.parametrize("name", ["", "Review", "revie", "review ", "%review", "nope"])
def test_any_other_name_finds_nothing(name: str) -> None:
    assert snippet_named(CONFIG, name) is None
    assert snippet_named(config_of(), name) is None


@pytest.mark.parametrize(
    ("name", "closest"),
    [
        pytest.param("revew", ["review"], id="a-letter-missing"),
        pytest.param("%review", ["review"], id="the-marker-named"),
        pytest.param("rf", ["refactor", "brief"], id="fuzzy"),
        pytest.param("us", ["use-mcp", "focus", "status"], id="popup-order-not-a-z"),
        pytest.param("reveiw", ["review"], id="typo-via-its-prefix-reve"),
        pytest.param("statsu", ["status"], id="typo-via-its-prefix-stats"),
        pytest.param("re" + "x" * 60, ["refactor", "review", "brief"], id="long-via-re"),
        pytest.param("zzz", [], id="nothing-like-it"),
        pytest.param("qz", [], id="two-characters-nothing"),
        pytest.param("q", [], id="one-character-nothing"),
        pytest.param("", [], id="empty"),
        pytest.param("%", [], id="only-the-trigger"),
        pytest.param("  ", [], id="blank"),
    ],
)
def test_the_closest_names(name: str, closest: list[str]) -> None:
    assert closest_names(CONFIG, name) == closest


def test_a_prefix_is_tried_only_from_two_characters() -> None:
    # "sx": the whole matches nothing and its one-character prefix "s" would match
    # almost every name: nothing is suggested.
    assert closest_names(CONFIG, "sx") == []
    assert closest_names(CONFIG, "stx") == ["status"]


def test_the_longest_matching_prefix_wins() -> None:
    config = config_of("ab", "abcd", "abcdef")
    assert closest_names(config, "abcdeXYZ") == ["abcdef"]  # three edits: no typo
    assert closest_names(config, "abcX") == ["abcd", "abcdef"]
    assert closest_names(config, "abX") == ["ab", "abcd", "abcdef"]
    assert closest_names(config, "abX", 2) == ["ab", "abcd"]  # the limit holds for a prefix


def test_closest_names_are_pi_ranked_and_at_most_the_limit() -> None:
    names = ["re", "rev", "review", "preview", "reverse", "brief"]
    config = config_of(*names)
    ranked = fuzzy_filter(sorted(names), "rev", lambda n: n)
    assert closest_names(config, "rev") == ranked[: catalog.CLOSEST]
    assert closest_names(config, "rev", 5) == ranked[:5]
    assert closest_names(config, "rev", 1) == ranked[:1]
    assert closest_names(config, "rev", 0) == []
    assert closest_names(config, "e") == ranked_for(config, "e")[:3]


def ranked_for(config: Config, query: str) -> list[str]:
    return fuzzy_filter([s.name for s in config.snippets], query, lambda n: n)


def test_a_name_longer_than_the_ranked_limit_suggests_nothing() -> None:
    config = config_of("a" * 300)
    longest = "a" * catalog.LONGEST_RANKED_NAME
    assert closest_names(config, longest) == ["a" * 300]
    assert closest_names(config, "%" + longest) == ["a" * 300]
    assert closest_names(config, longest + "a") == []


def test_no_snippets_no_suggestions() -> None:
    assert closest_names(config_of(), "review") == []


@pytest.mark.parametrize(
    ("how", "note"),
    [
        (
            "set trustProjectSettings",
            "skipped project settings /p/.pi/settings.json: the project is not trusted "
            "(set trustProjectSettings to read it)",
        ),
        (
            catalog.TRUST_FLAG_HINT,
            "skipped project settings /p/.pi/settings.json: the project is not trusted "
            "(pass --trust-project to read it)",
        ),
    ],
)
def test_the_untrusted_project_note(how: str, note: str) -> None:
    assert untrusted_note("/p/.pi/settings.json", how) == note


def test_a_typo_comes_first_then_pi_ranked_names() -> None:
    """Two letters swapped hold no subsequence of the name (Pi's ranking finds nothing
    for it): the typo rule of the editors' hints names it first, ranked names follow."""
    config = config_of("rebase", "review", "reviewer")
    assert closest_names(config, "reveiw") == ["review", "reviewer"]
    assert closest_names(config, "reveiw", 1) == ["review"]
    assert closest_names(config, "%revew") == ["review", "reviewer"]


def test_a_typo_that_pi_ranks_nowhere_is_still_named() -> None:
    """``erview``: two letters swapped at the start leave no subsequence of ``review``,
    nor of any prefix: only the typo rule finds it."""
    config = config_of("rebase", "review")
    assert closest_names(config, "erview") == ["review"]
