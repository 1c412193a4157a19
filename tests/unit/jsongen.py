"""Random JSON texts for the parser's property and differential tests.

Driven by a ``random.Random`` (or Hypothesis' ``st.randoms()``), so the same generator
feeds both the Hypothesis tests and the batch sent to Node.js. Texts use every formatting
JSON allows (each kind of whitespace, every escape, upper- and lowercase hex, lone
surrogate escapes, duplicate keys, a BOM) and, mutated, the mistakes people make.
"""

from __future__ import annotations

import random

WHITESPACE = ["", "", "", " ", "  ", "\n", "\t", "\r\n", "\r", "\n    "]
CHARS = [
    "a", "b", "z", "A", "0", " ", "é", "中", "😀", "\x7f", "\u2028", "\u00a0", "'", "/",
    "{", "}", "[", "]", ",", ":", "%", "\ufeff",
]  # fmt: skip
SHORT_ESCAPES = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]
UNICODE_ESCAPES = [0x61, 0x22, 0x5C, 0x0, 0x1F, 0xE9, 0x4E2D, 0xD83D, 0xDE00, 0xD800, 0xFFFF]
KEYS = ['"a"', '"b"', '"\\u0061"', '"snippets"', '""', '"A b"']
#: What a mutation inserts: JSON's punctuation, near-misses and characters JSON forbids.
MUTATION_CHARS = [
    *'{}[],:"\\ -+.0123456789eEtrufalsn\t\n\r\x00\x1f\x0b\u00a0xNIé😀/\ufeff',
    "true", "null", "NaN", "Infinity", "//", "\\u", "\\x",
]  # fmt: skip


def whitespace(rng: random.Random) -> str:
    return rng.choice(WHITESPACE)


def string_token(rng: random.Random) -> str:
    parts = ['"']
    for _ in range(rng.randint(0, 6)):
        roll = rng.random()
        if roll < 0.55:
            parts.append(rng.choice(CHARS))
        elif roll < 0.75:
            parts.append(rng.choice(SHORT_ESCAPES))
        else:
            code = rng.choice([*UNICODE_ESCAPES, rng.randrange(0x10000)])
            parts.append("\\u" + format(code, rng.choice(["04x", "04X"])))
    parts.append('"')
    return "".join(parts)


def number_token(rng: random.Random) -> str:
    sign = rng.choice(["", "", "-"])
    integer = rng.choice(["0", "1", "7", "42", "1234567890123456789012", str(rng.randrange(10**6))])
    fraction = rng.choice(["", "", "", ".5", ".0", ".25", ".000001"])
    exponent = rng.choice(["", "", "", "e3", "E-2", "e+10", "e400", "E-400"])
    return sign + integer + fraction + exponent


def value_text(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth >= 4 or roll < 0.45:
        leaf = rng.random()
        if leaf < 0.45:
            return string_token(rng)
        if leaf < 0.75:
            return number_token(rng)
        return rng.choice(["true", "false", "null"])
    count = rng.choice([0, 1, 1, 2, 3, 5])
    if roll < 0.7:
        items = [
            whitespace(rng) + value_text(rng, depth + 1) + whitespace(rng) for _ in range(count)
        ]
        return "[" + ",".join(items) + whitespace(rng) + "]"
    members = []
    for _ in range(count):
        key = rng.choice(KEYS) if rng.random() < 0.6 else string_token(rng)
        members.append(
            whitespace(rng) + key + whitespace(rng) + ":" + whitespace(rng)
            + value_text(rng, depth + 1) + whitespace(rng)
        )  # fmt: skip
    return "{" + ",".join(members) + whitespace(rng) + "}"


def document(rng: random.Random) -> str:
    """A valid JSON text, sometimes after a BOM."""
    bom = "\ufeff" if rng.random() < 0.1 else ""
    return bom + whitespace(rng) + value_text(rng) + whitespace(rng)


def mutate(text: str, rng: random.Random) -> str:
    """``text`` with one to three random deletions, insertions, replacements or a cut."""
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(text))
        roll = rng.random()
        if roll < 0.3 and text:
            at = min(at, len(text) - 1)
            text = text[:at] + text[at + 1 :]
        elif roll < 0.6:
            text = text[:at] + rng.choice(MUTATION_CHARS) + text[at:]
        elif roll < 0.9 and text:
            at = min(at, len(text) - 1)
            text = text[:at] + rng.choice(MUTATION_CHARS) + text[at + 1 :]
        else:
            text = text[:at]
    return text
