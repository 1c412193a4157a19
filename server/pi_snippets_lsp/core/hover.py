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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pi_snippets_lsp.core.documents import Encoding
from pi_snippets_lsp.core.grammar import WRAPPERS
from pi_snippets_lsp.core.line_codec import index_and_units
from pi_snippets_lsp.core.markers import Marker, marker_at
from pi_snippets_lsp.core.snippet import Snippet, normalize_newlines

Layer = Literal["user", "project", "client"]

_BACKTICK_RUN: Final = re.compile(r"`+")
#: The characters a marker is made of (``%`` and the name rule's); none of them is a
#: boundary or a wrapper, so a run of them is where every marker under a cursor lies.
_MARKER_RUN: Final = re.compile(r"[%a-z0-9._-]*")
_WRAPPER_RUN: Final = re.compile("[" + re.escape(WRAPPERS) + "]*")
#: Characters looked at first when searching backwards for where a run starts.
_FIRST_LOOK: Final = 256
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


@dataclass(frozen=True, slots=True)
class LineMarker:
    """A marker on one line: ``marker``'s offsets are code points of the line, ``start``
    and ``end`` its columns in the client's encoding."""

    marker: Marker
    start: int
    end: int


def marker_on_line(
    line: str, character: int, encoding: Encoding, snippets: Mapping[str, str]
) -> LineMarker | None:
    """The marker under a cursor at ``character`` (client units) of ``line``, or None.

    The cost does not grow with the line beyond C-speed passes (a conversion of the
    columns): only the run of marker characters around the cursor is expanded, with
    the wrappers and the one character before it that decide the boundary. Expanding
    that window finds what expanding the whole line finds there: no marker spans a
    character outside the run, and the text before the window holds no ``%``.
    """
    offset, column = index_and_units(line, character, encoding)
    first = _run_start(line, offset, _MARKER_RUN)
    # ``_MARKER_RUN`` matches "", so there is a match. A window reaching further (to the
    # line's end, or a character more before) finds the same marker; only the cost differs.
    last = _MARKER_RUN.match(line, offset).end()  # type: ignore[union-attr]  # pragma: no mutate
    before = _run_start(line, first, _WRAPPER_RUN)
    window = max(0, before - 1)  # pragma: no mutate
    found = marker_at(line[window:last], offset - window, snippets)
    if found is None:
        return None
    marker = Marker(
        found.start + window, found.end + window, found.name, found.escape, found.new_text
    )
    # The marker holds the cursor (it starts at or before it): its column is the
    # cursor's less the characters between them, a marker's, one unit each in every
    # encoding (ASCII).
    start = column - (offset - marker.start)
    return LineMarker(marker, start, start + (marker.end - marker.start))


def _run_start(line: str, end: int, run: re.Pattern[str]) -> int:
    """Where the run of ``run``'s characters that ends at ``end`` starts, looking back in
    growing steps (a marker is short; a line of 50 MB of ``%`` is read once, in C)."""
    size = _FIRST_LOOK
    while True:
        begin = max(0, end - size)
        backwards = line[begin:end][::-1]
        length = run.match(backwards).end()  # type: ignore[union-attr]  # matches ""
        if length < end - begin or begin == 0:
            return end - length
        size *= 4  # pragma: no mutate (a cost choice: any growth finds the same start)
