"""Run the Emacs batch tests against the server: eglot with our package
(tests/editors/emacs/test-eglot.el) and lsp-mode configured only from its own documentation
(tests/editors/emacs/test-lsp-mode.el).

Needs `emacs` (28+) with eglot: Debian's `emacs-nox` + `elpa-eglot`, or Emacs 29+ where eglot is
built in; and for lsp-mode Debian's `elpa-lsp-mode elpa-company elpa-markdown-mode
elpa-yasnippet`. Without them a test is skipped locally and fails under CI (env `CI` set).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_EL = ROOT / "tests" / "editors" / "emacs" / "test-eglot.el"
MANAGE_EL = ROOT / "tests" / "editors" / "emacs" / "test-eglot-manage.el"
EDIT_EL = ROOT / "tests" / "editors" / "emacs" / "test-eglot-edit.el"
LSP_MODE_EL = ROOT / "tests" / "editors" / "emacs" / "test-lsp-mode.el"
LSP_MODE_PACKAGES = ("lsp-mode", "company", "markdown-mode", "yasnippet")
ELPA_GLOB = "/usr/share/emacs/site-lisp/elpa/*"
TIMEOUT = 150  # seconds for the whole Emacs run; the .el file has its own 90 s limit


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


def _available(emacs: str, *features: str) -> bool:
    dirs = " ".join(f'"{d}"' for d in glob.glob(ELPA_GLOB))
    requires = " ".join(f"(require '{f})" for f in features)
    probe = f"(progn (dolist (d (list {dirs})) (add-to-list 'load-path d)) {requires})"
    try:
        proc = subprocess.run(
            [emacs, "--batch", "-Q", "--eval", probe],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def test_emacs_eglot_client(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        _missing("emacs is not installed (apt-get install emacs-nox elpa-eglot)")
    assert emacs is not None
    if not _available(emacs, "eglot"):
        _missing("eglot is not available to Emacs (apt-get install elpa-eglot)")

    _run(emacs, TEST_EL, tmp_path)


def test_emacs_eglot_manages_snippets(tmp_path: Path) -> None:
    """The typo hint in Flymake, xref references and apropos, eglot-rename."""
    emacs = shutil.which("emacs")
    if emacs is None:
        _missing("emacs is not installed (apt-get install emacs-nox elpa-eglot)")
    assert emacs is not None
    if not _available(emacs, "eglot"):
        _missing("eglot is not available to Emacs (apt-get install elpa-eglot)")
    _run(emacs, MANAGE_EL, tmp_path)


def test_emacs_eglot_edits_a_snippet(tmp_path: Path) -> None:
    """pi-snippets-edit-snippet: the text unescaped in a buffer, saved back escaped."""
    emacs = shutil.which("emacs")
    if emacs is None:
        _missing("emacs is not installed (apt-get install emacs-nox elpa-eglot)")
    assert emacs is not None
    if not _available(emacs, "eglot"):
        _missing("eglot is not available to Emacs (apt-get install elpa-eglot)")
    _run(emacs, EDIT_EL, tmp_path)


def test_emacs_lsp_mode_configured_from_its_docs(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        _missing("emacs is not installed (apt-get install emacs-nox elpa-lsp-mode)")
    assert emacs is not None
    if not _available(emacs, *LSP_MODE_PACKAGES):
        _missing(
            "lsp-mode is not available to Emacs "
            "(apt-get install elpa-lsp-mode elpa-company elpa-markdown-mode elpa-yasnippet)"
        )
    _run(emacs, LSP_MODE_EL, tmp_path)


def _run(emacs: str, test_el: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PI_SNIPPETS_SERVER"] = f"{sys.executable} -m pi_snippets_lsp"
    env["HOME"] = str(tmp_path)  # no user init, no ~/.pi settings leaking in
    env.pop("PI_CODING_AGENT_DIR", None)  # the .el file sets its own
    try:
        proc = subprocess.run(
            [emacs, "--batch", "-Q", "-l", str(test_el)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        err = exc.stderr or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
        pytest.fail(
            f"Emacs did not finish within {TIMEOUT} s\n--- stdout\n{out}\n--- stderr\n{err}"
        )

    output = f"exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, output
    assert "0 failure(s): PASS" in proc.stderr, output
