#!/usr/bin/env bash
# The whole test suite, from a fresh clone: README's test command, and CI's (.ci/run).
#
#   bash scripts/test.sh                         everything below (about 30 minutes on 2 cores)
#   bash scripts/test.sh [pytest args]           only that selection, on .venv's Python
#   bash scripts/test.sh --quick [pytest args]   ruff, mypy, the unit and LSP tests (or the
#                                                selection) on one Python, an eighth of the
#                                                Hypothesis examples (a few minutes)
#
# Steps, each timed (the times are printed at the end):
#   install      .venv (PI_SNIPPETS_VENV) with the package and its test tools, and
#                .ci-cache/venv-3.X for each other CPython pyproject claims (scripts/pythons.py
#                finds them: pyenv, PATH; a missing one is a skip printed in the summary);
#                as root on Debian: Emacs with eglot, lsp-mode, company and yasnippet
#                (apt-get waits up to 10 minutes for another apt or dpkg run to end, then
#                says that apt is busy)
#   ruff, mypy --strict, package (sdist and wheel built, checked, installed into a fresh venv)
#   pytest       the whole suite on .venv's Python (unit and property tests, LSP sessions,
#                Neovim, Emacs, the VS Code bundle under every claimed CPython, frontends,
#                integrations), in parallel (pytest-xdist, one worker per core); then the unit,
#                LSP and frontend tests on each other claimed CPython, an eighth of the
#                Hypothesis examples
#   mutation     mutation testing of the core modules changed since their last passing run
#                (scripts/mutation_record.py; PI_SNIPPETS_FULL_MUTATION=1: every module)
#   VS Code      the extension in a real VS Code (code-server driven by Chromium)
# Extra arguments select tests (`bash scripts/test.sh tests/unit -k boundary`): .venv is
# installed, then pytest runs that selection on .venv's Python, and nothing else runs (no
# Debian packages, ruff, mypy, package, other CPythons, mutation testing or VS Code).
#
# Where it writes: the repository (.venv, .ci-cache/ with the other venvs, mutation.log and
# the VS Code test's screenshots and logs; scripts/mutation-record.json when a changed module
# passes: commit it), the download caches of pip (~/.cache/pip), npm (~/.npm) and the VS Code
# test (~/.cache/pi-snippets-vscode-e2e, about 860 MB), the device id VS Code keeps for its
# telemetry (~/.cache/Microsoft/DeveloperTools, written by the VS Code test's code-server),
# and, as root, Debian packages (emacs-nox and its elpa packages, tmux; chromium, libkrb5-dev,
# build-essential for the VS Code test). Temporary files (Neovim's log among them) go to one
# folder under $TMPDIR, removed at the end.
#
# PI_SNIPPETS_VENV             virtualenv to use (default .venv in the repo)
# PI_SNIPPETS_PYTHONS          the CPython versions to run (default: pyproject's, e.g. "3.11 3.12 3.13")
# PI_SNIPPETS_JOBS             pytest-xdist workers (default auto: one per core; 0: none)
# PI_SNIPPETS_SKIP_MUTATION=1  skip mutation testing
# PI_SNIPPETS_FULL_MUTATION=1  mutation testing of every core module (10 to 25 minutes)
# PI_SNIPPETS_SKIP_VSCODE=1    skip the code-server test (about 10 minutes the first time,
#                              most of it installing; 2 to 3 after)
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
venv="${PI_SNIPPETS_VENV:-$repo/.venv}"
cache="$repo/.ci-cache"
jobs="${PI_SNIPPETS_JOBS:-auto}"
quick=0
if [[ "${1:-}" == --quick ]]; then
    quick=1
    shift
