"""The tools that change the snippets: ``save_snippet``, ``rename_snippet``,
``delete_snippet`` (docs/mcp.md, "Writing snippets").

Offered only with ``--allow-writes``; imported only when one is called. The rules are
the editor's (``settings.save_snippet``, ``settings.snippet_rename``):

- **Which file.** A save goes to the user settings file, as save-as-snippet does: the
  new snippet then works in every project, and nothing lands in a file a repository
  shares. A rename or a delete changes the file Pi takes the snippet from (its
  ``source``, the highest layer that defines the name): that is the snippet the prompts
  expand. A delete can uncover the same name in a lower layer; the answer says so.
- **Names.** A name must follow Pi's name rule (a leading ``%`` is dropped) and a new
  one must be unused: no snippet of the generation and no key of the file's table has
  it (``save_snippet.name_problem``).
- **The file** is read again from disk, and changed only in the snippet's members; one
  that does not parse, or whose tables are no objects, is refused and left as it is.
  It is written whole or not at all (``settings.safe_write``), through a symbolic link
  to the file it points at, with its byte-order mark kept; if its bytes changed since it
  was read, nothing is written.
- **Confirmation.** A client that declared elicitation (form mode) is asked first, with
  a message saying what changes in which file and one boolean, ``confirm``: only an
  accepted form with ``confirm`` true writes. The handshake revisions from 2025-06-18
  send ``elicitation/create`` to the client; 2026-07-28, which has no requests from the
  server, answers the call with ``resultType: "input_required"`` and the same
  elicitation, and writes on the retry that carries the user's answer and the
  ``requestState`` made for those arguments (an HMAC under a key of this process, valid
  for ``STATE_SECONDS``). A client without elicitation gets the change done: the flag was
  the user's consent, and the client's own tool approval (the annotations say these
  tools write, and which destroy) stays in front of every call.
- A refusal, an unknown snippet, a declined confirmation: the tool's error result
  (``isError``), with the reason. After a write the generation is reloaded, so the
  answer, the lists and the ``list_changed`` notifications already show the change.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from pi_snippets_lsp.core.catalog import snippet_named
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.grammar import TRIGGER
from pi_snippets_lsp.core.snippet import preview
from pi_snippets_lsp.mcp import answers, protocol
from pi_snippets_lsp.mcp.jsonrpc import RpcError
from pi_snippets_lsp.mcp.live import LiveSnippets
from pi_snippets_lsp.mcp.write_tools import DELETE_TOOL, RENAME_TOOL, SAVE_TOOL
from pi_snippets_lsp.settings.files import SettingsFileError, read_settings_bytes
from pi_snippets_lsp.settings.jsontree import BOM
from pi_snippets_lsp.settings.safe_write import SettingsWriteError, write_settings_file
from pi_snippets_lsp.settings.save_snippet import (
    SaveSnippetError,
    file_names,
    name_problem,
    snippet_insertion,
)
from pi_snippets_lsp.settings.snippet_rename import SnippetFileError, deleted_text, renamed_text
from pi_snippets_lsp.wire.errors import INVALID_PARAMS

#: Seconds the user has to answer a confirmation (the handshake revisions).
ASK_SECONDS: Final = 600.0
#: Seconds a 2026-07-28 ``requestState`` stays valid.
STATE_SECONDS: Final = 600
#: The key of the one input request, and of the form's one field.
CONFIRM: Final = "confirm"
#: The revisions before elicitation.
_NO_ELICITATION: Final = ("2024-11-05", "2025-03-26")

_KEY: Final = secrets.token_bytes(32)
_LOCK: Final = asyncio.Lock()


class Session(Protocol):
    """What a write needs of the session (``server.McpSession``)."""

    modern: bool | None
    version: str
    client_capabilities: Mapping[str, Any]
    live: LiveSnippets

    @property
    def config(self) -> Config: ...

    async def ask(
        self, method: str, timeout: float, params: dict[str, object] | None = None
    ) -> dict[str, Any]: ...


class Refused(Exception):
    """The change cannot be made; the message says why, for the model and the user."""


@dataclass(frozen=True, slots=True)
class Change:
    """One change, ready to write: the file, its bytes when read (None: no file), its
    whole new text, what to ask the user, and what to answer once it is written."""

    tool: str
    name: str
    path: Path
    before: bytes | None
    text: str
    question: str
    new_name: str | None = None


# --------------------------------------------------------------------------- planning


def _name(arguments: Mapping[str, object], key: str) -> str:
    value = arguments.get(key)
    if not isinstance(value, str):
        raise Refused(f"it needs a string argument `{key}`")
    return value.removeprefix(TRIGGER)


def _read(path: Path) -> tuple[bytes | None, str | None, str]:
    """The file's bytes, its text without a byte-order mark, and the mark."""
    try:
        data = read_settings_bytes(path)
    except SettingsFileError as exc:
        raise Refused(str(exc)) from None
    if data is None:
        return None, None, ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"{path} is not UTF-8 text (byte {exc.start}); fix it first") from None
    mark = BOM if text.startswith(BOM) else ""
    return data, text.removeprefix(mark), mark


