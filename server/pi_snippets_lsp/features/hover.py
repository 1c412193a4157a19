"""What hovering a marker shows: the snippet's whole text, literally, and where it is from.

docs/lsp.md, "Hover". The text is shown exactly as it will be sent, whatever it holds: for
clients that render Markdown it sits in a fenced code block whose fence is longer than any
run of backticks in it, so backticks, ``#``, ``*`` or ``<b>`` show as typed; other clients
get plain text. Line breaks are shown as line breaks (a ``\\r`` would show as ``^M``).

Below it: the settings file that defined the snippet and its layer (user, project or
client), so a user with several settings files knows which one to edit. An escape
``%%name`` says that it is sent as the literal ``%name``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, Literal

from pi_snippets_lsp.core.markers import Marker
from pi_snippets_lsp.core.snippet import Snippet, normalize_newlines

Layer = Literal["user", "project", "client"]

_BACKTICK_RUN: Final = re.compile(r"`+")
_WHERE: Final[dict[Layer, str]] = {
    "user": "From the user settings file",
    "project": "From the project settings file",
    "client": "From the editor's settings",
}


def layer_of(source: str, user_file: Path) -> Layer:
    """The layer a snippet's ``source`` names: the user file, a client layer name
    (``initializationOptions``, ``workspace/configuration``), or a project file."""
    if not Path(source).is_absolute():
        return "client"
    return "user" if Path(source) == user_file else "project"


def fence(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text`` (at least three), so no
    line of ``text`` can close it (CommonMark: a closing fence is at least as long as
    the opening one)."""
    if "```" not in text:  # the common case, told without scanning every run
        return "```"
    return "`" * (max(len(run) for run in _BACKTICK_RUN.findall(text)) + 1)


def code_span(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def hover_text(marker: Marker, snippet: Snippet | None, layer: Layer, markdown: bool) -> str:
    """The hover of ``marker``: Markdown when ``markdown``, plain text otherwise.

    ``snippet`` is the configured snippet the marker names (None for an escape).
    """
    if marker.escape or snippet is None:
        literal = "%" + marker.name
        if markdown:
            return (
                f"{code_span(marker.source_text)} is escaped: it is sent as the literal "
                f"{code_span(literal)}, not expanded."
            )
        return (
            f"{marker.source_text} is escaped: it is sent as the literal {literal}, not expanded."
        )
    value = normalize_newlines(snippet.value)
    where = _WHERE[layer]
    if markdown:
        ticks = fence(value)
        body = value if value.endswith("\n") else value + "\n"
        source = code_span(snippet.source)
        return (
            f"{code_span(marker.source_text)} expands to:\n\n{ticks}text\n{body}{ticks}\n\n"
            f"{where}: {source}"
        )
    return f"{marker.source_text} expands to:\n\n{value}\n\n{where}: {snippet.source}"
