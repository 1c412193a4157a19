"""The ``pi-snippets-lsp`` command: serve LSP, or expand / check from the shell.

docs/lsp.md, "Command line". In stdio mode stdout is the JSON-RPC stream, so logging
goes to stderr or ``--log-file``, never to stdout.

The shell commands (``expand``, ``check``, ``schema``) run on every prompt of a shell
user, a script or an agent's hook, so they import only the rules they apply: the
protocol stack (pygls, lsprotocol, pydantic, the MCP SDK) and the servers' modules are
imported by the serving commands alone, when they run (tests/unit/test_layout.py).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pi_snippets_lsp.core.catalog import TRUST_FLAG_HINT, untrusted_note
from pi_snippets_lsp.core.config import MESSAGE_PREFIX, Config
from pi_snippets_lsp.core.expansion import Expansion, expand_once
from pi_snippets_lsp.core.snippet import preview
from pi_snippets_lsp.core.surrogates import without_lone_surrogates
from pi_snippets_lsp.lsp.limits import MIB, Limits
from pi_snippets_lsp.settings.layers import LoadRequest, load_config, load_request
from pi_snippets_lsp.settings.schema import settings_json_schema
from pi_snippets_lsp.wire.version import VERSION

if TYPE_CHECKING:
    import logging

#: The commands run from a shell, a script or a hook: they print and exit.
SHELL_COMMANDS: Final = frozenset({"expand", "check", "schema", "hook", "setup"})


def _add_settings_options(parser: argparse.ArgumentParser, *, sub: bool = False) -> None:
    # A subcommand's options must not reset what was given before the subcommand name.
    default: object = argparse.SUPPRESS if sub else None
    parser.add_argument(
        "--settings",
        default=default,
        metavar="FILE",
        help="user settings file (default: $PI_CODING_AGENT_DIR/settings.json "
        "or ~/.pi/agent/settings.json)",
    )
    parser.add_argument(
        "--project",
        default=default,
        metavar="DIR",
        help="project folder whose .pi/settings.json is layered over the user settings "
        "(default: the current directory; read only with --trust-project)",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        default=argparse.SUPPRESS if sub else False,
        help="read the project's .pi/settings.json (Pi reads it only for trusted projects)",
    )


def _positive(kind: type[int] | type[float]) -> Callable[[str], Any]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
        return value

    return parse


def _add_limit_options(parser: argparse.ArgumentParser) -> None:
    d = Limits()
    group = parser.add_argument_group("limits (what one client may cost)")
    group.add_argument(
        "--max-connections",
        type=_positive(int),
        default=d.max_connections,
        metavar="N",
        help=f"daemon: connections at once; more are closed (default {d.max_connections})",
    )
    group.add_argument(
        "--initialize-timeout",
        type=_positive(float),
        default=d.initialize_timeout,
        metavar="SECONDS",
        help="daemon: a connection without a valid initialize after this long is closed "
        f"(default {d.initialize_timeout:g})",
    )
    group.add_argument(
        "--max-message-size",
        type=_positive(int),
        default=d.max_body,
        metavar="BYTES",
        help=f"the largest message body; a bigger one is refused (default {d.max_body // MIB} MiB)",
    )
    group.add_argument(
        "--max-initialize-size",
        type=_positive(int),
        default=d.max_initialize_size,
        metavar="BYTES",
        help="daemon with a token: the largest message before a valid initialize "
        f"(default {d.max_initialize_size // 1024} KiB)",
    )
    group.add_argument(
        "--max-folders",
        type=_positive(int),
        default=d.max_folders,
        metavar="N",
        help=f"workspace folders read per session; more are ignored (default {d.max_folders})",
    )
    group.add_argument(
        "--min-poll-interval",
        type=_positive(float),
        default=d.min_poll_interval,
        metavar="SECONDS",
        help="the smallest pollInterval a client may ask for; a smaller one is raised to it "
        f"(default {d.min_poll_interval:g})",
    )
    group.add_argument(
        "--max-unsent",
        type=_positive(int),
        default=d.max_unsent,
        metavar="BYTES",
        help="answers waiting for a client; past it the client is not read until it reads "
        f"(default {d.max_unsent // MIB} MiB)",
    )
    group.add_argument(
        "--stuck-timeout",
        type=_positive(float),
        default=d.stuck_timeout,
        metavar="SECONDS",
        help="daemon: a connection that has not read its answers for this long is closed "
        f"(default {d.stuck_timeout:g})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pi-snippets-lsp",
        description="Language server for Pi's %name prompt snippets (pi-simple-snippets).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    parser.add_argument("--log-file", metavar="FILE", help="write the log to FILE")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (default)")
    transport.add_argument(
        "--socket",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="serve on a Unix socket, as a daemon: every connection is a session of its own, "
        "and only your user can connect (default PATH: lsp.sock in "
        "$XDG_RUNTIME_DIR/pi-snippets-lsp/); the recommended daemon",
    )
    transport.add_argument(
        "--tcp",
        action="store_true",
        help="serve on a TCP socket, as a daemon; clients need the token of --token-file",
    )
    transport.add_argument(
        "--ws", action="store_true", help="the same on a WebSocket (needs pi-snippets-lsp[ws])"
    )
    daemon = parser.add_argument_group("daemon (--tcp, --ws)")
    daemon.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: loopback only, other machines cannot "
        "connect; on any address a client needs the token)",
    )
    daemon.add_argument(
        "--port", type=int, default=2087, help="port to listen on (default 2087; 0: any free)"
    )
    daemon.add_argument(
        "--token-file",
        metavar="FILE",
        help="where to write the token clients send as initializationOptions.token "
        "(default: token in $XDG_RUNTIME_DIR/pi-snippets-lsp/); written anew at each start",
    )
    daemon.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="--ws: a web origin (https://example.org) allowed to connect; repeatable. "
        "A handshake from any other origin is refused with 403 (default: none)",
    )
    _add_limit_options(parser)
    _add_settings_options(parser)

    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    expand_cmd = commands.add_parser(
        "expand",
        help="expand the %%name markers of a prompt read on stdin",
        description="Read a prompt on stdin and write it expanded to stdout, byte for byte "
        "(no newline added or removed). Configuration problems go to stderr.",
    )
    _add_settings_options(expand_cmd, sub=True)
    check_cmd = commands.add_parser(
        "check",
        help="validate the configuration and print the effective snippets",
        description="Load and validate the configuration. Exit 0 without warnings, 1 with.",
    )
    _add_settings_options(check_cmd, sub=True)
    check_cmd.add_argument("--json", action="store_true", help="print one JSON object")
    commands.add_parser("schema", help="print the JSON schema of the piSimpleSnippets settings")
    mcp_cmd = commands.add_parser(
        "mcp", help="serve the snippets to MCP agents on stdio", description=MCP_DESCRIPTION
    )
    _add_settings_options(mcp_cmd, sub=True)
    _add_mcp_options(mcp_cmd, max_message_size=argparse.SUPPRESS)
    from pi_snippets_lsp.agents.arguments import add_agent_commands  # noqa: PLC0415

    add_agent_commands(commands, _add_settings_options)
    return parser


MCP_DESCRIPTION: Final = (
    "Serve the snippets as a Model Context Protocol server on stdin/stdout: "
    "one prompt and one snippet:// resource per snippet, and the tools expand_snippets, "
    "list_snippets, get_snippet. docs/mcp.md of https://github.com/pi-snippets/pi-snippets-lsp"
)


def _add_mcp_options(parser: argparse.ArgumentParser, *, max_message_size: object) -> None:
    parser.add_argument(
        "--poll-interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="seconds between looks at the settings files (default 1; at least 0.25; "
        "0 stops watching)",
    )
    parser.add_argument(
        "--max-message-size",
        type=_positive(int),
        default=max_message_size,
        metavar="BYTES",
        help="the longest message line; a longer one is refused (default 64 MiB)",
    )
    parser.add_argument(
        "--allow-writes",
        action="store_true",
        help="offer the tools save_snippet, rename_snippet and delete_snippet, which change "
        "the settings files (confirmed with the user where the client can ask)",
    )


def _terminal_columns() -> int:
    """``shutil.get_terminal_size``'s width: ``$COLUMNS``, else stdout's terminal, or 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's own layout and width, without the ``shutil`` import (and compressors)
    argparse makes for every option it adds, help asked for or not."""
    return argparse.HelpFormatter(prog, width=_terminal_columns() - 2)


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` laid out by ``_formatter``: every parser of the command
    line, its commands' too, so none of them imports ``shutil``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _formatter)
        super().__init__(*args, **kwargs)


def build_mcp_parser() -> argparse.ArgumentParser:
    """``pi-snippets-lsp mcp ...`` alone, giving what ``build_parser`` gives for a command
    line that starts with ``mcp`` (no option before the command name).

    Agents spawn this command and offer only the servers that answered within a moment
    (docs/mcp.md): ``main`` parses such a command line without building every other
    command's parser first.
    """
    parser = _Parser(prog="pi-snippets-lsp mcp", description=MCP_DESCRIPTION)
    _add_settings_options(parser)
    _add_mcp_options(parser, max_message_size=Limits().max_body)
    parser.set_defaults(command="mcp", verbose=0, log_file=None)
    return parser


def _request(args: argparse.Namespace) -> LoadRequest:
    """Where the command's generation comes from, as ``api.load_config`` asks."""
    return load_request(
        settings=args.settings,
        project=args.project or Path.cwd(),
        trust_project=args.trust_project,
    )


