"""One left-to-right expansion pass over a whole prompt.

Rules: docs/grammar.md, "Expansion: one pass, no re-scan". Values are inserted literally and
never re-scanned, so a value that mentions another marker stays text; unknown markers
stay exactly as typed; ``%%name`` at a boundary yields the literal ``%name``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .grammar import MARKER_RE, TRIGGER


@dataclass(frozen=True, slots=True)
class Replacement:
    """One marker that changed: ``text[start:end]`` (code points) became ``new_text``."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True, slots=True)
class Expansion:
    """The result of one pass: the new text, whether it changed, and what changed."""

    text: str
    changed: bool
    replacements: tuple[Replacement, ...] = ()


def expand(text: str, snippets: Mapping[str, str]) -> Expansion:
    """Expand every ``%name`` marker of ``text`` with ``snippets`` (name -> value).

    With nothing configured the text is returned unchanged, ``%%name`` included, as the
    original extension does: it has no work to do and touches nothing.
    """
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
        # The boundary, wrappers and trailing punctuation are kept as typed; only the
        # marker itself (``%name`` or ``%%name``) is replaced.
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
