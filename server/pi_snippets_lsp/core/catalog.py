"""The catalog of one generation: a snippet by name, the names closest to an unknown
one, and the note for a project file left unread.

Every front end (the LSP handlers, the MCP answers, the command line, the ``llm``
plugin) asks these questions of a ``Config`` and words only its own answer around them,
so a name is found, and an unknown one is answered with suggestions, by one rule.
"""

from __future__ import annotations

from typing import Final

from pi_snippets_lsp.core.closest import typo_candidates
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.grammar import TRIGGER
from pi_snippets_lsp.core.snippet import Snippet

#: How many names an unknown name is answered with, unless the caller asks otherwise.
CLOSEST: Final = 3
#: The longest unknown name that is ranked against the snippet names: a name is a few
#: dozen characters; a megabyte of "name" is not ranked.
LONGEST_RANKED_NAME: Final = 200
#: The shortest prefix of an unknown name that is ranked when the whole name matches
#: nothing (one character would match almost every name).
SHORTEST_PREFIX: Final = 2
#: The trust hint of every front end that takes the command line's flag (the
#: ``pi-snippets-lsp`` commands, ``mcp``, the ``llm pi`` commands).
TRUST_FLAG_HINT: Final = "pass --trust-project"


def snippet_named(config: Config, name: str) -> Snippet | None:
    """The snippet called exactly ``name`` in this generation, or None."""
    if name not in config.values:  # a dictionary look-up: every miss ends here
        return None
    return next(s for s in config.snippets if s.name == name)  # values hold the same names


def closest_names(config: Config, name: str, limit: int = CLOSEST) -> list[str]:
    """The snippet names closest to ``name``, best first, at most ``limit``.

    First the names ``name`` is a typo of (``core.closest``: one or two edits, a swap of
    two letters counting one), the rule the editors' did-you-mean hints use; then Pi's
    fuzzy ranking (the completion popup's order) of ``name``, or, when that matches
    nothing, of its longest prefix of at least ``SHORTEST_PREFIX`` characters that
    matches something; each name once. A leading ``%`` is ignored
    (a caller may name the marker rather than the snippet); a blank name, or one longer
    than ``LONGEST_RANKED_NAME``, suggests nothing.
    """
    query = name.removeprefix(TRIGGER)
    if not query.strip() or len(query) > LONGEST_RANKED_NAME or limit < 1:
        return []
    index = config.name_index
    ranked = index.rank(query, limit).indices  # pragma: no mutate (cut to limit below)
    if not ranked:
        # A prefix of a query that matches a name matches it too (Pi's letters/digits
        # swap aside, which a prefix rarely has), so the longest matching prefix is
        # found by halving: a few ranks, not one per character of a long name.
        # Bounds: the whole query matches nothing (a longer bound ranks it again).
        low, high = SHORTEST_PREFIX - 1, len(query) - 1  # pragma: no mutate (a cost)
        while low < high:
            middle = (low + high + 1) // 2  # pragma: no mutate (any halving finds it)
            found = index.rank(query[:middle], limit).indices  # pragma: no mutate (as above)
            if found:
                low, ranked = middle, found
            else:
                high = middle - 1
    names = (s.name for s in config.snippets)
    typos = typo_candidates(names, query, limit)  # pragma: no mutate (limit: cut below)
    fuzzy = [config.snippets[i].name for i in ranked]
    return list(dict.fromkeys([*typos, *fuzzy]))[:limit]


def untrusted_note(path: str, how: str) -> str:
    """Why the project settings file ``path`` was not read, and ``how`` to read it (the
    front end's own way to trust a project, as an imperative: ``set
    trustProjectSettings``, ``pass --trust-project``). Pi reads a project's settings
    only for a project the user trusts; every front end words the skip alike."""
    return f"skipped project settings {path}: the project is not trusted ({how} to read it)"