def _load(args: argparse.Namespace) -> Config:
    """The generation the command works on, loaded as ``api.load_config`` loads it."""
    return load_config(_request(args))


def _report_problems(config: Config) -> None:
    message = config.warning_message()
    if message:
        print(message, file=sys.stderr)
    for path in config.untrusted_project_files:
        print(f"{MESSAGE_PREFIX} {untrusted_note(path, TRUST_FLAG_HINT)}", file=sys.stderr)


def run_expand(args: argparse.Namespace) -> int:
    config = _load(args)
    _report_problems(config)
    # Bytes in, bytes out: undecodable bytes survive via surrogateescape, and line
    # endings and a trailing newline (or its absence) are never touched.
    data = sys.stdin.buffer.read()
    text = data.decode("utf-8", "surrogateescape")
    result = expand_once(text, config.values)  # one text, then the process exits
    _write_all(_expanded_bytes(text, result))
    return 0


def _write_all(data: bytes) -> None:
    """Write every byte to stdout. A write larger than the buffer goes straight to the
    file and may return a short count without an error (a reader that left mid-write
    gets what it read); writing the rest then meets ``BrokenPipeError`` (``run_printing``)
    instead of the output being cut without a word."""
    out = sys.stdout.buffer
    view = memoryview(data)
    while view:
        view = view[out.write(view) :]
    out.flush()


