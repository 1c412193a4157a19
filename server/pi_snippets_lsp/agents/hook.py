"""``pi-snippets-lsp hook AGENT``: a prompt hook that expands ``%name`` markers.

docs/agents.md, "The prompt hook". The agent runs the command on every prompt with its
hook input (JSON) on stdin and reads our answer (JSON) on stdout:

- Claude Code ``UserPromptSubmit`` and Codex ``UserPromptSubmit`` (the same wire format)
  may not change the prompt, only add ``additionalContext``: the answer is context
  holding the whole prompt expanded, which is what the model sees in Pi (the model reads
  the expansion as the user's words, not a glossary it must apply itself).
- Gemini CLI ``BeforeModel`` may change the request sent to the model: every user
  message of it is expanded (a true rewrite: the model sees the text Pi would send; the
  history and the screen keep what was typed). Only the person's words: what Gemini
  puts into a user message itself (its session context with GEMINI.md, a hook's
  context, the files an ``@path`` names) stays as it is, as Pi expands only what was
  typed. ``BeforeAgent`` gets context, as above.

A prompt without a ``%`` reads no settings and answers nothing; one without a known
marker answers nothing: no change. ``%%name`` alone (Pi's escape, which Pi sends as
``%name``) is no reason to answer either: the model reads the typed prompt well enough,
and an agent that cannot rewrite would only repeat it; beside a known marker, the
expansion is Pi's in full, the escape included. The hook never blocks or loses a prompt: whatever
goes wrong (input that is not JSON, a broken settings file, an unknown agent) it exits
0, at most with a ``systemMessage``, the field each of these agents shows the person.
It imports only ``core`` and ``settings``: it runs on every prompt, so it must start
fast (tests/unit/test_layout.py).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.expansion import Expansion, expand
from pi_snippets_lsp.settings.layers import load_config, load_request

#: The agents whose prompt hook can carry an expansion (``hook AGENT``).
HOOK_AGENTS: Final = ("claude-code", "codex", "gemini")

#: What precedes the expanded prompt in the context of an agent that cannot rewrite.
CONTEXT_INTRO: Final = (
    "The user's prompt above uses %name snippets (pi-simple-snippets), which stand for "
    "longer text. Read it as the user means it, expanded; the whole prompt is:"
)

#: The blocks Gemini CLI writes into a user message itself, each from its opening line
#: to its closing one (or the end of the message): the session context (date, folders,
#: GEMINI.md), a hook's added context, and the files an ``@path`` names. ``re`` costs
#: the hook nothing: ``json`` imports it.
GEMINI_BLOCKS: Final = re.compile(
    r"(<session_context>.*?(?:</session_context>|\Z)"
    r"|<hook_context>.*?(?:</hook_context>|\Z)"
    r"|--- Content from referenced files ---.*?(?:--- End of content ---|\Z))",
    re.DOTALL,
)

#: The loader: the project folder (the hook input's ``cwd``, or None) to a Config.
Loader = Callable[[str | None], Config]


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """What the hook writes: ``output`` (a JSON object) or nothing (None)."""

    output: dict[str, object] | None


def context_for(expanded: str) -> str:
    """The ``additionalContext`` that gives the model the expanded prompt."""
    return f"{CONTEXT_INTRO}\n<prompt>\n{expanded}\n</prompt>"


def answer(agent: str, data: bytes, load: Loader) -> HookAnswer:
    """The hook's answer to the input ``data`` of ``agent``; never raises for bad input."""
    if agent not in HOOK_AGENTS:
        known = ", ".join(HOOK_AGENTS)
        return _warning(f"unknown agent {agent!r} (known: {known}); the prompt is sent as typed")
    try:
        event = json.loads(data)
    except ValueError as exc:  # not JSON, not UTF-8
        return _warning(f"the hook input is not JSON ({exc}); the prompt is sent as typed")
    if not isinstance(event, dict):
        return _warning("the hook input is not a JSON object; the prompt is sent as typed")
    if agent == "gemini" and event.get("hook_event_name") == "BeforeModel":
        return _before_model(event, load)
    prompt = event.get("prompt")
    if not isinstance(prompt, str):
        return _warning("the hook input has no prompt; the prompt is sent as typed")
    if "%" not in prompt:
        return HookAnswer(None)
    config = load(_folder(event))
    expansion = expand(prompt, config.values)
    specific: dict[str, object] = {}
    if _expands_a_snippet(prompt, expansion):
        event_name = "BeforeAgent" if agent == "gemini" else "UserPromptSubmit"
        specific = {
            "hookSpecificOutput": {
                "hookEventName": event_name,
                "additionalContext": context_for(expansion.text),
            }
        }
    return _with_warnings(specific, config)


