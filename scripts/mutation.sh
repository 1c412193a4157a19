#!/usr/bin/env bash
# Mutation testing of the pure core (every module that imports nothing from pygls or
# lsprotocol) with mutmut. Each module's mutants run against the unit tests that state its
# rules (scripts/core_modules.py, TESTS: tests/unit/test_<module>.py unless listed), so a
# mutant counts as caught only when the tests of the rule it breaks notice, and a run
# stays in minutes. Prints the score per module and every surviving mutant with its diff,
# and exits non-zero when the overall score or any module's is below the minimum. A
# survivor is a behavior nobody checks: read CONTRIBUTING.md, "Mutation testing".
# Each module that passes at the project's gate (95%) is written to
# scripts/mutation-record.json with a digest of its source and tests, so scripts/test.sh
# runs only the modules changed since (scripts/mutation_record.py): commit the record.
#
#   bash scripts/mutation.sh [module ...]     (default: every core module; e.g. grammar)
#
# PI_SNIPPETS_VENV           virtualenv with the package's test tools (default .venv)
# PI_SNIPPETS_MUTATION_MIN   the lowest acceptable score in percent (default 95)
# PI_SNIPPETS_MUTATION_KEEP=1  keep the work folder (its path is printed)
# PI_SNIPPETS_MUTATION_JOBS  mutants tested at once (default 2)
#
# mutmut puts only mutants/src on the import path, so each module runs on a copy of the
# package in a src/ layout (with the code under server/, the tests would silently import
# the unmutated package).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${PI_SNIPPETS_VENV:-$repo/.venv}"
minimum="${PI_SNIPPETS_MUTATION_MIN:-95}"
python="$venv/bin/python"

log() { printf 'mutation: %s\n' "$*" >&2; }

"$python" -m pip install --quiet --disable-pip-version-check "mutmut==3.8.1" || exit 1

modules=("$@")
if [[ ${#modules[@]} == 0 ]]; then
    mapfile -t modules < <("$python" "$repo/scripts/core_modules.py")
fi
log "modules: ${modules[*]}"

root="$(mktemp -d "${TMPDIR:-/tmp}/pi-snippets-mutation.XXXXXX")"
if [[ "${PI_SNIPPETS_MUTATION_KEEP:-0}" == 1 ]]; then
    log "work folder (kept): $root"
else
    trap 'rm -rf "$root"' EXIT
fi

# One pristine copy; each module's run starts from a copy of it.
template="$root/template"
mkdir -p "$template/src" "$template/tests"
cp -r "$repo/server/pi_snippets_lsp" "$template/src/"
cp -r "$repo/tests/unit" "$template/tests/"
cp "$repo/tests/__init__.py" "$repo/tests/conftest.py" "$template/tests/"
# Some unit tests read the documents they check (README's tables, docs/, examples/).
cp -r "$repo/README.md" "$repo/docs" "$repo/examples" "$template/"
find "$template" -name __pycache__ -prune -exec rm -rf {} +
# What each module's verdict is about, digested as it was copied: a passing module is
# recorded with these digests (scripts/mutation_record.py), not with a file edited meanwhile.
"$python" "$repo/scripts/mutation_record.py" digests "${modules[@]}" >"$root/digests.json"

started=$SECONDS
ran=()
for module in "${modules[@]}"; do
    work="$root/runs/$module"
    mkdir -p "$root/runs"
    cp -r "$template" "$work"
    selection=""
    for file in $("$python" "$repo/scripts/core_modules.py" --tests "$module"); do
        [[ -f "$work/$file" ]] || { log "$module: no $file"; exit 1; }
        selection+="\"$file\", "
    done
    cat >"$work/pyproject.toml" <<EOF
[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"

[tool.mutmut]
source_paths = ["src"]
also_copy = ["README.md", "docs", "examples"]
only_mutate = ["src/pi_snippets_lsp/${module//.//}.py"]
pytest_add_cli_args_test_selection = [${selection%, }]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception", "-q", "-x", "--hypothesis-profile=mutation"]
timeout_multiplier = 3.0
EOF
    log "$module ($((SECONDS - started)) s so far)"
    # Each mutant is one pytest.main in a process forked from one that ran every test:
    # pytest's unraisable- and thread-exception plugins end each run with five full
    # garbage collections of that whole heap (most of a quick mutant's time), and they
    # report nothing a verdict needs. PI_SNIPPETS_MUTATION_RUN orders each mutant's tests
    # quickest first (tests/unit/conftest.py).
    # mutmut draws a progress line per mutant; keep only its summary. A mutant that loops
    # allocating (a parser that never advances) fails at 4 GiB instead of filling memory.
    if ! (cd "$work" && ulimit -v 4194304 && PI_SNIPPETS_MUTATION_RUN=1 "$venv/bin/mutmut" run --max-children "${PI_SNIPPETS_MUTATION_JOBS:-2}" \
        >"$work/run.log" 2>&1); then
        tail -50 "$work/run.log" >&2
        # A module that has passed before (in the record) must run; one not yet recorded
        # (new, or moved by the layout) is named and left out, like its score below the gate.
        if "$python" -c 'import json, sys; sys.exit(sys.argv[1] not in json.load(open(sys.argv[2]))["modules"])' \
            "$module" "$repo/scripts/mutation-record.json"; then
            log "mutmut failed on $module"
            exit 1
        fi
        log "mutmut could not run $module (not yet recorded: left out, not gated)"
        continue
    fi
    ran+=("$module")
done
log "all modules run in $((SECONDS - started)) s"
"$python" "$repo/scripts/mutation_report.py" --record "$root/digests.json" "$root/runs" "$minimum" "${ran[@]}"
