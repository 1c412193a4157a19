"""``pi-snippets-lsp hook AGENT``: each agent's hook input in, its hook output out.

docs/agents.md, "The prompt hook". The inputs are the agents' own shapes (Claude Code
and Codex ``UserPromptSubmit``: ``prompt`` and ``cwd``; Gemini CLI ``BeforeModel``:
``llm_request.messages``); the answers are checked as the agents read them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_snippets_lsp.agents import hook
from pi_snippets_lsp.agents.hook import CONTEXT_INTRO, HOOK_AGENTS, answer, context_for, run_hook
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.snippet import Snippet

REVIEW = "Review this diff carefully"
CONFIG = Config(snippets=(Snippet(name="review", value=REVIEW, source="test"),))
BROKEN = Config(warnings=("settings.json is not valid JSON",))


def loader(config: Config = CONFIG, seen: list[str | None] | None = None):  # type: ignore[no-untyped-def]
    def load(folder: str | None) -> Config:
        if seen is not None:
            seen.append(folder)
        return config

    return load


def claude(prompt: str, **extra: object) -> bytes:
    event = {
        "session_id": "s",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/work/project",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        **extra,
    }
    return json.dumps(event).encode()


def gemini(*messages: tuple[str, object]) -> bytes:
    event = {
        "session_id": "s",
        "transcript_path": "/tmp/t.json",
        "cwd": "/work/project",
        "hook_event_name": "BeforeModel",
        "timestamp": "2026-12-03T12:00:00Z",
        "llm_request": {
            "model": "gemini-2.5-flash",
            "messages": [{"role": r, "content": c} for r, c in messages],
            "config": {"temperature": 1},
        },
    }
    return json.dumps(event).encode()


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_known_marker_gives_the_model_the_expanded_prompt_as_context(agent: str) -> None:
    seen: list[str | None] = []
    output = answer(agent, claude("Please %review the change"), loader(seen=seen)).output
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": context_for(f"Please {REVIEW} the change"),
        }
    }
    assert seen == ["/work/project"]  # the hook input's cwd is the project folder


def test_the_context_holds_the_whole_expanded_prompt_after_a_plain_intro() -> None:
    assert context_for("a\nb") == f"{CONTEXT_INTRO}\n<prompt>\na\nb\n</prompt>"


@pytest.mark.parametrize(
    "prompt", ["Please %%review", "x%review", "Please %nope", "%reviewer", "no marker", ""]
)
@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_a_prompt_pi_leaves_alone_gets_no_answer(agent: str, prompt: str) -> None:
    data = gemini(("user", prompt)) if agent == "gemini" else claude(prompt)
    assert answer(agent, data, loader()).output is None


def test_escaped_and_unknown_markers_stay_as_pi_sends_them_beside_an_expanded_one() -> None:
    output = answer("claude-code", claude("%review, %%review, x%review, %nope"), loader()).output
    assert output is not None
    context = output["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert context.endswith(f"<prompt>\n{REVIEW}, %review, x%review, %nope\n</prompt>")


def test_a_prompt_without_a_percent_sign_reads_no_settings() -> None:
    seen: list[str | None] = []
    assert answer("claude-code", claude("hello"), loader(seen=seen)).output is None
    assert seen == []


def test_gemini_before_model_rewrites_every_user_message_and_keeps_the_rest() -> None:
    data = gemini(
        ("user", "context of the session"),
        ("user", "Please %review"),
        ("model", "I will %review"),
        ("user", "again %review and %%review"),
    )
    output = answer("gemini", data, loader()).output
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "BeforeModel",
            "llm_request": {
                "messages": [
                    {"role": "user", "content": "context of the session"},
                    {"role": "user", "content": f"Please {REVIEW}"},
                    {"role": "model", "content": "I will %review"},
                    {"role": "user", "content": f"again {REVIEW} and %review"},
                ]
            },
        }
    }


def test_gemini_before_model_leaves_messages_of_parts_alone() -> None:
    data = gemini(("user", [{"type": "text", "text": "%review"}]))
    assert answer("gemini", data, loader()).output is None


def test_gemini_before_agent_gets_context() -> None:
    event = json.loads(claude("Please %review"))
    event["hook_event_name"] = "BeforeAgent"
    output = answer("gemini", json.dumps(event).encode(), loader()).output
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "BeforeAgent",
            "additionalContext": context_for(f"Please {REVIEW}"),
        }
    }


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_broken_settings_are_a_warning_the_agent_shows_and_the_prompt_goes_on(
    agent: str,
) -> None:
    data = gemini(("user", "Please %review")) if agent == "gemini" else claude("Please %review")
    output = answer(agent, data, loader(BROKEN)).output
    assert output == {"systemMessage": BROKEN.warning_message()}


def test_a_warning_comes_with_the_expansion_when_one_layer_still_loads() -> None:
    config = Config(snippets=CONFIG.snippets, warnings=("one entry skipped",))
    output = answer("claude-code", claude("%review"), loader(config)).output
    assert output is not None
    assert output["systemMessage"] == config.warning_message()
    assert "hookSpecificOutput" in output


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"cwd": "/x"}', "no prompt"),
        (b'{"prompt": 3}', "no prompt"),
    ],
)
def test_bad_input_is_a_warning_never_a_blocked_prompt(data: bytes, words: str) -> None:
    output = answer("claude-code", data, loader()).output
    assert output is not None and set(output) == {"systemMessage"}
    assert words in str(output["systemMessage"])
    assert str(output["systemMessage"]).startswith("pi-snippets-lsp hook: ")


def test_gemini_before_model_without_messages_is_a_warning() -> None:
    data = json.dumps({"hook_event_name": "BeforeModel", "llm_request": {}}).encode()
    output = answer("gemini", data, loader()).output
    assert output is not None and "llm_request.messages" in str(output["systemMessage"])


def test_an_unknown_agent_is_a_warning() -> None:
    output = answer("claude", claude("%review"), loader()).output
    assert output is not None and "unknown agent 'claude'" in str(output["systemMessage"])


def test_a_failure_of_ours_is_a_warning_too(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(agent: str, data: bytes, load: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(hook, "answer", explode)
    text = run_hook("claude-code", b"{}", settings=None, project=None, trust_project=False)
    assert json.loads(text) == {
        "systemMessage": "pi-snippets-lsp hook: RuntimeError: boom; the prompt is sent as typed"
    }


def write_settings(path: Path, snippets: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"piSimpleSnippets": {"snippets": snippets}}), encoding="utf-8")
    return path


def test_run_hook_loads_settings_as_expand_does_with_cwd_as_the_project(tmp_path: Path) -> None:
    user = write_settings(tmp_path / "user.json", {"review": REVIEW})
    project = tmp_path / "project"
    write_settings(project / ".pi" / "settings.json", {"review": "from the project"})
    data = claude("%review", cwd=str(project))
    untrusted = run_hook("claude-code", data, settings=str(user), project=None, trust_project=False)
    trusted = run_hook("claude-code", data, settings=str(user), project=None, trust_project=True)
    assert (
        "<prompt>\nReview this diff carefully\n</prompt>"
        in json.loads(untrusted)["hookSpecificOutput"]["additionalContext"]
    )
    assert (
        "<prompt>\nfrom the project\n</prompt>"
        in json.loads(trusted)["hookSpecificOutput"]["additionalContext"]
    )
    elsewhere = run_hook(
        "claude-code", data, settings=str(user), project=str(tmp_path), trust_project=True
    )
    assert REVIEW in elsewhere  # --project wins over the input's cwd


def run_command(args: list[str], stdin: bytes, home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env["HOME"] = str(home)
    # The package under test, wherever it is (a copy, in a mutation run).
    package_root = str(Path(hook.__file__).parents[2])
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pi_snippets_lsp", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_real_command_answers_claude_code_and_always_exits_0(tmp_path: Path) -> None:
    write_settings(tmp_path / ".pi" / "agent" / "settings.json", {"review": REVIEW})
    done = run_command(["hook", "claude-code"], claude("Please %review"), tmp_path)
    assert done.returncode == 0
    answer_ = json.loads(done.stdout)
    assert answer_["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert (
        f"<prompt>\nPlease {REVIEW}\n</prompt>"
        in answer_["hookSpecificOutput"]["additionalContext"]
    )
    silent = run_command(["hook", "claude-code"], claude("Please %%review"), tmp_path)
    assert (silent.returncode, silent.stdout) == (0, b"")
    garbage = run_command(["hook", "claude-code"], b"{not json", tmp_path)
    assert garbage.returncode == 0
    assert "not JSON" in json.loads(garbage.stdout)["systemMessage"]
    (tmp_path / ".pi" / "agent" / "settings.json").write_text("{broken", encoding="utf-8")
    broken = run_command(["hook", "claude-code"], claude("Please %review"), tmp_path)
    assert broken.returncode == 0
    assert "settings.json" in json.loads(broken.stdout)["systemMessage"]


class _Stdin:
    def __init__(self, data: bytes | None) -> None:
        self.buffer = self
        self.data = data

    def read(self) -> bytes:
        if self.data is None:
            raise OSError("gone")
        return self.data


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (claude("%review"), {"context": f"<prompt>\n{REVIEW}\n</prompt>"}),
        (claude("no"), {}),
        (None, {"systemMessage": "pi-snippets-lsp hook: cannot read the hook input (gone)"}),
    ],
)
def test_the_command_reads_stdin_writes_stdout_and_exits_0(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    data: bytes | None,
    expected: dict[str, str],
) -> None:
    settings = write_settings(tmp_path / "s.json", {"review": REVIEW})
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    args = argparse.Namespace(
        agent="claude-code", settings=str(settings), project=None, trust_project=False
    )
    assert hook.run_hook_command(args) == 0
    out = capsys.readouterr().out
    if not expected:
        assert out == ""
    elif "context" in expected:
        assert out.endswith("\n") and out.count("\n") == 1
        assert json.loads(out)["hookSpecificOutput"]["additionalContext"].endswith(
            expected["context"]
        )
    else:
        assert json.loads(out) == expected


def test_the_warnings_say_what_happened_and_that_the_prompt_goes_on() -> None:
    def words(agent: str, data: bytes) -> object:
        output = answer(agent, data, loader()).output
        assert output is not None
        return output["systemMessage"]

    assert words("claude", b"{}") == (
        "pi-snippets-lsp hook: unknown agent 'claude' (known: claude-code, codex, gemini); "
        "the prompt is sent as typed"
    )
    assert words("codex", b"[]") == (
        "pi-snippets-lsp hook: the hook input is not a JSON object; the prompt is sent as typed"
    )
    assert words("codex", b"{}") == (
        "pi-snippets-lsp hook: the hook input has no prompt; the prompt is sent as typed"
    )
    assert words("gemini", b'{"hook_event_name": "BeforeModel", "llm_request": []}') == (
        "pi-snippets-lsp hook: the hook input has no llm_request.messages; "
        "the request is sent as is"
    )
    assert str(words("codex", b"nope")).startswith(
        "pi-snippets-lsp hook: the hook input is not JSON (Expecting value: line 1 column 1"
    )


def test_gemini_reads_only_user_messages_with_a_percent_sign() -> None:
    seen: list[str | None] = []
    data = gemini(("model", "%review"), ("user", "plain"), ("system", "%review"))
    assert answer("gemini", data, loader(seen=seen)).output is None
    assert seen == []
    event = json.loads(gemini(("user", "%review"), ("user", "%nope")))
    event["llm_request"]["messages"].insert(0, "not a message")
    event.pop("cwd")
    output = answer("gemini", json.dumps(event).encode(), loader(seen=seen)).output
    assert seen == [None]
    assert output is not None
    messages = output["hookSpecificOutput"]["llm_request"]["messages"]  # type: ignore[index]
    assert messages == ["not a message", {"role": "user", "content": REVIEW},
                        {"role": "user", "content": "%nope"}]  # fmt: skip


def test_an_empty_cwd_is_no_project_folder() -> None:
    seen: list[str | None] = []
    answer("claude-code", claude("%review", cwd=""), loader(seen=seen))
    answer("claude-code", claude("%review", cwd=3), loader(seen=seen))
    assert seen == [None, None]


# Gemini CLI writes blocks of its own into a user message (GEMINI_BLOCKS): its session
# context (GEMINI.md in it), a hook's context, the files an @path names. Pi expands only
# what the person typed, so the hook leaves those blocks as they are.
SESSION = "<session_context>\nProject notes: %review\nmeans care.\n</session_context>"
FILES = "--- Content from referenced files ---\nnotes.md:\nuse %review\n--- End of content ---"
HOOK = "<hook_context>\nsee %review\n</hook_context>"


def rewritten(text: str) -> object:
    """The user message's new text, or None when the hook answers nothing."""
    output = answer("gemini", gemini(("user", text)), loader()).output
    if output is None:
        return None
    return output["hookSpecificOutput"]["llm_request"]["messages"][0]["content"]  # type: ignore[index]


