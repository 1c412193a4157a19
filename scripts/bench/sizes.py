"""How big each measure runs: ``FULL`` is docs/speed.md's table, ``QUICK`` a smoke run."""

from __future__ import annotations

from dataclasses import dataclass

SEED = 20240610
MIB = 1 << 20
MB = 1_000_000
#: How long any single wait on the server may take before the bench gives up on it.
TIMEOUT = 300.0
#: Query lengths reported separately (what a person has typed after ``%``).
QUERY_LENGTHS = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class Sizes:
    text_bytes: int
    #: Ours and the JavaScript reference take this many turns on each text, one pass
    #: each (the best of each kept), so a burst of load on a shared machine falls on
    #: both alike.
    turns: int
    completion_counts: tuple[int, int, int]
    #: Name vocabularies each completion size runs with (``shapes.VOCABULARIES``).
    vocabularies: tuple[str, ...]
    #: Per completion size: the most queries of one length (1 to 4); one- and
    #: two-character queries are every one that matches a name, up to this many.
    queries_per_length: tuple[int, int, int]
    #: Per completion size: how many times the empty query and each one-character query
    #: are sent (there are only a few dozen of them; a person types them again and again).
    short_repeats: tuple[int, int, int]
    #: One keystroke in this many is the protocol floor, interleaved with the queries.
    floor_every: int
    value_chars: int
    #: The largest tier's values are shorter, so its settings file stays under the
    #: server's 16 MiB cap on a settings file (100,000 values of 200 characters do not).
    large_value_chars: int
    reloads: int
    expand_requests: int
    document_lines: int
    edits: int
    stdio_edits: int
    startups: int
    #: Spawns of ``pi-snippets-lsp expand`` per shape (and of ``python -c pass``).
    shell_runs: int


FULL = Sizes(
    text_bytes=MIB,
    turns=25,
    completion_counts=(1_000, 10_000, 100_000),
    vocabularies=("syllables", "words", "namespaced"),
    queries_per_length=(600, 600, 120),
    short_repeats=(3, 3, 1),
    floor_every=4,
    value_chars=200,
    large_value_chars=100,
    reloads=7,
    expand_requests=7,
    document_lines=1_000_000,
    edits=40,
    stdio_edits=30,
    startups=15,
    shell_runs=20,
)
QUICK = Sizes(
    text_bytes=16 * 1024,
    turns=2,
    completion_counts=(20, 50, 100),
    vocabularies=("syllables", "words", "namespaced"),
    queries_per_length=(6, 6, 4),
    short_repeats=(1, 1, 1),
    floor_every=2,
    value_chars=200,
    large_value_chars=100,
    reloads=2,
    expand_requests=2,
    document_lines=1_000,
    edits=4,
    stdio_edits=4,
    startups=1,
    shell_runs=1,
)
