"""The custom requests' answers as JSON, and back (docs/lsp.md, "snippets/list").

The server writes a ``SnippetsListing`` as JSON; the client reads it back into the same
model. Both directions must keep every snippet exactly, and a malformed answer must be
refused, not half-read.
"""

from __future__ import annotations

import pydantic
import pytest
from pi_snippets_lsp.core.config import Layer, validate_layers
from pi_snippets_lsp.core.snippet import Snippet
from pi_snippets_lsp.wire.messages import (
    ExpandDocumentParams,
    ExpandParams,
    InvalidParams,
    ListParams,
    LoadNotice,
    SnippetsListing,
    describe_errors,
    parse_params,
)


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


def test_a_listing_carries_the_warnings_of_its_load() -> None:
    config = validate_layers(
        [Layer("s", {"piSimpleSnippets": {"snippets": {"a": "A"}, "expandOnCompletion": 1}})]
    )
    assert config.warnings
    assert SnippetsListing.of(config).to_json()["warnings"] == list(config.warnings)


def test_the_load_notice_is_written_with_the_protocols_names() -> None:
    """``snippets/didLoad`` as docs/lsp.md shows it: camelCase keys, JSON values."""
    config = validate_layers(
        [
            Layer(
                "s",
                {
                    "piSimpleSnippets": {
                        "snippets": {"a": "A", "b": ""},
                        "shortcut": "CTRL+S",
                        "expandOnCompletion": True,
                    }
                },
            )
        ]
    )
    assert LoadNotice.of(2, config).to_json() == {
        "generation": 2,
        "count": 1,
        "shortcut": "ctrl+s",
        "expandOnCompletion": True,
        "warnings": list(config.warnings),
    }
    assert len(config.warnings) == 1


# --------------------------------------------------------------------------- params


@pytest.mark.parametrize(
    "params",
    [
        pytest.param(None, id="absent"),
        pytest.param([], id="neovims-empty-table"),
        pytest.param({}, id="empty-object"),
    ],
)
def test_absent_params_are_an_empty_object(params: object) -> None:
    assert parse_params(ListParams, params, "snippets/list") == ListParams()


@pytest.mark.parametrize(
    "params",
    [
        pytest.param(["text"], id="a-list"),
        pytest.param("text", id="a-string"),
        pytest.param(0, id="a-number"),
    ],
)
def test_params_that_are_no_object_are_refused(params: object) -> None:
    with pytest.raises(InvalidParams) as caught:
        parse_params(ExpandParams, params, "snippets/expand")
    assert str(caught.value) == "snippets/expand: params must be an object"


def test_good_params_are_parsed() -> None:
    parsed = parse_params(ExpandParams, {"text": "%a", "uri": "file:///x", "other": 1}, "m")
    assert parsed == ExpandParams(text="%a", uri="file:///x")


def test_bad_params_name_every_field_that_is_wrong() -> None:
    """One message for the client: each wrong field by its dotted path, "; " between."""
    with pytest.raises(InvalidParams) as caught:
        parse_params(
            ExpandDocumentParams,
            {"uri": "u", "range": {"start": {"line": -1, "character": "0"}, "end": {"line": 0}}},
            "pi-snippets.expandDocument",
        )
    assert str(caught.value) == (
        "pi-snippets.expandDocument: "
        "`range.start.line`: Input should be greater than or equal to 0; "
        "`range.start.character`: Input should be a valid integer; "
        "`range.end.character`: Field required"
    )


def test_an_error_about_the_params_as_a_whole_names_them_params() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        ExpandParams.model_validate(5)
    assert describe_errors(caught.value) == (
        "`params`: Input should be a valid dictionary or instance of ExpandParams"
    )