def _before_model(event: Mapping[str, object], load: Loader) -> HookAnswer:
    """Gemini CLI ``BeforeModel``: the request's user messages, each expanded."""
    request = event.get("llm_request")
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list):
        return _warning("the hook input has no llm_request.messages; the request is sent as is")
    users = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, dict)
        and m.get("role") == "user"
        and isinstance(m.get("content"), str)
        and "%" in m["content"]
    ]
    if not users:
        return HookAnswer(None)
    config = load(_folder(event))
    new = list(messages)
    changed = False
    for i in users:
        typed = _expand_typed(messages[i]["content"], config)
        if typed is not None:
            new[i] = {**messages[i], "content": typed}
            changed = True
    specific: dict[str, object] = {}
    if changed:
        # Only the messages: a request without ``model`` or ``config`` keeps the
        # original's (Gemini CLI merges the hook's request over it).
        specific = {
            "hookSpecificOutput": {"hookEventName": "BeforeModel", "llm_request": {"messages": new}}
        }
    return _with_warnings(specific, config)


def _expand_typed(text: str, config: Config) -> str | None:
    """``text`` with the person's words expanded and Gemini's own blocks
    (``GEMINI_BLOCKS``) as they are; None when no snippet expands (then escapes stay
    too, as in a prompt). Each stretch of typed words is expanded on its own: a marker
    right after a block starts the person's words."""
    pieces = GEMINI_BLOCKS.split(text)
    typed = range(0, len(pieces), 2)  # the odd pieces are the blocks
    expansions = {k: expand(pieces[k], config.values) for k in typed}
    if not any(_expands_a_snippet(pieces[k], e) for k, e in expansions.items()):
        return None
    for k, expansion in expansions.items():
        pieces[k] = expansion.text
    return "".join(pieces)


def _expands_a_snippet(text: str, expansion: Expansion) -> bool:
    """Whether a replacement of ``expansion`` is a snippet's text, not only an escape
    (``%%name``, the one marker shape that starts with two ``%``)."""
    return any(text[r.start : r.start + 2] != "%%" for r in expansion.replacements)


def _folder(event: Mapping[str, object]) -> str | None:
    cwd = event.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def _with_warnings(output: dict[str, object], config: Config) -> HookAnswer:
    message = config.warning_message()
    if message:
        output = {**output, "systemMessage": message}
    return HookAnswer(output or None)


def _warning(text: str) -> HookAnswer:
    return HookAnswer({"systemMessage": f"pi-snippets-lsp hook: {text}"})


def run_hook(
    agent: str,
    data: bytes,
    *,
    settings: str | None,
    project: str | None,
    trust_project: bool,
) -> str:
    """The text the command writes to stdout ("" for no answer): ``answer`` with the
    configuration loaded as ``pi-snippets-lsp expand`` loads it, the hook input's
    ``cwd`` standing for the project folder when ``project`` is None. Any error, even
    one of ours, is a warning: a hook that fails must not cost the person the prompt."""

    def load(cwd: str | None) -> Config:
        folder = project if project is not None else (cwd or str(Path.cwd()))
        return load_config(
            load_request(settings=settings, project=folder, trust_project=trust_project)
        )

    try:
        result = answer(agent, data, load).output
    except Exception as exc:  # the hook never blocks a prompt, whatever fails
        result = _warning(f"{type(exc).__name__}: {exc}; the prompt is sent as typed").output
    return "" if result is None else json.dumps(result) + "\n"


def run_hook_command(args: argparse.Namespace) -> int:
    """``pi-snippets-lsp hook AGENT``: stdin to stdout, exit status 0 whatever happens
    (Claude Code blocks the prompt on status 2, and shows other statuses as errors)."""
    try:
        data = sys.stdin.buffer.read()
    except OSError as exc:
        data = b""
        text = json.dumps(_warning(f"cannot read the hook input ({exc})").output) + "\n"
    else:
        text = run_hook(
            args.agent,
            data,
            settings=args.settings,
            project=args.project,
            trust_project=args.trust_project,
        )
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError:  # the agent stopped reading: nothing left to tell it
        pass
    return 0
