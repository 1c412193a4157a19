"""A real Codex turn with our ``UserPromptSubmit`` hook, offline (issue 35).

``pi-snippets-lsp setup codex`` writes the hook into ``$CODEX_HOME/hooks.json``. Codex
runs a hook only once the person has trusted it: at start its UI says "Hooks need
review" and offers "Trust all and continue", which records the hook's hash in
``config.toml`` (``[hooks.state]``); an untrusted hook is skipped without a word, in the
UI and in ``codex exec``. So each test starts Codex's UI (in tmux, without its
background server: ``--no-daemon``, nothing outlives the test; no update offered at
start), trusts the hook as the person would, types the prompt there, and asserts on the
request the fake model (the Responses API) received. Codex's hook cannot change the
prompt: the model gets ``Please %review`` as typed and, after it, a developer message
holding the whole prompt expanded. ``%%review``, ``x%review`` and an unknown marker add
nothing; a broken settings file adds nothing either, and Codex shows the hook's warning
under the prompt.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from .conftest import PATIENCE, SNIPPETS, Place
from .fake_model import Recorded
from .test_codex import write_codex_config
from .test_hooks import setup, user_settings

EXPANDED = f"Please {SNIPPETS['review']} the change"


def messages(request: Recorded) -> list[tuple[str, str]]:
    """The request's input messages as (role, text), one per text part."""
    assert isinstance(request.body, dict)
    return [
        (str(item.get("role")), str(part.get("text", "")))
        for item in request.body.get("input", [])
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content", [])
        if isinstance(part, dict)
    ]


def turns(place: Place, prompt: str) -> list[list[tuple[str, str]]]:
    """The messages of each request that carries ``prompt`` as a user message of its
    own: the turn (Codex's side request for a thread title quotes the prompt inside
    its own instructions)."""
    found = [messages(r) for r in place.fake.posts("/responses")]
    return [m for m in found if ("user", prompt) in m]


def after_prompt(sent: list[tuple[str, str]], prompt: str) -> list[tuple[str, str]]:
    """The messages after the typed prompt: where the hook's context goes."""
    return sent[sent.index(("user", prompt)) + 1 :]


def set_up(place: Place, settings_text: str | None = None) -> dict[str, str]:
    """The snippets, Codex's config (the fake model), then ``setup codex``."""
    user_settings(place, settings_text)
    env = write_codex_config(place, servers=False)
    setup(place, "codex", env=env)
    return env


def trusted_ui(place: Place, tmux: Any, env: dict[str, str]) -> Any:
    """Codex's UI, with the new hook trusted through its own review prompt."""
    command = [str(place.bin / "codex"), "--no-daemon", "-c", "check_for_update_on_startup=false"]
    ui = tmux(command, place.env(**env))
    ui.wait(lambda s: "Trust all and continue" in s, "the review of the new hook")
    # The list may be drawn before Codex reads keys: a Down it missed is sent again,
    # but only while the first option is still the one selected.
    for _ in range(6):
        ui.keys("Down")
        deadline = time.monotonic() + 10
        while "› 1. Review hooks" in ui.screen() and time.monotonic() < deadline:
            time.sleep(0.2)
        if "› 1. Review hooks" not in ui.screen():
            break
    ui.wait(lambda s: "› 2. Trust all and continue" in s, "the trust option selected")
    ui.keys("Enter")
    ui.wait(
        lambda s: "Ask Codex to do anything" in s and "Hooks need review" not in s,
        "the prompt box after the review",
    )
    return ui


def ui_turn(place: Place, ui: Any, prompt: str) -> tuple[list[tuple[str, str]], str]:
    """``prompt`` typed in the prompt box and sent: the turn's messages, the screen
    once the answer is shown."""
    ui.type(prompt)
    ui.wait(lambda s: f"› {prompt}" in s, "the typed prompt")
    ui.keys("Enter")
    place.fake.wait_for(lambda _: bool(turns(place, prompt)), PATIENCE)
    screen = ui.wait(lambda s: "• ok" in s, "the model's answer")
    return turns(place, prompt)[0], screen


def exec_turn(place: Place, env: dict[str, str], prompt: str) -> list[tuple[str, str]]:
    done = place.run(
        str(place.bin / "codex"),
        "exec",
        "--skip-git-repo-check",
        prompt,
        timeout=PATIENCE * 2,
        env=env,
    )
    found = turns(place, prompt)
    assert found, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    return found[-1]


def test_a_marker_typed_in_codex_reaches_the_model_with_its_expansion(
    place: Place, tmux: Any
) -> None:
    env = set_up(place)
    ui = trusted_ui(place, tmux, env)
    prompt = "Please %review the change"
    sent, screen = ui_turn(place, ui, prompt)
    assert ("user", prompt) in sent
    context = [text for role, text in after_prompt(sent, prompt) if role == "developer"]
    assert any(f"<prompt>\n{EXPANDED}\n</prompt>" in text for text in context), sent
    assert f"› {prompt}" in screen


@pytest.mark.parametrize("prompt", ["Please %%review it", "Please x%review it", "Please %nope it"])
def test_codex_sends_escaped_glued_and_unknown_markers_alone(
    place: Place, tmux: Any, prompt: str
) -> None:
    env = set_up(place)
    ui = trusted_ui(place, tmux, env)
    sent, _ = ui_turn(place, ui, prompt)
    assert ("user", prompt) in sent
    assert not any(SNIPPETS["review"] in text for _, text in sent), sent
    assert not any("%name snippets" in text for _, text in sent), sent


def test_codex_with_a_broken_settings_file_loses_no_prompt(place: Place, tmux: Any) -> None:
    env = set_up(place, '{"piSimpleSnippets": {"snippets": ')
    ui = trusted_ui(place, tmux, env)
    prompt = "Please %review the change"
    sent, _ = ui_turn(place, ui, prompt)
    assert ("user", prompt) in sent
    assert not any(SNIPPETS["review"] in text for _, text in sent), sent
    ui.wait(lambda s: "settings.json is not valid JSON" in s, "the hook's warning")


def test_codex_exec_runs_the_hook_once_it_is_trusted(place: Place, tmux: Any) -> None:
    """``codex exec`` skips the untrusted hook silently (what setup's closing words
    warn of) and runs it once the UI has recorded the person's trust."""
    env = set_up(place)
    prompt = "Please %review the change"
    before = exec_turn(place, env, prompt)
    assert not any(SNIPPETS["review"] in text for _, text in before), before
    trusted_ui(place, tmux, env).close()
    after = exec_turn(place, env, prompt)
    context = [text for role, text in after_prompt(after, prompt) if role == "developer"]
    assert any(f"<prompt>\n{EXPANDED}\n</prompt>" in text for text in context), after
