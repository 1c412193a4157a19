#!/usr/bin/env bash
# Builds the sdist and the wheel, checks their metadata (twine check --strict), installs the
# wheel into a fresh virtualenv with nothing else in it, and runs the installed command:
# `check` and one `expand` on the example settings. What a user installs is what we test.
#
#   bash scripts/check-package.sh [python]     (default: .venv/bin/python; needs `build`, `twine`)
#
# PI_SNIPPETS_DIST=DIR keeps the checked sdist and wheel in DIR: the release workflow
# (.github/workflows/release.yml) publishes exactly the files this script built and checked.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="${1:-$repo/.venv/bin/python}"
out="$(mktemp -d "${TMPDIR:-/tmp}/pi-snippets-package.XXXXXX")"
trap 'rm -rf "$out"' EXIT

log() { printf 'check-package: %s\n' "$*" >&2; }

log "build sdist and wheel"
"$py" -m build --sdist --wheel --outdir "$out/dist" . >"$out/build.log" 2>&1 || {
    cat "$out/build.log" >&2
    exit 1
}
sdist=("$out"/dist/*.tar.gz)
wheel=("$out"/dist/*.whl)
[[ -f "${sdist[0]}" && -f "${wheel[0]}" ]] || { log "missing sdist or wheel"; exit 1; }

log "twine check --strict"
"$py" -m twine check --strict "${sdist[0]}" "${wheel[0]}"
# (the script still fails, and so the release, if a later check does)
if [[ -n "${PI_SNIPPETS_DIST:-}" ]]; then
    mkdir -p "$PI_SNIPPETS_DIST"
    cp "${sdist[0]}" "${wheel[0]}" "$PI_SNIPPETS_DIST/"
    log "kept in $PI_SNIPPETS_DIST"
fi

log "the wheel holds the package, its subpackages and py.typed, and no tests"
"$py" - "${wheel[0]}" <<'PY'
import sys
import zipfile

names = zipfile.ZipFile(sys.argv[1]).namelist()
for required in (
    "pi_snippets_lsp/__init__.py",
    "pi_snippets_lsp/core/__init__.py",
    "pi_snippets_lsp/settings/__init__.py",
    "pi_snippets_lsp/wire/__init__.py",
    "pi_snippets_lsp/lsp/setup.py",
    "pi_snippets_lsp/lsp/handlers/__init__.py",
    "pi_snippets_lsp/client/__init__.py",
    "pi_snippets_lsp/integrations/__init__.py",
    "pi_snippets_lsp/mcp/server.py",
    "pi_snippets_lsp/py.typed",
):
    assert required in names, f"{required} missing from the wheel"
assert not any(n.startswith("tests/") for n in names), "tests leaked into the wheel"
PY

log "install the wheel into a fresh virtualenv"
python3 -m venv "$out/venv"
"$out/venv/bin/pip" install --quiet --disable-pip-version-check "${wheel[0]}"

log "run the installed command"
"$out/venv/bin/pi-snippets-lsp" --version
"$out/venv/bin/pi-snippets-lsp" check --settings examples/settings.json >"$out/check.txt"
grep -q "^snippets: 4$" "$out/check.txt" || { cat "$out/check.txt" >&2; exit 1; }
expanded="$(printf 'Please %%use-mcp.' | "$out/venv/bin/pi-snippets-lsp" expand --settings examples/settings.json)"
[[ "$expanded" == "Please Use your MCP tools to find the information." ]] || {
    log "unexpected expansion: $expanded"
    exit 1
}
log "the core install serves MCP (no SDK needed): initialize and prompts/list"
printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"check","version":"0"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"prompts/list"}' |
    "$out/venv/bin/pi-snippets-lsp" mcp --settings examples/settings.json >"$out/mcp.txt"
grep -qF '"name":"use-mcp"' "$out/mcp.txt" || { cat "$out/mcp.txt" >&2; exit 1; }
log "ok: $(basename "${sdist[0]}"), $(basename "${wheel[0]}")"