def plan(tool: str, arguments: Mapping[str, object], config: Config, user_file: Path) -> Change:
    """The change a call asks for, or ``Refused`` saying why it cannot be made."""
    name = _name(arguments, "name")
    if tool == SAVE_TOOL:
        value = arguments.get("text")
        if not isinstance(value, str):
            raise Refused("it needs a string argument `text`")
        if not value.strip():
            raise Refused("`text` is empty")
        before, text, mark = _read(user_file)
        problem = name_problem(name, file_names(text) | set(config.values))
        if problem is not None:
            raise Refused(problem)
        try:
            insertion = snippet_insertion(text, name, value, str(user_file))
        except SaveSnippetError as exc:
            raise Refused(str(exc)) from None
        question = f"Save the snippet %{name} in {user_file}?\n\n{preview(value)}"
        return Change(tool, name, user_file, before, mark + insertion.text, question)
    snippet = snippet_named(config, name)
    if snippet is None:
        raise Refused(answers.unknown_snippet_message(config, name))
    path = Path(snippet.source)
    before, text, mark = _read(path)
    if text is None:
        raise Refused(f"{path} is gone; nothing to change")
    try:
        if tool == RENAME_TOOL:
            new_name = _name(arguments, "new_name")
            if new_name == name:
                raise Refused(f"the snippet is named {name} already")
            problem = name_problem(new_name, file_names(text) | set(config.values))
            if problem is not None:
                raise Refused(problem)
            question = f"Rename the snippet %{name} to %{new_name} in {path}?"
            new = renamed_text(text, name, new_name, str(path))
            return Change(tool, name, path, before, mark + new, question, new_name)
        question = f"Delete the snippet %{name} from {path}?\n\n{preview(snippet.value)}"
        new = deleted_text(text, name, str(path))
        return Change(tool, name, path, before, mark + new, question)
    except SnippetFileError as exc:
        raise Refused(str(exc)) from None


def commit(change: Change) -> None:
    """Write the change, whole or not at all; ``Refused`` when the file changed since
    it was read or cannot be written."""
    path = change.path.resolve() if change.path.is_symlink() else change.path
    try:
        if read_settings_bytes(change.path) != change.before:
            raise Refused(f"{change.path} changed meanwhile; call the tool again")
        write_settings_file(path, change.text, replace=change.before is not None)
    except FileExistsError:
        raise Refused(f"{change.path} appeared meanwhile; call the tool again") from None
    except (SettingsFileError, SettingsWriteError) as exc:
        raise Refused(str(exc)) from None
    except OSError as exc:
        raise Refused(f"cannot write {path}: {exc.strerror or exc}") from None


def done(change: Change, config: Config) -> dict[str, object]:
    """The tool's result once written, ``config`` the generation read after it: a lower
    layer that still defines the old name is named (it is the one used now)."""
    source = str(change.path)
    still = snippet_named(config, change.name) if change.tool != SAVE_TOOL else None
    below = (
        f" %{change.name} is still defined in {still.source}, which is used now." if still else ""
    )
    if change.tool == SAVE_TOOL:
        text = f"Saved %{change.name} in {source}."
        structured: dict[str, object] = {"name": change.name, "source": source}
    elif change.tool == RENAME_TOOL:
        text = f"Renamed %{change.name} to %{change.new_name} in {source}." + below
        structured = {"name": change.new_name, "previous": change.name, "source": source}
    else:
        text = f"Deleted %{change.name} from {source}." + below
        structured = {
            "name": change.name,
            "source": source,
            "now_from": still.source if still else None,
        }
    return answers.tool_result(text, structured)


# --------------------------------------------------------------------------- confirmation


def elicits(capabilities: object, version: str) -> bool:
    """Whether the client takes form elicitation: it declared ``elicitation`` (empty is
    form mode) with ``form``, or without ``url`` alone, in a revision that has it."""
    if version in _NO_ELICITATION or not isinstance(capabilities, Mapping):
        return False
    declared = capabilities.get("elicitation")
    if not isinstance(declared, Mapping):
        return False
    return "form" in declared or "url" not in declared


