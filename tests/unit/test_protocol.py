"""The custom requests' answers as JSON, and back (docs/lsp.md, "snippets/list").

The server writes a ``SnippetsListing`` as JSON; the client reads it back into the same
model. Both directions must keep every snippet exactly, and a malformed answer must be
refused, not half-read.
"""

from __future__ import annotations

import pydantic
import pytest

from pi_snippets_lsp.config import Layer, validate_layers
from pi_snippets_lsp.protocol import LoadNotice, SnippetsListing
from pi_snippets_lsp.snippet import Snippet


def generation() -> SnippetsListing:
    config = validate_layers(
        [
            Layer(
                "/home/u/settings.json",
                {
                    "piSimpleSnippets": {
                        "snippets": {"b": "two\n  lines", "a": "one"},
                        "shortcut": "Ctrl+Shift+S",
                        "expandOnCompletion": True,
                    }
                },
            )
        ]
    )
    return SnippetsListing.of(config)


def test_a_listing_is_written_with_previews_and_the_normalized_shortcut() -> None:
    assert generation().to_json() == {
        "snippets": [
            {"name": "a", "value": "one", "preview": "one", "source": "/home/u/settings.json"},
            {
                "name": "b",
                "value": "two\n  lines",
                "preview": "two lines",
                "source": "/home/u/settings.json",
            },
        ],
        "shortcut": "ctrl+shift+s",
        "expandOnCompletion": True,
        "warnings": [],
    }


def test_a_listing_read_back_from_json_is_the_same_listing() -> None:
    listing = generation()
    again = SnippetsListing.model_validate(listing.to_json())
    assert again == listing
    assert again.snippets[1] == Snippet("b", "two\n  lines", "/home/u/settings.json")
    assert again.values == {"a": "one", "b": "two\n  lines"}


@pytest.mark.parametrize(
    "snippet",
    [
        pytest.param({"name": "a", "value": "x"}, id="no-source"),
        pytest.param({"name": "a", "value": 3, "source": "s"}, id="a-number-value"),
        pytest.param("a", id="not-an-object"),
    ],
)
def test_a_malformed_snippet_in_a_listing_is_refused(snippet: object) -> None:
    with pytest.raises(pydantic.ValidationError):
        SnippetsListing.model_validate({"snippets": [snippet]})


def test_the_load_notice_carries_no_values() -> None:
    notice = LoadNotice.of(
        3, validate_layers([Layer("s", {"piSimpleSnippets": {"snippets": {"a": "secret"}}})])
    )
    body = notice.to_json()
    assert body["generation"] == 3
    assert body["count"] == 1
    assert "secret" not in str(body)