def _expanded_bytes(text: str, result: Expansion) -> bytes:
    """The prompt's own bytes exactly as read, each inserted text as UTF-8.

    A lone surrogate in a settings value cannot be UTF-8: it is written as U+FFFD, as
    Node writes it, and never mistaken for one of the input's undecodable bytes.
    """
    pieces: list[bytes] = []
    last = 0
    for replacement in result.replacements:
        pieces.append(text[last : replacement.start].encode("utf-8", "surrogateescape"))
        pieces.append(without_lone_surrogates(replacement.new_text).encode("utf-8"))
        last = replacement.end
    pieces.append(text[last:].encode("utf-8", "surrogateescape"))
    return b"".join(pieces)


def shortcut_hints_of(config: Config) -> list[str]:
    """Why the generation's shortcut may not do what the user expects: the hints the
    editor shows on the ``shortcut`` value (``settings.diagnostics.shortcut_hints``).
    Information, not warnings: Pi accepts the shortcut."""
    if config.shortcut is None:
        return []
    # Imported here: only ``check`` states the hints (``expand`` starts without them).
    from pi_snippets_lsp.settings.diagnostics import shortcut_hints  # noqa: PLC0415

    return shortcut_hints(config.shortcut, config.shortcut)


def check_report(config: Config) -> dict[str, object]:
    """The ``check --json`` object: the documented keys first (docs/configuration.md),
    then the untrusted project files the text output notes and the shortcut's hints."""
    return {
        "snippets": {s.name: s.value for s in config.snippets},
        "shortcut": config.shortcut,
        "expandOnCompletion": config.expand_on_completion,
        "warnings": list(config.warnings),
        "sources": list(config.sources),
        "untrustedProjectFiles": list(config.untrusted_project_files),
        "shortcutHints": shortcut_hints_of(config),
    }