def elicit_params(change: Change, version: str) -> dict[str, object]:
    """``elicitation/create``'s params: the question and one boolean to tick (2025-06-18
    has no ``mode``; later revisions name it)."""
    title = {SAVE_TOOL: "Save", RENAME_TOOL: "Rename", DELETE_TOOL: "Delete"}[change.tool]
    params: dict[str, object] = {
        "message": change.question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                CONFIRM: {
                    "type": "boolean",
                    "title": f"{title} %{change.name}",
                    "description": f"Tick to let the agent change {change.path}",
                    "default": False,
                }
            },
            "required": [CONFIRM],
        },
    }
    if version != "2025-06-18":
        params = {"mode": "form", **params}
    return answers.wire_safe(params)  # type: ignore[return-value]


def confirmed(answer: object) -> str | None:
    """None when the user accepted with ``confirm`` true; else what they did."""
    if not isinstance(answer, Mapping):
        return "no answer"
    action = answer.get("action")
    content = answer.get("content")
    if action == "accept":
        ticked = isinstance(content, Mapping) and content.get(CONFIRM) is True
        return None if ticked else "accepted without ticking confirm"
    return f"{action}" if isinstance(action, str) else "no answer"


def _digest(tool: str, arguments: object, expires: int) -> str:
    payload = json.dumps([tool, arguments, expires], sort_keys=True, ensure_ascii=True)
    return hmac.new(_KEY, payload.encode(), hashlib.sha256).hexdigest()


def request_state(tool: str, arguments: object, now: float | None = None) -> str:
    expires = int(now if now is not None else time.time()) + STATE_SECONDS
    return f"{expires}.{_digest(tool, arguments, expires)}"


def state_valid(state: object, tool: str, arguments: object, now: float | None = None) -> bool:
    """Whether ``state`` is one this process made for this call, and not expired."""
    if not isinstance(state, str):
        return False
    expires_text, _, digest = state.partition(".")
    if not expires_text.isdigit() or int(expires_text) < (now or time.time()):
        return False
    return hmac.compare_digest(digest, _digest(tool, arguments, int(expires_text)))


def _declined(change: Change, what: str) -> dict[str, object]:
    return answers.tool_error(
        f"{change.tool}: the user did not confirm ({what}); nothing was written"
    )


# --------------------------------------------------------------------------- the call


async def call(session: Session, params: Mapping[str, Any]) -> dict[str, object]:
    """``tools/call`` of a write tool, on a server that offers them."""
    tool: str = params["name"]
    arguments = params.get("arguments") or {}
    user_file = session.live.request().user_file
    try:
        change = await asyncio.to_thread(plan, tool, arguments, session.config, user_file)
    except Refused as exc:
        return answers.tool_error(f"{tool}: {exc}; nothing was written")
    if session.modern:
        meta = params.get("_meta") or {}
        capabilities = meta.get(protocol.CLIENT_CAPABILITIES_KEY)
        if elicits(capabilities, protocol.LATEST_MODERN):
            responses = params.get("inputResponses")
            answer = responses.get(CONFIRM) if isinstance(responses, Mapping) else None
            if answer is None:
                return {
                    "resultType": "input_required",
                    "inputRequests": {
                        CONFIRM: {
                            "method": "elicitation/create",
                            "params": elicit_params(change, protocol.LATEST_MODERN),
                        }
                    },
                    "requestState": request_state(tool, arguments),
                }
            if not state_valid(params.get("requestState"), tool, arguments):
                raise RpcError(
                    INVALID_PARAMS,
                    "Invalid params for tools/call: requestState is not the one made for this "
                    "call (or it expired); call the tool again without it",
                )
            if (what := confirmed(answer)) is not None:
                return _declined(change, what)
    elif elicits(session.client_capabilities, session.version):
        try:
            answer = await session.ask(
                "elicitation/create", ASK_SECONDS, elicit_params(change, session.version)
            )
        except RpcError as exc:
            return _declined(change, f"the client could not ask: {exc.message}")
        if (what := confirmed(answer)) is not None:
            return _declined(change, what)
    async with _LOCK:
        try:
            # Read again: the file, or the layers, may have changed while the user read.
            again = await asyncio.to_thread(plan, tool, arguments, session.config, user_file)
            if again.path != change.path:
                raise Refused(f"the snippet now comes from {again.path}; call the tool again")
            await asyncio.to_thread(commit, again)
        except Refused as exc:
            return answers.tool_error(f"{tool}: {exc}; nothing was written")
        config = await session.live.reload()
    return done(again, config)
