"""One expansion pass over a submitted prompt.

docs/grammar.md, "Expansion: one pass, no re-scan": the boundary rule, the name rule, escaping,
unknown markers and the Summary table, each as its own case; then properties
(identity, spans, agreement with completion) and a differential run against the
original extension's JavaScript.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pi_snippets_lsp.core.expansion import (
    ONCE_PLAIN_CHARS,
    Expansion,
    Replacement,
    SnippetTable,
    expand,
    expand_once,
)
from pi_snippets_lsp.core.grammar import NAME_PATTERN, find_token

from .conftest import RunNode, examples, random_texts

VALUE = "Use your MCP tools to find the information"
SNIPPETS = {
    "use-mcp": VALUE,
    "a": "AAA",
    "b": "BBB",
    "x.y": "DOT",
    "x-y": "HYPHEN",
    "x_y": "UNDER",
    "0start": "ZERO",
    "rec": "see %use-mcp",
}


def expands_to(text: str, expected: str, snippets: dict[str, str] | None = None) -> None:
    result = expand(text, SNIPPETS if snippets is None else snippets)
    assert result.text == expected
    assert result.changed is True


def stays_literal(text: str, snippets: dict[str, str] | None = None) -> None:
    result = expand(text, SNIPPETS if snippets is None else snippets)
    assert result.text == text
    assert result.changed is False


# --------------------------------------------------------------------------- summary


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("%use-mcp", VALUE, id="marker-becomes-the-snippet-value"),
        pytest.param("Please %use-mcp.", f"Please {VALUE}.", id="period-kept"),
        pytest.param("Check (%use-mcp)", f"Check ({VALUE})", id="wrappers-before-the-marker"),
        pytest.param("，%use-mcp", f"，{VALUE}", id="cjk-punctuation-is-a-boundary"),
        pytest.param("%rec", "see %use-mcp", id="value-is-not-re-expanded"),
        pytest.param("x%use-mcp", "x%use-mcp", id="glued-to-a-word-unchanged"),
        pytest.param("%unknown", "%unknown", id="unknown-marker-unchanged"),
        pytest.param("%%use-mcp", "%use-mcp", id="escape-yields-the-literal-marker"),
        pytest.param("git log --format=%h", "git log --format=%h", id="git-format-unchanged"),
    ],
)
def test_the_contract_summary_table(text: str, expected: str) -> None:
    result = expand(text, SNIPPETS)
    assert result.text == expected
    assert result.changed is (expected != text)


# --------------------------------------------------------------------------- escaping


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("%%use-mcp", "%use-mcp", id="configured-name"),
        pytest.param("%%nope", "%nope", id="unconfigured-name"),
        pytest.param("say %%use-mcp loudly", "say %use-mcp loudly", id="mid-sentence"),
        pytest.param("(%%use-mcp)", "(%use-mcp)", id="inside-wrappers"),
        pytest.param("%%use-mcp.", "%use-mcp.", id="trailing-period-kept"),
        pytest.param("%%a then %a", "%a then AAA", id="escape-and-marker-in-one-pass"),
        pytest.param("，%%a", "，%a", id="after-cjk-punctuation"),
    ],
)
def test_double_percent_name_at_a_boundary_yields_the_literal_marker(
    text: str, expected: str
) -> None:
    expands_to(text, expected)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("100 %%", id="bare-double-percent"),
        pytest.param("%%", id="only-double-percent"),
        pytest.param("%%%use-mcp", id="triple-percent"),
        pytest.param("%%Use-mcp", id="uppercase-name"),
        pytest.param("x%%use-mcp", id="not-at-a-boundary"),
        pytest.param("%%.a", id="name-starting-with-punctuation"),
    ],
)
def test_other_double_percent_shapes_stay_literal(text: str) -> None:
    stays_literal(text)


def test_escape_needs_configured_snippets_to_run_at_all() -> None:
    # With nothing configured the extension has no work to do and touches nothing.
    assert expand("%%name", {}) == Expansion(text="%%name", changed=False)


# --------------------------------------------------------------------------- name rule


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("%use-mcp.", f"{VALUE}.", id="period"),
        pytest.param("%a...", "AAA...", id="ellipsis"),
        pytest.param("%a-", "AAA-", id="hyphen"),
        pytest.param("%a_.", "AAA_.", id="underscore-period"),
        pytest.param("%a, ok", "AAA, ok", id="comma-is-not-in-the-name-run"),
        pytest.param("%x.y.", "DOT.", id="inner-dot-in-name-outer-dot-kept"),
        pytest.param("%a-.-_ x", "AAA-.-_ x", id="long-punctuation-run"),
    ],
)
def test_trailing_punctuation_is_re_emitted(text: str, expected: str) -> None:
    expands_to(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("%x.y", "DOT", id="dot"),
        pytest.param("%x-y", "HYPHEN", id="hyphen"),
        pytest.param("%x_y", "UNDER", id="underscore"),
        pytest.param("%0start", "ZERO", id="digit-first"),
    ],
)
def test_names_may_contain_dots_hyphens_and_underscores(text: str, expected: str) -> None:
    expands_to(text, expected)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("%use-mcpx", id="longer-run"),
        pytest.param("%use-mcpx.", id="longer-run-with-period"),
        pytest.param("%use-mcp2", id="longer-run-digit"),
        pytest.param("%use-mcp-x", id="longer-run-hyphen"),
        pytest.param("%use-mcp_x", id="longer-run-underscore"),
        pytest.param("%use-mcp.x", id="longer-run-dot"),
    ],
)
def test_a_longer_unknown_run_is_never_shortened_to_a_known_prefix(text: str) -> None:
    stays_literal(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("%Use-MCP", id="capitalized"),
        pytest.param("%USE-MCP", id="all-caps"),
        pytest.param("%A", id="one-uppercase-letter"),
        pytest.param("%.a", id="leading-period"),
        pytest.param("%-a", id="leading-hyphen"),
        pytest.param("%_a", id="leading-underscore"),
    ],
)
def test_names_are_lowercase_and_start_alphanumeric(text: str) -> None:
    stays_literal(text)


def test_an_uppercase_letter_ends_the_name_run() -> None:
    # The name run is [a-z0-9._-]: an uppercase letter is outside it, so it ends the
    # marker exactly as it does in the original's regex (no look-ahead there).
    expands_to("%aB", "AAAB")


# --------------------------------------------------------------------------- one pass


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("%rec", "see %use-mcp", id="value-mentions-a-marker"),
        pytest.param("%rec %a", "see %use-mcp AAA", id="value-then-another-marker"),
        pytest.param("%a %b %a", "AAA BBB AAA", id="every-marker"),
        pytest.param("%a, %b, and %use-mcp", f"AAA, BBB, and {VALUE}", id="in-a-list"),
        pytest.param("%use-mcp%use-mcp", f"{VALUE}%use-mcp", id="second-glued-stays"),
        pytest.param("%a%b", "AAA%b", id="glued-pair"),
    ],
)
def test_one_left_to_right_pass_never_re_scans_values(text: str, expected: str) -> None:
    expands_to(text, expected)


def test_a_value_that_inserts_the_same_text_is_no_change() -> None:
    result = expand("%a %a", {"a": "%a"})
    assert result.text == "%a %a"
    assert result.changed is False


def test_a_value_is_inserted_literally() -> None:
    value = "$1 ${x} \\n \\ %b {{a}} \r\n end"
    assert expand("%a", {"a": value, "b": "BBB"}).text == value


# --------------------------------------------------------------------------- boundaries


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("line one\n%a\nline three", "line one\nAAA\nline three", id="lf-lines"),
        pytest.param("one\r\n%a\r\n%b\r\n", "one\r\nAAA\r\nBBB\r\n", id="crlf-kept"),
        pytest.param("one\r%a\r%b", "one\rAAA\rBBB", id="lone-cr"),
        pytest.param("%a\n%b\n%a", "AAA\nBBB\nAAA", id="marker-on-every-line"),
        pytest.param("%a\n\n\n%b", "AAA\n\n\nBBB", id="blank-lines-between"),
        pytest.param("tab\t%a\there", "tab\tAAA\there", id="tab"),
        pytest.param("a\u00a0%a", "a\u00a0AAA", id="nbsp"),
        pytest.param("a\u3000%a", "a\u3000AAA", id="ideographic-space"),
        pytest.param("a\ufeff%a", "a\ufeffAAA", id="zwnbsp"),
        pytest.param("a\u2028%a", "a\u2028AAA", id="line-separator"),
        pytest.param("100 %a?", "100 AAA?", id="after-a-number-and-space"),
        pytest.param("😀 %a", "😀 AAA", id="after-emoji-and-space"),
    ],
)
def test_markers_expand_after_whitespace_and_at_line_starts(text: str, expected: str) -> None:
    expands_to(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("，%a", "，AAA", id="fullwidth-comma"),
        pytest.param("。%a", "。AAA", id="ideographic-full-stop"),
        pytest.param("、%a", "、AAA", id="ideographic-comma"),
        pytest.param("；%a", "；AAA", id="fullwidth-semicolon"),
        pytest.param("：%a", "：AAA", id="fullwidth-colon"),
        pytest.param("！%a", "！AAA", id="fullwidth-bang"),
        pytest.param("（%a）", "（AAA）", id="fullwidth-parens"),
        pytest.param("「%a」", "「AAA」", id="corner-brackets"),
        pytest.param("…%a", "…AAA", id="ellipsis-char"),
        pytest.param("这是，%a。", "这是，AAA。", id="in-a-chinese-sentence"),
        pytest.param("请%a", "请%a", id="after-han-letter-unchanged"),
        pytest.param("です%a", "です%a", id="after-hiragana-unchanged"),
        pytest.param("（x%a", "（x%a", id="letter-after-cjk-punctuation-unchanged"),
    ],
)
def test_cjk_boundaries(text: str, expected: str) -> None:
    result = expand(text, SNIPPETS)
    assert result.text == expected
    assert result.changed is (expected != text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("x%a", id="letter"),
        pytest.param("5%a", id="digit"),
        pytest.param("-%a", id="hyphen"),
        pytest.param(",%a", id="comma"),
        pytest.param(":%a", id="colon"),
        pytest.param("'%a'", id="single-quotes"),
        pytest.param('"%a"', id="double-quotes"),
        pytest.param("path%a", id="end-of-a-word"),
        pytest.param("a\x85%a", id="nel-is-not-js-whitespace"),
        pytest.param("a\x1c%a", id="file-separator-is-not-js-whitespace"),
        pytest.param("x(%a)", id="wrapper-after-letter"),
    ],
)
def test_no_expansion_without_a_boundary(text: str) -> None:
    stays_literal(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("(%a)", "(AAA)", id="parens"),
        pytest.param("[[%a]]", "[[AAA]]", id="double-brackets"),
        pytest.param("{%a}", "{AAA}", id="braces"),
        pytest.param("<%a>", "<AAA>", id="angles"),
        pytest.param("`%a`", "`AAA`", id="backticks"),
        pytest.param("([`%a`])", "([`AAA`])", id="mixed-wrappers"),
        pytest.param("see (%a) and [%b]", "see (AAA) and [BBB]", id="two-wrapped-markers"),
    ],
)
def test_wrappers_before_the_marker(text: str, expected: str) -> None:
    expands_to(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("```\n%a\n```", "```\nAAA\n```", id="fenced-block"),
        pytest.param("```sh\necho %a\n```", "```sh\necho AAA\n```", id="fenced-shell"),
        pytest.param("```%a```", "```AAA```", id="backtick-fence-is-a-wrapper-run"),
    ],
)
def test_markers_inside_fenced_code_blocks_expand(text: str, expected: str) -> None:
    expands_to(text, expected)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("git log --format=%h", id="git-format"),
        pytest.param("printf %s", id="printf"),
        pytest.param("printf '%s\\n' x", id="printf-quoted"),
        pytest.param("SELECT * FROM t WHERE name LIKE 'a%'", id="sql-like-suffix"),
        pytest.param("WHERE name LIKE '%a%'", id="sql-like-quoted-configured-name"),
        pytest.param("100%", id="percent-sign"),
        pytest.param("100 % of it", id="standalone-percent"),
        pytest.param("date +%Y-%m-%d", id="date-format"),
        pytest.param("nothing here", id="no-percent"),
    ],
)
def test_ordinary_uses_of_percent_pass_through(text: str) -> None:
    stays_literal(text)


def test_a_printf_shaped_configured_marker_after_a_space_expands() -> None:
    # The documented trade-off: the rule is syntax-based.
    expands_to("printf %a now", "printf AAA now")


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("%a", id="marker"),
        pytest.param("%%a", id="escape"),
        pytest.param("no marker", id="plain"),
        pytest.param("", id="empty"),
    ],
)
def test_no_snippets_configured_returns_the_text_unchanged(text: str) -> None:
    assert expand(text, {}) == Expansion(text=text, changed=False, replacements=())


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("%unknown and %other", id="only-unknown-markers"),
        pytest.param("no percent at all", id="no-percent"),
        pytest.param("", id="empty"),
    ],
)
def test_changed_is_false_when_nothing_changed(text: str) -> None:
    assert expand(text, SNIPPETS) == Expansion(text=text, changed=False, replacements=())


def test_replacements_report_each_marker_span() -> None:
    result = expand("(%a) x %%b.\n%b", SNIPPETS)
    assert result.text == "(AAA) x %b.\nBBB"
    assert result.replacements == (
        Replacement(start=1, end=3, new_text="AAA"),
        Replacement(start=7, end=10, new_text="%b"),
        Replacement(start=12, end=14, new_text="BBB"),
    )


def test_replacement_spans_count_code_points_after_emoji() -> None:
    result = expand("😀 %a", SNIPPETS)
    assert result.replacements == (Replacement(start=2, end=4, new_text="AAA"),)


# --------------------------------------------------------------------------- properties

#: Characters and pieces that make boundaries interesting.
BOUNDARY_PIECES = st.sampled_from(
    [
        " ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\ufeff", "\u2028", "\x85",
        "\x1c", "，", "。", "「", "中", "あ", "(", "[", "{", "<", "`", "((", ")", ",",
        ":", "'", "-", ".", "_", "x", "A", "1", "😀", "%", "%%",
    ]
)  # fmt: skip
NAMES = st.from_regex(NAME_PATTERN, fullmatch=True).filter(lambda n: len(n) <= 12)
SNIPPET_TABLES = st.dictionaries(NAMES, st.text(min_size=1, max_size=20), max_size=5)


@st.composite
def prompts(draw: st.DrawFn, names: list[str] | None = None) -> str:
    """Texts mixing boundary pieces, markers of configured and other names, and noise."""
    marker_names = st.sampled_from(names) if names else NAMES
    piece = st.one_of(
        BOUNDARY_PIECES,
        marker_names.map(lambda n: "%" + n),
        marker_names.map(lambda n: "%%" + n),
        st.text(max_size=3),
    )
    return "".join(draw(st.lists(piece, max_size=12)))


@given(text=st.text())
def test_expansion_with_no_snippets_is_the_identity(text: str) -> None:
    assert expand(text, {}) == Expansion(text=text, changed=False)


@given(text=st.text().map(lambda t: t.replace("%", "")), snippets=SNIPPET_TABLES)
def test_expansion_of_a_text_without_percent_is_the_identity(
    text: str, snippets: dict[str, str]
) -> None:
    assert expand(text, snippets) == Expansion(text=text, changed=False)


@st.composite
def prompts_and_snippets(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    snippets = draw(SNIPPET_TABLES)
    return draw(prompts(sorted(snippets))), snippets


@settings(max_examples=examples(200))
@given(case=prompts_and_snippets())
def test_expansion_never_touches_text_outside_the_replacement_spans(
    case: tuple[str, dict[str, str]],
) -> None:
    text, snippets = case
    result = expand(text, snippets)
    rebuilt: list[str] = []
    last = 0
    for replacement in result.replacements:
        assert last <= replacement.start < replacement.end <= len(text)
        marker = text[replacement.start : replacement.end]
        # Only a marker is ever replaced: ``%name`` by its value, ``%%name`` by ``%name``.
        if marker.startswith("%%"):
            assert replacement.new_text == marker[1:]
        else:
            assert marker.startswith("%")
            assert replacement.new_text == snippets[marker[1:]]
        rebuilt.append(text[last : replacement.start])
        rebuilt.append(replacement.new_text)
        last = replacement.end
    rebuilt.append(text[last:])
    event(f"replacements: {min(len(result.replacements), 3)}")
    assert "".join(rebuilt) == result.text
    assert result.changed is (result.text != text)
    if not result.replacements:
        assert result.text == text


@st.composite
def completion_cases(draw: st.DrawFn) -> tuple[str, str, dict[str, str]]:
    snippets = draw(SNIPPET_TABLES.filter(bool))
    name = draw(st.sampled_from(sorted(snippets)))
    before = draw(prompts(sorted(snippets)))
    return before, name, snippets


@settings(max_examples=examples(300))
@given(case=completion_cases())
def test_completion_and_expansion_agree_about_what_a_token_is(
    case: tuple[str, str, dict[str, str]],
) -> None:
    """A position where the popup can open is a position where submission expands."""
    before, name, snippets = case
    token = find_token(before + "%" + name)
    completes_here = token is not None and token.start == len(before)
    event(f"completes here: {completes_here}")
    result = expand(before + "%" + name + " ", snippets)
    here = Replacement(start=len(before), end=len(before) + 1 + len(name), new_text=snippets[name])
    assert (here in result.replacements) is completes_here
    if not completes_here:
        assert all(r.start != len(before) for r in result.replacements)


# --------------------------------------------------------------------------- one text


def test_expand_once_is_expand() -> None:
    """The pass for a table used once (the ``expand`` command) gives what ``expand``
    gives, on short texts (the plain scan) and on longer ones, replacements included."""
    snippets = {"a": "A", "use-mcp": "V", "x.y": "D", "1": "ONE", "mcp": "%a", "same": "%same"}
    texts = random_texts(seed=3317, count=2000)
    texts += ["", "%same", "no marker", "%%a", "%nope", "%a" * (ONCE_PLAIN_CHARS // 2)]
    texts += [" %a" * (ONCE_PLAIN_CHARS // 3 + 1), "x" * ONCE_PLAIN_CHARS + " %a"]
    for table in (snippets, SnippetTable(snippets), {}):
        for text in texts:
            once, full = expand_once(text, table), expand(text, table)
            assert (once.text, once.changed) == (full.text, full.changed), text[:80]
            assert list(once.replacements) == list(full.replacements), text[:80]
            assert once.text is text or once.changed


# --------------------------------------------------------------------------- JavaScript


def test_expansion_agrees_with_the_original_javascript(node: RunNode) -> None:
    snippets = {"a": "A", "use-mcp": "V", "x.y": "D", "1": "ONE", "mcp": "%a", "b": "b b"}
    texts = random_texts(seed=424242, count=5000)
    payload = json.dumps({"snippets": snippets, "texts": texts})
    results = json.loads(node("reference.mjs", stdin=payload))
    assert len(results) == len(texts)
    disagreements = []
    changed = 0
    for text, reference in zip(texts, results, strict=True):
        ours = expand(text, snippets)
        changed += ours.changed
        if (ours.text, ours.changed) != (reference["expanded"], reference["changed"]):
            disagreements.append((text, ours.text, reference["expanded"]))
    assert disagreements == []
    assert changed > 500  # the generator does reach real markers
