"""The bench's inputs, generated from a fixed seed, in several shapes per measure.

A figure one input shape can satisfy proves little: real snippet libraries name their
snippets from a few shared words, people type one or two characters after ``%`` far more
often than five, and a prompt dense with ``%`` may be all escapes or all ``50%``. So
each measure has several shapes, and the bench reports the worst:

- name vocabularies (``VOCABULARIES``): random syllables (``bako-lemi``, names that share
  little), a small shared vocabulary of words (``review-code-tests``: most names share
  words and letters), and namespaced names (``acme.web.fix-diff-3``: every name starts
  with one of a few prefixes, so no name starts with what is typed after the prefix);
- queries of every length from 0 to 4 characters (``queries``);
- prose (``PROSE``) and dense texts (``DENSE``) whose mix of escapes, lone ``%``,
  unknown, non-boundary and wrapped markers differs from one to the next.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from pi_snippets_lsp.core.ranking import FuzzyIndex

_SYLLABLES = [c + v for c in "bdfklmnprstvz" for v in "aeiou"]
#: Filler words of prose and snippet values.
_WORDS = (
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "was", "on", "be",
    "by", "this", "are", "or", "from", "at", "which", "an", "have", "not", "they", "all", "one",
    "there", "their", "but", "we", "can", "more", "about", "if", "would", "when", "what", "so",
    "some", "into", "other", "time", "could", "these", "two", "may", "then", "first", "any",
    "like", "now", "only", "its", "over", "also", "review", "code", "please", "check", "tests",
    "before", "after", "change", "file", "error", "value", "prompt", "answer", "function",
    "module", "server", "client", "request", "update", "diff", "commit", "branch", "merge",
    "build", "run", "café", "naïve", "résumé", "déjà",
)  # fmt: skip
#: The small vocabulary snippet names are built from (``words``, ``namespaced``).
_NAME_WORDS = (
    "review", "code", "test", "tests", "commit", "diff", "plan", "fix", "bug", "docs", "api",
    "mcp", "use", "check", "write", "explain", "summary", "refactor", "prompt", "spec",
    "draft", "reply", "style", "release",
)  # fmt: skip
_NAMESPACES = ("acme", "team", "ops", "web", "ml", "infra")
_AREAS = (
    "backend", "frontend", "data", "deploy", "review", "docs", "tests", "chat", "search",
    "billing", "auth", "mobile",
)  # fmt: skip


def _syllable_name(rng: random.Random) -> str:
    words = [
        "".join(rng.choices(_SYLLABLES, k=rng.randint(1, 3))) for _ in range(rng.randint(1, 3))
    ]
    name = rng.choice("-" * 6 + "._").join(words)
    if rng.random() < 0.2:
        name += str(rng.randint(1, 99))
    return name


def _word_name(rng: random.Random) -> str:
    (count,) = rng.choices((1, 2, 3, 4), (1, 4, 4, 2))
    name = rng.choice("-" * 8 + "._").join(rng.choices(_NAME_WORDS, k=count))
    if rng.random() < 0.3:
        name += rng.choice(("", "-", "v")) + str(rng.randint(1, 99))
    return name


def _namespaced_name(rng: random.Random) -> str:
    leaf = "-".join(rng.choices(_NAME_WORDS, k=rng.randint(1, 2)))
    if rng.random() < 0.5:
        leaf += f"-{rng.randint(1, 999)}"
    return f"{rng.choice(_NAMESPACES)}.{rng.choice(_AREAS)}.{leaf}"


VOCABULARIES: dict[str, Callable[[random.Random], str]] = {
    "syllables": _syllable_name,
    "words": _word_name,
    "namespaced": _namespaced_name,
}


def snippet_names(vocabulary: str, count: int, rng: random.Random) -> list[str]:
    """``count`` distinct valid names from one vocabulary, in the order generated (a
    settings file lists its snippets in no particular order; Pi sorts them)."""
    make = VOCABULARIES[vocabulary]
    names: dict[str, None] = {}
    while len(names) < count:
        names[make(rng)] = None
    return list(names)


def snippet_value(chars: int, rng: random.Random) -> str:
    words: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:chars].rstrip() + "."


def snippet_table(vocabulary: str, count: int, value_chars: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    names = snippet_names(vocabulary, count, rng)
    return {name: snippet_value(value_chars, rng) for name in names}


# ---------------------------------------------------------------------- queries


_QUERY_START = "abcdefghijklmnopqrstuvwxyz0123456789"
_QUERY_CHARS = _QUERY_START + "._-"


def queries(
    names: Sequence[str], length: int, most: int, repeats: int, rng: random.Random
) -> list[str]:
    """Queries of ``length`` characters a person types after ``%`` over ``names``.

    Length 0 is the empty query, sent ``20 * repeats`` times. Lengths 1 and 2 are every
    query of that length that matches at least one name (up to ``most``, drawn at
    random), one-character ones each ``repeats`` times. Longer ones are distinct
    prefixes of names and characters picked in order from them (fuzzy typing), up to
    ``most``: distinct, so no result cache can carry a figure.
    """
    if length == 0:
        return [""] * (20 * repeats)
    if length <= 2:
        index = FuzzyIndex(names)
        candidates = [a for a in _QUERY_START] if length == 1 else [
            a + b for a in _QUERY_START for b in _QUERY_CHARS
        ]  # fmt: skip
        matching = [q for q in candidates if index.rank(q, 1).indices]
        if len(matching) > most:
            matching = rng.sample(matching, most)
        picked = matching * (repeats if length == 1 else 1)
        rng.shuffle(picked)
        return picked
    seen: set[str] = set()
    found: list[str] = []
    attempts = 0
    while len(found) < most and attempts < most * 200:
        attempts += 1
        name = rng.choice(names)
        if len(name) < length:
            continue
        if rng.random() < 0.5:
            query = name[:length]
        else:
            picks = sorted(rng.sample(range(len(name)), k=length))
            query = "".join(name[i] for i in picks)
        if query[0] not in _QUERY_START or query in seen:
            continue
        seen.add(query)
        found.append(query)
    return found


# ---------------------------------------------------------------------- texts


def _prose_words(
    nbytes: int, rng: random.Random, marker_every: tuple[int, int], marker: Callable[[], str]
) -> str:
    """Sentences and paragraphs of plain words with a marker every so many words."""
    out: list[str] = []
    size = 0
    words_left = rng.randint(*marker_every)
    sentence = 0
    while size < nbytes:
        words_left -= 1
        if words_left <= 0:
            words_left = rng.randint(*marker_every)
            piece = marker()
        else:
            piece = rng.choice(_WORDS)
        sentence += 1
        if sentence > rng.randint(8, 20):
            sentence = 0
            piece += rng.choice([". ", ". ", ".\n", ".\n\n", "? "])
        else:
            piece += " "
        out.append(piece)
        size += len(piece.encode("utf-8"))
    return "".join(out)


def prose(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """English prose, one known ``%name`` per ~100 words."""

    def marker() -> str:
        known = "%" + rng.choice(names)
        return rng.choice([known, known, f"({known})", known + "."])

    return _prose_words(nbytes, rng, (80, 120), marker)


def prose_markers(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """Prose that uses snippets a lot: a marker every ~12 words, wrapped, escaped or
    unknown now and then, and some ``50%`` figures."""

    def marker() -> str:
        known = "%" + rng.choice(names)
        return rng.choice(
            [known, known, known, f"({known})", f"`{known}`", known + ",", "%" + known,
             "%unknown-name", f"{rng.randint(1, 99)}%"]
        )  # fmt: skip

    return _prose_words(nbytes, rng, (6, 18), marker)


_CJK_TEXT = "我们需要检查这段代码的错误并且写测试然后提交修改请先阅读文档再回答问题"
_CJK_PUNCTUATION = "，。、：；！？"


def prose_cjk(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """Chinese prose (three bytes a character, no spaces), a marker after CJK
    punctuation or a space every ~60 characters."""
    out: list[str] = []
    size = 0
    while size < nbytes:
        run = "".join(rng.choices(_CJK_TEXT, k=rng.randint(8, 30)))
        piece = run + rng.choice(_CJK_PUNCTUATION)
        if rng.random() < 0.35:
            piece += rng.choice(["", " "]) + "%" + rng.choice(names)
        if rng.random() < 0.1:
            piece += "\n"
        out.append(piece)
        size += len(piece.encode("utf-8"))
    return "".join(out)


PROSE: dict[str, Callable[[int, Sequence[str], random.Random], str]] = {
    "prose": prose,
    "markers": prose_markers,
    "cjk": prose_cjk,
}


def _unknown(rng: random.Random) -> str:
    return "".join(rng.choices("abcxyz", k=rng.randint(2, 8)))


def _dense(
    nbytes: int, rng: random.Random, shapes: Sequence[Callable[[], str]], weights: Sequence[float]
) -> str:
    out: list[str] = []
    size = 0
    while size < nbytes:
        (shape,) = rng.choices(shapes, weights)
        piece = shape() + rng.choice([" ", " ", " ", "\n", "\t", "\u3000"])
        out.append(piece)
        size += len(piece.encode("utf-8"))
    return "".join(out)


def dense_mixed(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """Most tokens carry a ``%`` that must stay as typed (``100 %``, ``%%``, unknown and
    non-boundary markers); one in ~20 is a known marker or an escape."""
    shapes: list[Callable[[], str]] = [
        lambda: "100 %",
        lambda: f"{rng.randint(1, 99)}%",
        lambda: "%%",
        lambda: "%",
        lambda: "%" + _unknown(rng),
        lambda: "(%" + _unknown(rng) + ")",
        lambda: "%" + rng.choice(names) + "x",  # a longer run is never shortened
        lambda: "%Name",
        lambda: "%%%a",
        lambda: "x%" + rng.choice(names),  # not at a boundary
        lambda: "--format=%h",
        lambda: "a=%b",
        lambda: f"{rng.randint(1, 99)}%off",
        lambda: rng.choice(_WORDS),
        lambda: rng.choice(["%", "，%", "(%", "%%"]) + rng.choice(names),  # known, escape
    ]
    return _dense(nbytes, rng, shapes, [1.0] * (len(shapes) - 1) + [0.7])


def dense_unknown(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """printf formats and URL escapes: unknown names at a boundary (``%s``, ``%20``,
    ``(%d)``), each of which the pass must look up; one in ~25 a known marker."""
    shapes: list[Callable[[], str]] = [
        lambda: rng.choice(["%s", "%d", "%x", "%f", "%i", "%u", "%c", "%p", "%ld", "%lu"]),
        lambda: rng.choice(["%20", "%2f", "%3a", "%3d", "%0a", "%22", "%25"]),
        lambda: "(%" + rng.choice("sdxf") + ")",
        lambda: "%y-%m-%d",
        lambda: "%" + _unknown(rng),
        lambda: "%" + rng.choice(names) + rng.choice(["x", "9", "-z"]),
        lambda: "%" + rng.choice(names),
    ]
    return _dense(nbytes, rng, shapes, [4, 3, 1, 1, 2, 1, 0.5])


def dense_escaped(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """Nearly every token changes: known markers and escapes, bare or wrapped in
    ``( [ { < ` `` runs, with trailing punctuation kept."""
    shapes: list[Callable[[], str]] = [
        lambda: "%" + rng.choice(names),
        lambda: "%%" + rng.choice(names),
        lambda: "%%" + _unknown(rng),
        lambda: rng.choice(["(", "[", "{", "<", "`", "((", "[`"]) + "%" + rng.choice(names),
        lambda: rng.choice(["(", "`"]) + "%%" + rng.choice(names) + rng.choice([")", "`"]),
        lambda: "%" + rng.choice(names) + rng.choice([".", ",", "...", "-", "_."]),
        lambda: rng.choice(_WORDS),
    ]
    return _dense(nbytes, rng, shapes, [3, 2, 1, 2, 1, 1, 1])


def dense_glued(nbytes: int, names: Sequence[str], rng: random.Random) -> str:
    """``%`` that never expands: lone, after digits or letters, inside words, after
    non-ASCII letters (which ask Unicode whether they end a token); one in ~30 a known
    marker after CJK punctuation."""
    shapes: list[Callable[[], str]] = [
        lambda: f"{rng.randint(1, 100)}%",
        lambda: "%",
        lambda: "%%",
        lambda: "x%" + rng.choice(names),
        lambda: "a=%b&c=%d",
        lambda: rng.choice(["é", "ü", "ñ", "中", "ж", "α"]) + "%" + rng.choice(names),
        lambda: rng.choice(["%-", "%.", "%_a", "%!", "%)"]),
        lambda: "，%" + rng.choice(names),
    ]
    return _dense(nbytes, rng, shapes, [3, 2, 1, 2, 1, 2, 1, 0.4])


DENSE: dict[str, Callable[[int, Sequence[str], random.Random], str]] = {
    "mixed": dense_mixed,
    "unknown": dense_unknown,
    "escaped": dense_escaped,
    "glued": dense_glued,
}


def document_text(lines: int) -> str:
    return "".join(f"line {n:07d} of a long document\n" for n in range(lines))
