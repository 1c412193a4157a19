"""A real Gemini CLI turn with our ``BeforeModel`` hook, offline (issue 35).

``pi-snippets-lsp setup gemini`` writes the hook into ``~/.gemini/settings.json`` (Gemini
runs hooks by default, ``hooksConfig.enabled``); the prompt is typed in Gemini's own
prompt box (its UI in tmux) and the test asserts on the request the fake model received:
Gemini passes the hook the request's text messages and merges the messages it answers
back over the request, so ``Please %review`` reaches the model rewritten, as Pi would
send it, while the screen keeps what was typed. ``%%review``, ``x%review`` and an
unknown marker reach it as typed, and so does every prompt when the snippets' settings
file is broken: the hook's warning is shown, the prompt is not lost.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import PATIENCE, SNIPPETS, Place
from .fake_model import Recorded, texts
from .test_gemini import gemini_env
from .test_hooks import setup, user_settings


def gemini_home(place: Place) -> None:
    """The user's Gemini settings before ``setup``: API-key auth, the project trusted."""
    folder = place.home / ".gemini"
    folder.mkdir(exist_ok=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (folder / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    trusted = {str(place.work): "TRUST_FOLDER"}
    (folder / "trustedFolders.json").write_text(json.dumps(trusted), encoding="utf-8")


def turns(place: Place) -> list[Recorded]:
    """The main requests of a turn (Gemini streams them); side requests (its model
    router, its next-speaker check) are ``:generateContent``."""
    return place.fake.posts(":streamGenerateContent")


def user_texts(request: Recorded) -> list[str]:
    """The texts of the request's user messages: what the model reads as the prompt."""
    assert isinstance(request.body, dict)
    contents = request.body.get("contents", [])
    return [t for c in contents if c.get("role") == "user" for t in texts(c.get("parts", []))]


def gemini_turn(place: Place, tmux: Any, prompt: str) -> tuple[list[str], str]:
    """``prompt`` typed in Gemini's prompt box and sent: the user texts the model got,
    and the screen after the answer."""
    ui = tmux([str(place.bin / "gemini")], gemini_env(place))
    ui.wait(lambda s: "Type your message" in s, "the prompt box")
    ui.type(prompt)
    ui.wait(lambda s: prompt in s, "the typed prompt")
    ui.keys("Enter")
    place.fake.wait_for(lambda _: bool(turns(place)), PATIENCE)
    screen = ui.wait(lambda s: "✦ ok" in s or "\u2726 ok" in s, "the model's answer")
    return user_texts(turns(place)[0]), screen


def set_up(place: Place, settings_text: str | None = None) -> None:
    user_settings(place, settings_text)
    gemini_home(place)
    setup(place, "gemini")


def test_a_marker_typed_in_gemini_reaches_the_model_expanded(place: Place, tmux: Any) -> None:
    set_up(place)
    sent, screen = gemini_turn(place, tmux, "Please %review the change")
    assert sent[-1].endswith(f"Please {SNIPPETS['review']} the change"), sent
    assert not any("%review" in t for t in sent), sent
    assert "Please %review the change" in screen


@pytest.mark.parametrize("prompt", ["Please %%review it", "Please x%review it", "Please %nope it"])
def test_gemini_sends_escaped_glued_and_unknown_markers_as_typed(
    place: Place, tmux: Any, prompt: str
) -> None:
    set_up(place)
    sent, _ = gemini_turn(place, tmux, prompt)
    assert sent[-1].endswith(prompt), sent
    assert not any(SNIPPETS["review"] in t for t in sent), sent


def test_gemini_with_a_broken_settings_file_loses_no_prompt(place: Place, tmux: Any) -> None:
    set_up(place, '{"piSimpleSnippets": {"snippets": ')
    sent, screen = gemini_turn(place, tmux, "Please %review the change")
    assert sent[-1].endswith("Please %review the change"), sent
    assert "not valid JSON" in screen, screen


def test_gemini_md_reaches_the_model_as_written(place: Place, tmux: Any) -> None:
    """Gemini puts GEMINI.md into the first user message, before the prompt, and hands
    the hook both as one text: only the typed words are expanded."""
    set_up(place)
    notes = "In this project, %review means a careful review."
    (place.work / "GEMINI.md").write_text(notes + "\n", encoding="utf-8")
    sent, _ = gemini_turn(place, tmux, "Please %review the change")
    assert sent[-1].endswith(f"Please {SNIPPETS['review']} the change"), sent
    assert any(notes in text for text in sent), sent
