"""The ``pi-snippets-lsp`` command line, run as a real process.

docs/lsp.md, "Command line": ``expand`` is byte-exact, ``check`` exits 1 on
warnings, bad settings are warnings naming the file, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_snippets_lsp import __version__

VALUE = "Use your MCP tools to find the information"


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8")


@dataclass
class Home:
    """A sandbox: HOME, the agent dir (``PI_CODING_AGENT_DIR``) and a working folder."""

    root: Path
    agent_dir: Path
    cwd: Path

    @property
    def user_file(self) -> Path:
        return self.agent_dir / "settings.json"

    def write_user(self, settings: object) -> Path:
        return write_json(self.user_file, settings)

    def run(self, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Run:
        environment = {
            key: value
            for key, value in os.environ.items()
            if key not in {"PI_CODING_AGENT_DIR", "HOME"}
        }
        environment.update(HOME=str(self.root), PI_CODING_AGENT_DIR=str(self.agent_dir))
        environment.update(env or {})
        completed = subprocess.run(
            [sys.executable, "-m", "pi_snippets_lsp", *args],
            input=stdin,
            capture_output=True,
            cwd=self.cwd,
            env=environment,
            check=False,
            timeout=30,
        )
        stderr = completed.stderr.decode("utf-8", "replace")
        assert "Traceback" not in stderr, stderr
        return Run(completed.returncode, completed.stdout, stderr)


def write_json(path: Path, settings: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings), encoding="utf-8")
    return path


def namespace(snippets: dict[str, str], **fields: object) -> dict[str, object]:
    return {"piSimpleSnippets": {"snippets": snippets, **fields}}


@pytest.fixture
def home(tmp_path: Path) -> Home:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    cwd = tmp_path / "work"
    cwd.mkdir()
    return Home(root=tmp_path, agent_dir=agent_dir, cwd=cwd)


# --------------------------------------------------------------------------- expand


@pytest.mark.parametrize(
    ("stdin", "stdout"),
    [
        pytest.param(b"", b"", id="empty-input"),
        pytest.param(b"%a", b"AAA", id="no-newline-added"),
        pytest.param(b"%a\n", b"AAA\n", id="trailing-newline-kept"),
        pytest.param(b"%a\n\n", b"AAA\n\n", id="two-trailing-newlines-kept"),
        pytest.param(b"one\r\n%a\r\n", b"one\r\nAAA\r\n", id="crlf-kept"),
        pytest.param(b"one\r%a", b"one\rAAA", id="lone-cr-kept"),
        pytest.param(b"\xff %a \xfe\n", b"\xff AAA \xfe\n", id="invalid-utf-8-bytes-kept"),
        pytest.param(b"%a \xe4\xb8", b"AAA \xe4\xb8", id="truncated-utf-8-kept"),
        pytest.param(b"\xef\xbb\xbf%a", b"\xef\xbb\xbfAAA", id="bom-kept-and-a-boundary"),
        pytest.param("中，%a。".encode(), "中，AAA。".encode(), id="cjk"),
        pytest.param(b"%unknown x%a %%a", b"%unknown x%a %a", id="unknown-glued-and-escape"),
        pytest.param(b"%multi", "line 1\r\nline 2 – ✓".encode(), id="value-inserted-literally"),
        pytest.param(b"\x00%a\x00", b"\x00%a\x00", id="nul-is-no-boundary"),
    ],
)
def test_expand_is_byte_exact(home: Home, stdin: bytes, stdout: bytes) -> None:
    home.write_user(namespace({"a": "AAA", "multi": "line 1\r\nline 2 – ✓"}))
    result = home.run("expand", stdin=stdin)
    assert result.returncode == 0
    assert result.stdout == stdout
    assert result.stderr == ""


def test_expand_with_nothing_configured_echoes_the_input(home: Home) -> None:
    data = b"%%a %a\r\n\xff"
    result = home.run("expand", stdin=data)
    assert (result.returncode, result.stdout, result.stderr) == (0, data, "")


def test_expand_reads_the_user_file_in_pi_coding_agent_dir(home: Home) -> None:
    other = home.root / "other-agent"
    write_json(other / "settings.json", namespace({"a": "OTHER"}))
    home.write_user(namespace({"a": "AGENT"}))
    assert home.run("expand", stdin=b"%a").stdout == b"AGENT"
    assert home.run("expand", stdin=b"%a", env={"PI_CODING_AGENT_DIR": str(other)}).stdout == (
        b"OTHER"
    )


def test_expand_falls_back_to_the_default_user_file(home: Home) -> None:
    write_json(home.root / ".pi" / "agent" / "settings.json", namespace({"a": "DEFAULT"}))
    result = home.run("expand", stdin=b"%a", env={"PI_CODING_AGENT_DIR": ""})
    assert result.stdout == b"DEFAULT"


@pytest.mark.parametrize(
    "where",
    [pytest.param("before", id="before-the-subcommand"), pytest.param("after", id="after-it")],
)
def test_settings_option_replaces_the_user_file(home: Home, where: str) -> None:
    home.write_user(namespace({"a": "AGENT"}))
    chosen = write_json(home.root / "chosen.json", namespace({"a": "CHOSEN"}))
    args = (
        ["--settings", str(chosen), "expand"]
        if where == "before"
        else ["expand", "--settings", str(chosen)]
    )
    assert home.run(*args, stdin=b"%a").stdout == b"CHOSEN"


@pytest.fixture
def project(home: Home) -> Path:
    home.write_user(namespace({"u": "USER", "both": "user"}))
    folder = home.root / "project"
    write_json(folder / ".pi" / "settings.json", namespace({"p": "PROJECT", "both": "project"}))
    return folder


def test_a_trusted_project_is_layered_over_the_user_file(home: Home, project: Path) -> None:
    result = home.run("expand", "--project", str(project), "--trust-project", stdin=b"%u %p %both")
    assert result.stdout == b"USER PROJECT project"
    assert result.stderr == ""


def test_an_untrusted_project_is_skipped_with_a_note(home: Home, project: Path) -> None:
    result = home.run("expand", "--project", str(project), stdin=b"%u %p %both")
    assert result.returncode == 0
    assert result.stdout == b"USER %p user"
    project_file = project / ".pi" / "settings.json"
    assert result.stderr == (
        f"pi-simple-snippets: skipped project settings {project_file}: the project is not "
        "trusted (pass --trust-project to read it)\n"
    )


def test_the_current_directory_is_the_default_project(home: Home) -> None:
    write_json(home.cwd / ".pi" / "settings.json", namespace({"a": "HERE"}))
    assert home.run("expand", "--trust-project", stdin=b"%a").stdout == b"HERE"
    assert home.run("expand", stdin=b"%a").stdout == b"%a"


def test_expand_reports_configuration_problems_on_stderr_only(home: Home) -> None:
    home.write_user(namespace({"a": "AAA", "Bad": "x"}, shortcut="s"))
    result = home.run("expand", stdin=b"%a")
    assert result.returncode == 0
    assert result.stdout == b"AAA"
    assert result.stderr.startswith("pi-simple-snippets: ")
    assert result.stderr.count("\n") == 1  # one message


def test_expand_with_a_broken_settings_file_warns_and_echoes(home: Home) -> None:
    home.user_file.write_text('{"piSimpleSnippets": ', encoding="utf-8")
    result = home.run("expand", stdin=b"%a\n")
    assert result.returncode == 0
    assert result.stdout == b"%a\n"
    assert str(home.user_file) in result.stderr
    assert "not valid JSON" in result.stderr


def test_a_value_with_a_lone_surrogate_is_written_as_a_replacement_character(
    home: Home,
) -> None:
    # JSON allows "\ud800"; UTF-8 cannot encode it. Node writes U+FFFD.
    home.user_file.write_text(
        '{"piSimpleSnippets": {"snippets": {"a": "x\\ud800y", "b": "\\udc80"}}}',
        encoding="utf-8",
    )
    result = home.run("expand", stdin=b"%a %b \xff")
    assert result.returncode == 0
    assert result.stdout == "x\ufffdy \ufffd ".encode() + b"\xff"


# --------------------------------------------------------------------------- check


def test_check_exits_0_without_warnings(home: Home) -> None:
    home.write_user(namespace({"use-mcp": VALUE, "multi": "a\n\tb"}, shortcut="CTRL+SHIFT+S"))
    result = home.run("check")
    assert result.returncode == 0
    lines = result.text.splitlines()
    assert lines[0] == f"sources: {home.user_file}"
    assert "snippets: 2" in lines
    assert "  %multi  a b" in lines
    assert f"  %use-mcp  {VALUE}" in lines
    assert "shortcut: ctrl+shift+s" in lines
    assert "expandOnCompletion: false" in lines
    assert not any(line.startswith("warning:") for line in lines)


def test_check_exits_1_with_warnings_and_lists_each(home: Home) -> None:
    home.write_user(namespace({"a": "A", "Bad": "x"}, shortcut="s", expandOnCompletion="yes"))
    result = home.run("check")
    assert result.returncode == 1
    warnings = [line for line in result.text.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 3


def test_check_without_any_settings_file(home: Home) -> None:
    result = home.run("check")
    assert result.returncode == 0
    assert f"sources: (no settings file at {home.user_file})" in result.text.splitlines()
    assert "snippets: 0" in result.text.splitlines()


def test_check_mentions_an_untrusted_project(home: Home, project: Path) -> None:
    result = home.run("check", "--project", str(project))
    assert result.returncode == 0
    assert (
        f"note: skipped project settings {project / '.pi' / 'settings.json'}: the project is "
        "not trusted (pass --trust-project to read it)"
    ) in result.text.splitlines()


def test_check_json_has_exactly_the_documented_keys(home: Home) -> None:
    home.write_user(
        namespace({"b": "B", "a": "A\r\n", "Bad": "x"}, shortcut="alt+x", expandOnCompletion=True)
    )
    result = home.run("check", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert list(report) == [
        "snippets",
        "shortcut",
        "expandOnCompletion",
        "warnings",
        "sources",
        "untrustedProjectFiles",
        "shortcutHints",
    ]
    assert report["snippets"] == {"a": "A\r\n", "b": "B"}
    assert list(report["snippets"]) == ["a", "b"]
    assert report["shortcut"] == "alt+x"
    assert report["expandOnCompletion"] is True
    assert report["warnings"] == ['ignored 1 snippet entry: "Bad" (invalid name)']
    assert report["sources"] == [str(home.user_file)]


def test_check_json_with_nothing_configured(home: Home) -> None:
    result = home.run("check", "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "snippets": {},
        "shortcut": None,
        "expandOnCompletion": False,
        "warnings": [],
        "sources": [],
        "untrustedProjectFiles": [],
        "shortcutHints": [],
    }


def test_check_json_names_the_untrusted_project_file(home: Home, project: Path) -> None:
    report = json.loads(home.run("check", "--json", "--project", str(project)).stdout)
    assert report["untrustedProjectFiles"] == [str(project / ".pi" / "settings.json")]
    assert report["sources"] == [str(home.user_file)]


@pytest.mark.parametrize("shortcut", ["ctrl+shift+s", "CTRL+SHIFT+S"])
def test_check_states_the_shortcut_hints_the_editor_shows(home: Home, shortcut: str) -> None:
    """The shipped example's shortcut arrives as ctrl+s in a terminal without the kitty
    keyboard protocol: a hint (information, exit 0), as on the value in the editor."""
    home.write_user(namespace({"a": "A"}, shortcut=shortcut))
    hint = (
        '`shortcut` "ctrl+shift+s": a terminal without the kitty keyboard protocol sends it '
        "as ctrl+s, so Pi cannot tell the two apart"
    )
    text = home.run("check")
    assert text.returncode == 0
    assert f"hint: {hint}" in text.text.splitlines()
    report = json.loads(home.run("check", "--json").stdout)
    assert report["shortcutHints"] == [hint]
    assert report["warnings"] == []


def test_check_json_lists_both_sources_of_a_trusted_project(home: Home, project: Path) -> None:
    result = home.run("check", "--json", "--project", str(project), "--trust-project")
    report = json.loads(result.stdout)
    assert report["sources"] == [str(home.user_file), str(project / ".pi" / "settings.json")]
    assert report["snippets"] == {"both": "project", "p": "PROJECT", "u": "USER"}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param(b"{", "is not valid JSON", id="invalid-json"),
        pytest.param(b"[1]", "must hold a JSON object", id="array"),
        pytest.param(b"\xff\xfe", "is not UTF-8 text", id="not-utf-8"),
        pytest.param(b'{"a": NaN}', "is not valid JSON", id="nan"),
    ],
)
def test_a_broken_settings_file_is_a_warning_naming_it(
    home: Home, content: bytes, problem: str
) -> None:
    home.user_file.write_bytes(content)
    result = home.run("check", "--json")
    assert result.returncode == 1
    (warning,) = json.loads(result.stdout)["warnings"]
    assert warning.startswith(str(home.user_file))
    assert problem in warning


def test_a_directory_as_settings_file_is_a_warning(home: Home) -> None:
    home.user_file.mkdir()
    result = home.run("check")
    assert result.returncode == 1
    assert f"warning: {home.user_file} is a directory" in result.text


def test_an_agent_dir_that_is_a_file_is_a_warning(home: Home) -> None:
    not_a_dir = home.root / "file"
    not_a_dir.write_text("x", encoding="utf-8")
    result = home.run("check", env={"PI_CODING_AGENT_DIR": str(not_a_dir)})
    assert result.returncode == 1
    assert f"cannot read {not_a_dir / 'settings.json'}" in result.text


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _link(target: str) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        path.symlink_to(target)
        return path

    return make


def _loop(path: Path) -> Path:
    path.symlink_to(path)
    return path


HOSTILE_FILES = [
    pytest.param(_fifo, "is a named pipe (FIFO), not a settings file", id="fifo"),
    pytest.param(_link("/dev/zero"), "is a device, not a settings file", id="dev-zero"),
    pytest.param(_link("/dev/urandom"), "is a device, not a settings file", id="dev-urandom"),
    pytest.param(_loop, "is a symbolic link loop", id="symlink-loop"),
]


@pytest.mark.parametrize(("make", "problem"), HOSTILE_FILES)
@pytest.mark.parametrize("command", ["check", "expand"])
def test_a_settings_path_that_is_no_regular_file_is_a_warning_never_a_hang(
    home: Home, make: Callable[[Path], Path], problem: str, command: str
) -> None:
    """docs/configuration.md, "Reading a settings file": nothing blocks, nothing is read
    without limit, and no traceback (``Home.run`` fails on one, and on a hang)."""
    make(home.user_file)
    result = home.run(command, stdin=b"%a")
    assert f"{home.user_file} {problem}" in result.stderr + result.text
    if command == "check":
        assert result.returncode == 1
    else:
        assert result.returncode == 0 and result.stdout == b"%a"


def test_a_trusted_project_file_that_loops_is_a_warning(home: Home) -> None:
    home.write_user(namespace({"a": "AAA"}))
    loop = home.cwd / ".pi" / "settings.json"
    loop.parent.mkdir()
    _loop(loop)
    result = home.run("expand", "--trust-project", stdin=b"%a")
    assert result.stdout == b"AAA"
    assert f"{loop} is a symbolic link loop" in result.stderr


@pytest.mark.parametrize("command", ["check", "expand"])
def test_a_working_directory_that_is_gone_is_one_line(home: Home, command: str) -> None:
    gone = home.root / "gone"
    gone.mkdir()
    script = (
        f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m pi_snippets_lsp {command}'
    )
    completed = subprocess.run(
        ["sh", "-c", script], input=b"%a", capture_output=True, timeout=30, check=False
    )
    stderr = completed.stderr.decode()
    assert completed.returncode == 2
    assert "Traceback" not in stderr
    assert stderr.startswith("pi-snippets-lsp: ")


def run_into_a_closed_pipe(home: Home, *args: str, stdin: bytes) -> tuple[int, str]:
    """Run the command with stdout a pipe whose reader has gone (``... | head`` after
    ``head`` exits): every write to it fails with EPIPE."""
    environment = {**os.environ, "HOME": str(home.root), "PI_CODING_AGENT_DIR": str(home.agent_dir)}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "pi_snippets_lsp", *args],
            input=stdin,
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=home.cwd,
            env=environment,
            check=False,
            timeout=30,
        )
    finally:
        os.close(write_end)
    return completed.returncode, completed.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "command", [["check"], ["check", "--json"], ["expand"], ["schema"]], ids=" ".join
)
@pytest.mark.parametrize("size", [1, 5000], ids=["short output", "long output"])
def test_a_reader_that_stops_reading_ends_the_command_quietly(
    home: Home, command: list[str], size: int
) -> None:
    """docs/lsp.md, "Command line": ``check | head`` prints nothing on stderr and exits
    141 (128 + SIGPIPE), as a tool that the signal ends does; short output (written only
    when Python flushes at exit) and long output (written while printing) alike."""
    home.write_user(namespace({f"s{i}": "x" * 60 for i in range(size)}))
    returncode, stderr = run_into_a_closed_pipe(home, *command, stdin=b"%s1 " * size)
    assert (returncode, stderr) == (141, "")


@pytest.mark.parametrize("command", [["check"], ["expand"]], ids=" ".join)
def test_a_reader_that_reads_a_little_and_leaves_ends_the_command_quietly(
    home: Home, command: list[str]
) -> None:
    """``expand < prompt | head -c 10``: the reader takes a few bytes of a long output
    and goes. A write the reader left in the middle of returns the bytes it got through,
    without an error: the command must not take that for the whole output (and exit 0,
    its output cut), but go on writing, meet the broken pipe, and exit 141."""
    home.write_user(namespace({f"s{i}": "x" * 60 for i in range(5000)}))
    environment = {**os.environ, "HOME": str(home.root), "PI_CODING_AGENT_DIR": str(home.agent_dir)}
    with subprocess.Popen(
        [sys.executable, "-m", "pi_snippets_lsp", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=home.cwd,
        env=environment,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        if command == ["expand"]:  # check reads no input
            proc.stdin.write(b"%s1 " * 100_000)
        proc.stdin.close()
        assert len(proc.stdout.read(10)) == 10
        proc.stdout.close()
        stderr = proc.stderr.read().decode("utf-8", "replace")
        returncode = proc.wait(timeout=30)
    assert (returncode, stderr) == (141, "")


def test_check_survives_lone_surrogates_in_names_and_values(home: Home) -> None:
    home.user_file.write_text(
        '{"piSimpleSnippets": {"snippets": {"a": "x\\ud800", "\\udc80": "y"}}}',
        encoding="utf-8",
    )
    result = home.run("check", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["snippets"] == {"a": "x\ud800"}
    assert report["warnings"] == ['ignored 1 snippet entry: "\udc80" (invalid name)']
    human = home.run("check")
    assert human.returncode == 1
    assert "snippets: 1" in human.text


# --------------------------------------------------------------------------- the rest


def test_version(home: Home) -> None:
    result = home.run("--version")
    assert result.returncode == 0
    assert result.text == f"pi-snippets-lsp {__version__}\n"


def test_help_lists_the_commands(home: Home) -> None:
    result = home.run("--help")
    assert result.returncode == 0
    for word in ("expand", "check", "schema", "--settings", "--project", "--trust-project"):
        assert word in result.text
    assert "%name" in result.text
    assert "%%" not in result.text  # argparse's escape must not leak into the text


@pytest.mark.parametrize("command", [["check"], ["check", "--json"], ["expand"]], ids=" ".join)
def test_a_settings_file_that_does_not_exist_is_named(home: Home, command: list[str]) -> None:
    """docs/configuration.md, "Reading a settings file": a file named with ``--settings``
    is expected to exist; its absence is a warning, so ``check`` exits 1."""
    missing = home.cwd / "missing.json"
    result = home.run(*command, "--settings", str(missing), stdin=b"%a")
    assert f"settings file {missing} does not exist" in result.stderr + result.text
    if command == ["check", "--json"]:
        assert json.loads(result.text)["warnings"] == [f"settings file {missing} does not exist"]
    if command[0] == "check":
        assert result.returncode == 1
    else:
        assert result.returncode == 0 and result.stdout == b"%a"


def test_the_default_settings_file_may_be_absent(home: Home) -> None:
    result = home.run("check")
    assert result.returncode == 0
    assert "does not exist" not in result.text + result.stderr


def test_an_unknown_option_is_a_usage_error(home: Home) -> None:
    result = home.run("expand", "--no-such-option")
    assert result.returncode == 2
    assert "usage:" in result.stderr


def test_schema_prints_valid_json(home: Home) -> None:
    result = home.run("schema")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert schema["type"] == "object"
    snippets = schema["properties"]["piSimpleSnippets"]["properties"]["snippets"]
    assert snippets["additionalProperties"] == {"type": "string", "minLength": 1}
