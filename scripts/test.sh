#!/usr/bin/env bash
# The whole test suite, from a fresh clone. Installs what it needs (a virtualenv with the
# package and its test tools; Debian's Emacs with eglot, lsp-mode, company and yasnippet;
# through the VS Code test, code-server and Chromium when run as root), then runs: ruff,
# mypy --strict, the package check (sdist and wheel built, checked and installed into a
# fresh venv), the real VS Code end-to-end test, mutation testing of every core module
# (mutmut, which scripts/mutation.sh installs pinned), and pytest (unit and
# property tests, LSP sessions against the real server, real Neovim and Emacs sessions, the
# frontend client and the Node example, the prompt_toolkit and llm integrations, whose
# libraries the `test` extra brings).
#
#   bash scripts/test.sh [pytest args]
#
# PI_SNIPPETS_VENV    virtualenv to use (default .venv in the repo)
# PI_SNIPPETS_SKIP_MUTATION=1  skip the mutation step
# PI_SNIPPETS_SKIP_VSCODE=1  skip the code-server test (its first run installs ~860 MB into
#                            ~/.cache/pi-snippets-vscode-e2e, plus Debian's chromium)
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
venv="${PI_SNIPPETS_VENV:-$repo/.venv}"

step() { printf '\n=== %s\n' "$*"; }

step "install"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv" || exit 1
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[test,dev,editors]" || exit 1
if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    if ! command -v emacs >/dev/null || ! compgen -G "/usr/share/emacs/site-lisp/elpa/eglot*" >/dev/null \
        || ! compgen -G "/usr/share/emacs/site-lisp/elpa/lsp-mode*" >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox \
            elpa-eglot elpa-lsp-mode elpa-company elpa-markdown-mode elpa-yasnippet >/dev/null
    fi
fi
export PATH="$venv/bin:$PATH"
status=0

step "ruff"
ruff check . || status=1
ruff format --check . || status=1

step "mypy --strict"
mypy || status=1

step "package (sdist, wheel, twine check, install into a fresh venv)"
bash scripts/check-package.sh "$venv/bin/python" || status=1

if [[ "${PI_SNIPPETS_SKIP_VSCODE:-0}" != 1 ]]; then
    step "VS Code (code-server) end to end"
    bash tests/editors/vscode/run.sh || status=1
fi

# Mutation testing of every core module: CI keeps each one's score at 95% or more (see
# CONTRIBUTING.md, "Mutation testing").
if [[ "${PI_SNIPPETS_SKIP_MUTATION:-0}" != 1 ]]; then
    step "mutation testing (scripts/mutation.sh, every core module)"
    PI_SNIPPETS_VENV="$venv" bash scripts/mutation.sh >/tmp/pi-snippets-mutation.log 2>&1
    mutation_status=$?
    # The scores, and on failure every survivor's diff.
    if [[ $mutation_status == 0 ]]; then
        sed -n '/^module /,/^all /p' /tmp/pi-snippets-mutation.log
    else
        cat /tmp/pi-snippets-mutation.log
        status=1
    fi
fi

step "pytest"
python -m pytest "$@"
rc=$?
# pytest exits 5 when a selection collects no test; that is not a failure of the suite.
if [[ $rc != 0 && $rc != 5 ]]; then
    status=1
fi
exit $status