def run_check(args: argparse.Namespace) -> int:
    request = _request(args)
    config = load_config(request)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A lone surrogate (JSON allows "\ud800" in a name or value) prints as that
        # escape, which is also valid inside a JSON string, instead of a traceback.
        sys.stdout.reconfigure(errors="backslashreplace")
    if args.json:
        json.dump(check_report(config), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        looked = ", ".join(str(path) for path in request.files)
        print("sources: " + (", ".join(config.sources) or f"(no settings file at {looked})"))
        print(f"snippets: {len(config.snippets)}")
        for snippet in config.snippets:
            print(f"  %{snippet.name}  {preview(snippet.value)}")
        print(f"shortcut: {config.shortcut or '(none)'}")
        for hint in shortcut_hints_of(config):
            print(f"hint: {hint}")
        print(f"expandOnCompletion: {'true' if config.expand_on_completion else 'false'}")
        for warning in config.warnings:
            print(f"warning: {warning}")
        for path in config.untrusted_project_files:
            print(f"note: {untrusted_note(path, TRUST_FLAG_HINT)}")
    return 1 if config.warnings else 0


def run_schema() -> int:
    json.dump(settings_json_schema(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def run_mcp(args: argparse.Namespace) -> int:
    """``mcp``: the MCP server (standard library only: no protocol SDK to import)."""
    from pi_snippets_lsp.mcp import import_asyncio_without_tls  # noqa: PLC0415

    import_asyncio_without_tls()
    from pi_snippets_lsp.mcp.live import McpFlags  # noqa: PLC0415 (only when serving)
    from pi_snippets_lsp.mcp.server import serve  # noqa: PLC0415 (only this command needs it)

    return serve(
        McpFlags(
            settings=args.settings,
            project=args.project,
            trust_project=args.trust_project,
            poll_interval=max(args.poll_interval, 0.0),
            allow_writes=args.allow_writes,
        ),
        max_line=args.max_message_size,
    )


def _setup_logging(args: argparse.Namespace) -> None:
    import logging  # noqa: PLC0415 (a shell command logs nothing unless asked to)

    level = logging.WARNING - 10 * min(args.verbose, 2)
    handler: logging.Handler
    if args.log_file:
        handler = logging.FileHandler(args.log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


#: The exit status of a command whose reader stopped reading (``check | head``):
#: 128 + SIGPIPE (13), the status a shell reports for a tool that signal ends
#: (``seq 1000000 | head``).
BROKEN_PIPE_EXIT: Final = 141


def run_printing(command: Callable[[], int]) -> int:
    """Run a command that prints to stdout; a reader that stops reading ends it quietly.

    docs/lsp.md, "Command line". ``pi-snippets-lsp check | head`` is no error of ours:
    like the tools SIGPIPE ends (Python ignores the signal, so a write raises
    ``BrokenPipeError`` instead), the command stops, says nothing on stderr and exits
    ``BROKEN_PIPE_EXIT``. Not 0: for ``check`` that would claim a verdict the reader
    never saw, and ``set -o pipefail`` treats 141 like any other cut-off producer. The
    output is flushed here, so an error at Python's final flush cannot escape as
    "Exception ignored"; stdout then points at the null device, so the rest of the
    buffer is dropped without a word. Any other ``OSError`` (a lost working directory)
    is one line on stderr and status 2.
    """
    try:
        code = command()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _discard_stdout()
        return BROKEN_PIPE_EXIT
    except OSError as exc:
        print(f"pi-snippets-lsp: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _discard_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor behind stdout: nothing to flush
        pass


@contextlib.contextmanager
def _each_message_looked_up_once() -> Iterator[None]:
    """While the command line is parsed, argparse looks each of its own messages up once.

    argparse translates its messages (``_("usage: ")``) with ``gettext``, which searches
    the locale folders for a catalog anew on every call, and the command's five parsers
    ask some twenty times: a large part of a shell command's start. The translation
    cannot change within one parse, so each message's is kept.
    """
    names = vars(argparse)  # the module's own ``_`` (typeshed does not declare it)
    translate = names["_"]
    names["_"] = functools.cache(translate)
    try:
        yield
    finally:
        names["_"] = translate


def parse_command_line(argv: Sequence[str]) -> argparse.Namespace:
    """The command line as ``build_parser`` reads it; one that starts with ``mcp`` is
    read by ``build_mcp_parser`` alone (the same values, sooner)."""
    with _each_message_looked_up_once():
        if list(argv[:1]) == ["mcp"]:
            return build_mcp_parser().parse_args(argv[1:])
        return build_parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_command_line(sys.argv[1:] if argv is None else argv)
    if args.command not in SHELL_COMMANDS or args.verbose or args.log_file:
        _setup_logging(args)
    if args.command == "expand":
        return run_printing(lambda: run_expand(args))
    if args.command == "check":
        return run_printing(lambda: run_check(args))
    if args.command == "schema":
        return run_printing(run_schema)
    if args.command == "mcp":
        return run_mcp(args)
    if args.command == "hook":
        from pi_snippets_lsp.agents.hook import run_hook_command  # noqa: PLC0415 (fast start)

        return run_hook_command(args)
    if args.command == "setup":
        from pi_snippets_lsp.agents.setup import run_setup_command  # noqa: PLC0415

        return run_printing(lambda: run_setup_command(args, VERSION))
    return run_lsp(args)


def run_lsp(args: argparse.Namespace) -> int:
    """The language server: on stdio, or as a daemon on a socket."""
    # The protocol stack, imported only by the command that serves it.
    from pi_snippets_lsp.lsp.daemon import Daemon, Listen  # noqa: PLC0415
    from pi_snippets_lsp.lsp.server import quiet_invalid_params  # noqa: PLC0415
    from pi_snippets_lsp.lsp.session import ServerFlags  # noqa: PLC0415
    from pi_snippets_lsp.lsp.transport import serve_stdio  # noqa: PLC0415

    quiet_invalid_params()
    options = ServerFlags(
        user_settings=args.settings,
        default_project=args.project,
        trust_project=args.trust_project,
        error_details=args.verbose > 0,
        limits=Limits(
            max_connections=args.max_connections,
            initialize_timeout=args.initialize_timeout,
            max_body=args.max_message_size,
            max_initialize_size=args.max_initialize_size,
            max_folders=args.max_folders,
            min_poll_interval=args.min_poll_interval,
            max_unsent=args.max_unsent,
            stuck_timeout=args.stuck_timeout,
        ),
    )
    if args.socket is not None:
        path = Path(args.socket).expanduser() if args.socket else None
        return Daemon(options, Listen("unix", path=path)).serve()
    if args.tcp or args.ws:
        listen = Listen(
            "tcp" if args.tcp else "ws",
            host=args.host,
            port=args.port,
            token_file=Path(args.token_file).expanduser() if args.token_file else None,
            allow_origins=tuple(args.allow_origin),
        )
        return Daemon(options, listen).serve()
    # LSP: exit code 0 after a `shutdown` request, 1 when the session ends without one.
    return serve_stdio(options)
