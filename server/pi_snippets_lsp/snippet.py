"""A snippet: a name, its text, the layer that defined it, and how its text shows.

docs/grammar.md, "Previews"; docs/configuration.md, "Snippets". One ``Snippet`` type
serves the configuration, the server's answers, the in-process API and the client, so
a snippet is described the same way everywhere.
"""

from __future__ import annotations

import functools
import re
from typing import Final, NamedTuple

from pi_snippets_lsp.core.grammar import JS_WHITESPACE

PREVIEW_LIMIT: Final = 80
ELLIPSIS: Final = "…"

_WHITESPACE_RUN: Final = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")
_LINE_BREAKS: Final = re.compile(r"\r\n?")


@functools.lru_cache(maxsize=1 << 14)
def preview(value: str) -> str:
    """One line for the popup: whitespace runs collapsed, trimmed, at most 80 characters.

    Pi measures the limit in UTF-16 code units (JavaScript ``length``) but cuts whole
    code points, so an emoji-heavy value is cut exactly where Pi cuts it. Remembered per
    value: the popup shows the same snippets' previews on every keystroke.
    """
    collapsed = _WHITESPACE_RUN.sub(" ", value).strip(" ")
    if not _longer_than(collapsed, PREVIEW_LIMIT):
        return collapsed
    return collapsed[: PREVIEW_LIMIT - 1] + ELLIPSIS


def _longer_than(text: str, units: int) -> bool:
    """Whether JavaScript's ``length`` of ``text`` exceeds ``units``: it counts UTF-16
    code units, two bytes each; a code point above U+FFFF is two units, a lone
    surrogate (JSON allows ``"\\ud800"``) one."""
    return len(text.encode("utf-16-le", "surrogatepass")) > 2 * units


def normalize_newlines(value: str) -> str:
    """CRLF and a lone CR become LF, as they do for text typed or pasted into Pi."""
    return _LINE_BREAKS.sub("\n", value)


class Snippet(NamedTuple):
    """A configured snippet: its name, its text, and the layer that defined it.

    ``source`` is a settings file's path, or the name of a client layer
    (``initializationOptions``, ``workspace/configuration``, ``options``). Immutable,
    and a named tuple rather than a model or a frozen dataclass: a load makes one per
    configured snippet (tens of thousands, already validated), and a tuple is the
    cheapest immutable value to make; pydantic models that hold snippets
    (``protocol.SnippetsListing``) still validate and serialize them.
    """

    name: str
    value: str
    source: str

    @property
    def preview(self) -> str:
        """The one-line preview of ``value`` (see ``preview``)."""
        return preview(self.value)

    def to_json(self) -> dict[str, str]:
        """As ``snippets/list`` lists it: name, value, preview, source."""
        return {
            "name": self.name,
            "value": self.value,
            "preview": self.preview,
            "source": self.source,
        }
