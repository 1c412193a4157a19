"""The JSON schema of the ``piSimpleSnippets`` settings key, for editors' JSON support.

docs/configuration.md, "From the command line" (``pi-snippets-lsp schema``). A schema
can state the shapes (an object of names to non-empty strings, a boolean); the rules it
cannot state in Pi's words are the server's settings diagnostics (docs/lsp.md).
"""

from __future__ import annotations

from pi_snippets_lsp.core.config import SETTINGS_KEY
from pi_snippets_lsp.core.grammar import NAME_PATTERN


def settings_json_schema() -> dict[str, object]:
    """JSON schema of a settings file's ``piSimpleSnippets`` key, for editors."""
    name = {"type": "string", "pattern": f"^{NAME_PATTERN}$"}
    namespace = {
        "type": "object",
        "description": "pi-simple-snippets: %name prompt snippets.",
        "properties": {
            "snippets": {
                "type": "object",
                "description": "Snippet name to text. Type %name in a prompt to use one.",
                "propertyNames": name,
                "additionalProperties": {"type": "string", "minLength": 1},
            },
            "shortcut": {
                "type": "string",
                "description": 'Key that types "%" and opens the list, e.g. "ctrl+shift+s": '
                "one or more of ctrl, shift, alt, super, then a key.",
            },
            "expandOnCompletion": {
                "type": "boolean",
                "default": False,
                "description": "Accepting a completion inserts the snippet's text, not %name.",
            },
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Pi settings (piSimpleSnippets)",
        "type": "object",
        "properties": {SETTINGS_KEY: namespace},
    }