fi
# A selection (any pytest argument) runs only itself.
selected=0
[[ $# -gt 0 ]] && selected=1

mkdir -p "$cache" || exit 1
# Every temporary file of the run (pytest's, pip's, the mutation and package checks') in one
# folder, removed at the end whatever happens.
work="$(mktemp -d "${TMPDIR:-/tmp}/pi-test.XXXXXX")" || exit 1
# Others may pass through it, as through /tmp (a test connects as another user to a socket
# in it); what is inside keeps its own modes.
chmod 711 "$work" || exit 1
export TMPDIR="$work"

# ------------------------------------------------------------------ steps and their times
names=()
times=()
results=()
status=0
started=$SECONDS

# run_step NAME COMMAND...: runs and times one step; a failure fails the run, not the rest.
run_step() {
    local name="$1" begin=$SECONDS rc
    shift
    printf '\n=== %s\n' "$name"
    "$@"
    rc=$?
    names+=("$name")
    times+=($((SECONDS - begin)))
    if [[ $rc == 0 ]]; then
        results+=("ok")
    else
        results+=("FAILED")
        status=1
    fi
    return $rc
}

skip_step() {
    printf '\n=== %s: skipped (%s)\n' "$1" "$2"
    names+=("$1")
    times+=(0)
    results+=("skipped: $2")
}

summary() {
    local i word reason skipped=0
    printf '\n=== times, minutes:seconds (on a machine shared with other work they vary)\n'
    for i in "${!names[@]}"; do
        word="${results[i]%%:*}"
        reason=""
        if [[ "$word" == skipped ]]; then
            reason=": ${results[i]#skipped: }"
            skipped=1
        fi
        printf '%3d:%02d  %-7s %s%s\n' $((times[i] / 60)) $((times[i] % 60)) "$word" \
            "${names[i]}" "$reason"
    done
    local total=$((SECONDS - started)) verdict="passed"
    [[ $status != 0 ]] && verdict="FAILED"
    [[ $status == 0 && $skipped == 1 ]] && verdict="passed, with the skipped steps above"
    printf '%3d:%02d  total: %s\n' $((total / 60)) $((total % 60)) "$verdict"
}

cleanup() {
    rm -rf "$work"
}
trap cleanup EXIT
trap 'printf "\ninterrupted\n"; summary; exit 130' INT TERM

# ------------------------------------------------------------------ install

# install_venv PYTHON VENV EXTRAS: the package (editable) and EXTRAS into VENV; skipped when
# the venv was set up from this very pyproject.toml and checkout already (an editable
# install runs the working tree, so only the dependencies can be out of date).
install_venv() {
    local python="$1" dir="$2" extras="$3" want
    if [[ ! -x "$dir/bin/python" ]]; then
        "$python" -m venv "$dir" || return 1
    fi
    want="$(sha256sum pyproject.toml | cut -d' ' -f1) $repo [$extras]"
    if [[ "$(cat "$dir/.pi-snippets-installed" 2>/dev/null)" == "$want" ]]; then
        echo "up to date ($dir)"
        return 0
    fi
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[$extras]" &&
        echo "$want" >"$dir/.pi-snippets-installed"
}

#: Seconds apt-get waits for another apt or dpkg run to let go of its lock.
apt_lock_wait=600

# apt_get ARGS...: apt-get that waits for the lock (DPkg::Lock::Timeout covers the dpkg
# lock and, for `update`, the package lists' lock), and, when the wait was not enough,
# says so in one line instead of apt's "Could not get lock".
apt_get() {
    local log="$work/apt-get.err" rc
    DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$apt_lock_wait" "$@" 2>"$log"
    rc=$?
    if [[ $rc != 0 ]] && grep -q "Could not get lock" "$log"; then
        echo "apt is busy: another apt or dpkg run held its lock for ${apt_lock_wait}s; run again when it is done" >&2
    else
        cat "$log" >&2
    fi
    return $rc
}

install_debian_packages() {
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
        if ! command -v emacs >/dev/null || ! compgen -G "/usr/share/emacs/site-lisp/elpa/eglot*" >/dev/null \
            || ! compgen -G "/usr/share/emacs/site-lisp/elpa/lsp-mode*" >/dev/null; then
            apt_get update -qq && apt_get install -y -qq emacs-nox \
                elpa-eglot elpa-lsp-mode elpa-company elpa-markdown-mode elpa-yasnippet >/dev/null
        fi
        # tmux: the terminal UIs of the real agents (tests/agents).
        if ! command -v tmux >/dev/null; then
            apt_get update -qq && apt_get install -y -qq tmux >/dev/null
        fi
    fi
}

run_step "install (${venv#"$repo/"})" install_venv python3 "$venv" "test,dev,editors" || {
    summary
    exit 1
}
if [[ $quick == 0 && $selected == 0 ]]; then
    run_step "install (Debian packages: Emacs, when root)" install_debian_packages
fi
py="$venv/bin/python"
main_version="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
export PATH="$venv/bin:$PATH"

# The other CPython versions pyproject claims, each with a venv of its own.
others=()
if [[ $quick == 0 && $selected == 0 ]]; then
    read -r -a wanted <<<"${PI_SNIPPETS_PYTHONS:-$("$py" scripts/pythons.py --supported | tr '\n' ' ')}"
    for version in "${wanted[@]}"; do
        [[ "$version" == "$main_version" ]] && continue
        if ! found="$("$py" scripts/pythons.py "$version" 2>"$work/pythons.err")"; then
            skip_step "CPython $version" "$(cat "$work/pythons.err")"
            continue
        fi
        if run_step "install (.ci-cache/venv-$version, $found)" \
            install_venv "$found" "$cache/venv-$version" "test"; then
            others+=("$version")
        fi
    done
fi

# pytest_on PYTHON [args...]: one pytest run, in parallel; "no test collected" (exit 5, a
# selection that matches nothing here) is not a failure.
pytest_on() {
    local python="$1" rc
    shift
    "$python" -m pytest -n "$jobs" --dist loadfile "$@"
    rc=$?
    [[ $rc == 5 ]] && return 0
    return $rc
}

# ------------------------------------------------------------------ a selection alone

if [[ $quick == 0 && $selected == 1 ]]; then
    run_step "pytest, CPython $main_version: $*" pytest_on "$py" "$@"
    summary
    exit $status
fi

# ------------------------------------------------------------------ checks

run_step "ruff" bash -c 'ruff check . && ruff format --check .'
run_step "mypy --strict" mypy

if [[ $quick == 1 ]]; then
    selection=("$@")
    [[ ${#selection[@]} == 0 ]] && selection=(tests/unit tests/lsp)
    run_step "pytest, CPython $main_version: ${selection[*]} (quick profile)" \
        pytest_on "$py" --hypothesis-profile=quick "${selection[@]}"
    summary
    exit $status
fi

run_step "package (sdist, wheel, twine check, install into a fresh venv)" \
    bash scripts/check-package.sh "$py"

# ------------------------------------------------------------------ pytest, every CPython

run_step "pytest, CPython $main_version: the whole suite" pytest_on "$py"
selection=(tests/unit tests/lsp tests/frontends)
for version in "${others[@]}"; do
    # The rules are the same on every version; an eighth of the random examples is enough
    # to show this one runs them (the exhaustive and table tests all run).
    run_step "pytest, CPython $version: ${selection[*]} (quick profile)" \
        pytest_on "$cache/venv-$version/bin/python" --hypothesis-profile=quick "${selection[@]}"
done

# ------------------------------------------------------------------ mutation testing

# Each core module's score stays at 95% or more (CONTRIBUTING.md, "Mutation testing"). A
# module is run again when it, its tests or the unit conftests changed since its recorded
# passing run; PI_SNIPPETS_FULL_MUTATION=1 runs them all.
mutation() {
    local log="$cache/mutation.log" rc
    PI_SNIPPETS_VENV="$venv" bash scripts/mutation.sh "$@" >"$log" 2>&1
    rc=$?
    if [[ $rc == 0 ]]; then
        sed -n '/^module /,/^all /p; /^recorded in /p' "$log"
    else
        cat "$log"
    fi
    echo "(log: $log)"
    return $rc
}

if [[ "${PI_SNIPPETS_SKIP_MUTATION:-0}" == 1 ]]; then
    skip_step "mutation testing" "PI_SNIPPETS_SKIP_MUTATION=1"
elif [[ "${PI_SNIPPETS_FULL_MUTATION:-0}" == 1 ]]; then
    run_step "mutation testing (every core module)" mutation
elif ! changed="$("$py" scripts/mutation_record.py changed)"; then
    run_step "mutation testing: finding the changed core modules" false
elif [[ -z "$changed" ]]; then
    skip_step "mutation testing" "no core module changed since its recorded passing run (scripts/mutation-record.json); PI_SNIPPETS_FULL_MUTATION=1 runs them all"
else
    mapfile -t changed_modules <<<"$changed"
    run_step "mutation testing (changed: ${changed_modules[*]})" mutation "${changed_modules[@]}"
fi

# ------------------------------------------------------------------ VS Code

if [[ "${PI_SNIPPETS_SKIP_VSCODE:-0}" == 1 ]]; then
    skip_step "VS Code (code-server) end to end" "PI_SNIPPETS_SKIP_VSCODE=1"
else
    run_step "VS Code (code-server) end to end" \
        env PI_SNIPPETS_E2E_OUT="$cache/vscode-e2e" bash tests/editors/vscode/run.sh
fi

summary
exit $status
