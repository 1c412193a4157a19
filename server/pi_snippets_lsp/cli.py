"""The ``pi-snippets-lsp`` command: serve LSP, or expand / check from the shell.

docs/lsp.md, "Command line". In stdio mode stdout is the JSON-RPC stream, so logging
goes to stderr or ``--log-file``, never to stdout.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from pi_snippets_lsp import __version__
from pi_snippets_lsp.api import load_config
from pi_snippets_lsp.core.config import Config
from pi_snippets_lsp.core.expansion import Expansion, expand
from pi_snippets_lsp.core.snippet import preview
from pi_snippets_lsp.lsp.session import ServerOptions
from pi_snippets_lsp.lsp.transport import Daemon, serve_stdio
from pi_snippets_lsp.settings.schema import settings_json_schema

log = logging.getLogger(__name__)


class QuietInvalidParams(logging.Filter):
    """pygls logs a full traceback for every error answer; bad params are the client's
    mistake, already answered with -32602, so one line is enough. Installed by the CLI."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcInvalidParams | JsonRpcInvalidRequest):
            record.msg, record.args, record.exc_info = "%s", (exc.message,), None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


#: A lone surrogate: JSON allows one in a settings string ("\ud800"), UTF-8 cannot
#: encode it.
_SURROGATE = re.compile("[\ud800-\udfff]")


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-snippets-lsp",
        description="Language server for Pi's %name prompt snippets (pi-simple-snippets).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--log-file", metavar="FILE", help="write the log to FILE")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (default)")
    transport.add_argument(
        "--tcp",
        action="store_true",
        help="serve on a TCP socket, as a daemon: every connection is a session of its own",
    )
    transport.add_argument(
        "--ws", action="store_true", help="the same on a WebSocket (needs pi-snippets-lsp[ws])"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: loopback only, other machines cannot "
        "connect; the server has no authentication, so think before listening on others)",
    )
    parser.add_argument(
        "--port", type=int, default=2087, help="port to listen on (default 2087; 0: any free)"
    )
    _add_settings_options(parser)

    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
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
    return parser


def _load(args: argparse.Namespace) -> Config:
    return load_config(
        settings=args.settings,
        project=args.project or Path.cwd(),
        trust_project=args.trust_project,
    )


def _report_problems(config: Config) -> None:
    message = config.warning_message()
    if message:
        print(message, file=sys.stderr)
    for path in config.untrusted_project_files:
        print(
            f"pi-simple-snippets: skipped untrusted project settings {path} "
            "(pass --trust-project to read it)",
            file=sys.stderr,
        )


def run_expand(args: argparse.Namespace) -> int:
    config = _load(args)
    _report_problems(config)
    # Bytes in, bytes out: undecodable bytes survive via surrogateescape, and line
    # endings and a trailing newline (or its absence) are never touched.
    data = sys.stdin.buffer.read()
    text = data.decode("utf-8", "surrogateescape")
    result = expand(text, config.values)
    sys.stdout.buffer.write(_expanded_bytes(text, result))
    sys.stdout.buffer.flush()
    return 0


def _expanded_bytes(text: str, result: Expansion) -> bytes:
    """The prompt's own bytes exactly as read, each inserted text as UTF-8.

    A lone surrogate in a settings value cannot be UTF-8: it is written as U+FFFD, as
    Node writes it, and never mistaken for one of the input's undecodable bytes.
    """
    pieces: list[bytes] = []
    last = 0
    for replacement in result.replacements:
        pieces.append(text[last : replacement.start].encode("utf-8", "surrogateescape"))
        pieces.append(_SURROGATE.sub("\ufffd", replacement.new_text).encode("utf-8"))
        last = replacement.end
    pieces.append(text[last:].encode("utf-8", "surrogateescape"))
    return b"".join(pieces)


def check_report(config: Config) -> dict[str, object]:
    """The ``check --json`` object."""
    return {
        "snippets": {s.name: s.value for s in config.snippets},
        "shortcut": config.shortcut,
        "expandOnCompletion": config.expand_on_completion,
        "warnings": list(config.warnings),
        "sources": list(config.sources),
    }


def run_check(args: argparse.Namespace) -> int:
    config = _load(args)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A lone surrogate (JSON allows "\ud800" in a name or value) prints as that
        # escape, which is also valid inside a JSON string, instead of a traceback.
        sys.stdout.reconfigure(errors="backslashreplace")
    if args.json:
        json.dump(check_report(config), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print("sources: " + (", ".join(config.sources) or "(no settings file found)"))
        print(f"snippets: {len(config.snippets)}")
        for snippet in config.snippets:
            print(f"  %{snippet.name}  {preview(snippet.value)}")
        print(f"shortcut: {config.shortcut or '(none)'}")
        print(f"expandOnCompletion: {'true' if config.expand_on_completion else 'false'}")
        for warning in config.warnings:
            print(f"warning: {warning}")
        for path in config.untrusted_project_files:
            print(f"note: skipped untrusted project settings {path} (use --trust-project)")
    return 1 if config.warnings else 0


def run_schema() -> int:
    json.dump(settings_json_schema(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _setup_logging(args: argparse.Namespace) -> None:
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
    logging.getLogger("pygls.protocol.json_rpc").addFilter(QuietInvalidParams())


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args)
    if args.command in ("expand", "check"):
        try:
            return run_expand(args) if args.command == "expand" else run_check(args)
        except OSError as exc:  # a lost working directory, a closed pipe: one line
            print(f"pi-snippets-lsp: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if args.command == "schema":
        return run_schema()

    options = ServerOptions(
        user_settings=args.settings,
        default_project=args.project,
        trust_project=args.trust_project,
        error_details=args.verbose > 0,
    )
    if args.tcp:
        return Daemon(options, args.host, args.port).serve_tcp()
    if args.ws:
        return Daemon(options, args.host, args.port).serve_ws()
    # LSP: exit code 0 after a `shutdown` request, 1 when the session ends without one.
    return serve_stdio(options)
