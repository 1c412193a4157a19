"""What ``tools/list`` says of the tools that change the snippets (docs/mcp.md, "Writing
snippets"): their names, schemas and annotations, as plain data.

They are listed only when the server runs with ``--allow-writes``; what they do is
``writes``, imported only when one is called, so the path to the first answers loads
nothing more for them.

The annotations are hints for the client's own confirmation (MCP tool annotations):
none is read-only and none reaches beyond the settings files (``openWorldHint``
false). ``save_snippet`` only adds (``destructiveHint`` false) and, its name given and
taken names refused, a second call changes nothing more (``idempotentHint``).
``rename_snippet`` takes a name away (the prompts that use it stop expanding it):
destructive; its second call is refused (the new name is taken), so idempotent.
``delete_snippet`` is destructive and not idempotent: once the layer Pi took the snippet
from has lost it, a second call reaches the next layer that defines the same name.
"""

from __future__ import annotations

from typing import Final

SAVE_TOOL: Final = "save_snippet"
RENAME_TOOL: Final = "rename_snippet"
DELETE_TOOL: Final = "delete_snippet"
WRITE_TOOLS: Final = (SAVE_TOOL, RENAME_TOOL, DELETE_TOOL)
#: The command-line flag that offers them.
FLAG: Final = "--allow-writes"

_NAME: Final = {
    "type": "string",
    "description": "A snippet name (lowercase letters, digits, '.', '_', '-'), without the %",
}
_SOURCE: Final = {"type": "string", "description": "The settings file written"}


def _object(properties: dict[str, object], required: tuple[str, ...]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _annotations(title: str, destructive: bool, idempotent: bool) -> dict[str, object]:
    return {
        "title": title,
        "readOnlyHint": False,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


_CONFIRMED: Final = (
    " A client that supports elicitation is asked to confirm with the user first; "
    "nothing is written if the user declines."
)

TOOLS: Final[tuple[dict[str, object], ...]] = (
    {
        "name": SAVE_TOOL,
        "title": "Save a %snippet",
        "description": "Save a text as a new prompt snippet (pi-simple-snippets) in the user "
        "settings file, so %name expands to it in Pi and every tool that reads the "
        "snippets. The name must follow the name rule and be unused; the file keeps its "
        "formatting." + _CONFIRMED,
        "inputSchema": _object(
            {"name": _NAME, "text": {"type": "string", "description": "The snippet's text"}},
            ("name", "text"),
        ),
        "outputSchema": _object(
            {"name": {"type": "string"}, "source": _SOURCE}, ("name", "source")
        ),
        "annotations": _annotations("Save a %snippet", destructive=False, idempotent=True),
    },
    {
        "name": RENAME_TOOL,
        "title": "Rename a %snippet",
        "description": "Rename a prompt snippet in the settings file Pi takes it from. "
        "Prompts that still use the old %name no longer expand it. The new name must "
        "follow the name rule and be unused." + _CONFIRMED,
        "inputSchema": _object(
            {"name": _NAME, "new_name": {**_NAME, "description": "The new name, without the %"}},
            ("name", "new_name"),
        ),
        "outputSchema": _object(
            {
                "name": {"type": "string", "description": "The new name"},
                "previous": {"type": "string", "description": "The old name"},
                "source": _SOURCE,
            },
            ("name", "previous", "source"),
        ),
        "annotations": _annotations("Rename a %snippet", destructive=True, idempotent=True),
    },
    {
        "name": DELETE_TOOL,
        "title": "Delete a %snippet",
        "description": "Delete a prompt snippet from the settings file Pi takes it from. If "
        "another settings file defines the same name, that one is used from then on." + _CONFIRMED,
        "inputSchema": _object({"name": _NAME}, ("name",)),
        "outputSchema": _object(
            {
                "name": {"type": "string"},
                "source": _SOURCE,
                "now_from": {
                    "type": ["string", "null"],
                    "description": "The settings file that defines the name now, if any",
                },
            },
            ("name", "source", "now_from"),
        ),
        "annotations": _annotations("Delete a %snippet", destructive=True, idempotent=False),
    },
)


def not_offered(name: str) -> str:
    """Why a write tool was refused by a server started without the flag."""
    return (
        f"the tool {name} is offered only when the server runs with "
        f"`pi-snippets-lsp mcp {FLAG}`; the snippets were not changed"
    )