@pytest.mark.parametrize("block", [SESSION, FILES, HOOK])
def test_gemini_leaves_its_own_blocks_alone_and_expands_the_typed_words(block: str) -> None:
    assert rewritten(f"{block}Please %review it") == f"{block}Please {REVIEW} it"
    assert rewritten(f"Please %review it\n{block}\nthen") == f"Please {REVIEW} it\n{block}\nthen"
    assert rewritten(f"{block}Say hi") is None


@pytest.mark.parametrize("block", [SESSION, FILES, HOOK])
def test_a_block_gemini_never_closed_runs_to_the_end_of_the_message(block: str) -> None:
    opening = block.split("\n")[0]
    assert rewritten(f"Say hi {opening}\nnotes: %review") is None
    text = f"Please %review {opening}\nnotes: %review"
    assert rewritten(text) == f"Please {REVIEW} {opening}\nnotes: %review"


def test_a_block_ends_at_its_own_closing_line() -> None:
    text = f"{HOOK} and %review {HOOK}"
    assert rewritten(text) == f"{HOOK} and {REVIEW} {HOOK}"
    text = f"{FILES}\n%review\n{FILES}"
    assert rewritten(text) == f"{FILES}\n{REVIEW}\n{FILES}"


def test_the_typed_words_after_a_block_start_fresh() -> None:
    """A marker right after a block is at the start of what was typed: expanded; one
    glued to a typed word is not."""
    assert rewritten(f"{SESSION}%review") == f"{SESSION}{REVIEW}"
    assert rewritten(f"{SESSION}x%review") is None


def test_beside_a_known_marker_every_stretch_of_typed_words_is_pis_in_full() -> None:
    text = f"%%review and %nope\n{FILES}\nthen %review"
    assert rewritten(text) == f"%review and %nope\n{FILES}\nthen {REVIEW}"
    assert rewritten(f"%%review\n{FILES}\nthen %%review") is None
