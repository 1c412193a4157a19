#!/usr/bin/env bash
# Builds the VS Code extension with the language server bundled in it:
#   npm ci, type-check, bundle and minify the client (esbuild -> dist/extension.js), install the
#   server and its dependencies for the target platform and CPython 3.11, 3.12 and 3.13
#   (bundle_python.py -> bundled/libs), package (vsce package --target).
# The compiled parts of the server's dependencies (pydantic-core, regex) are per platform and
# per CPython version, so the package is platform-specific.
#
#   editors/vscode/build.sh [--target TARGET]
#
# TARGET is a VS Code target platform: linux-x64, linux-arm64, alpine-x64, alpine-arm64,
# darwin-x64, darwin-arm64, win32-x64 or win32-arm64; the default is the building machine's.
# Any target builds on any machine (pip takes the target's wheels from PyPI). Not linux-armhf:
# regex publishes no wheels for it.
# Output: editors/vscode/pi-snippets-lsp-TARGET.vsix. Needs Node 20+ with npm, and a Python
# with pip ($PI_SNIPPETS_BUILD_PYTHON, default python3). Reaches only the npm registry and PyPI.
# Safe to run again; exits non-zero on failure.
# FORCE_NPM_CI=1 reinstalls node_modules even when package-lock.json has not changed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

log() { printf 'build.sh: %s\n' "$*" >&2; }

target=""
while (($# > 0)); do
    case "$1" in
        --target) target="${2:?--target needs a value}"; shift 2 ;;
        --target=*) target="${1#--target=}"; shift ;;
        -h|--help) sed -n '2,18p' "$here/build.sh" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) log "unknown argument: $1"; exit 2 ;;
    esac
done

command -v node >/dev/null || { log "node is not on PATH"; exit 1; }
command -v npm >/dev/null || { log "npm is not on PATH"; exit 1; }
python="${PI_SNIPPETS_BUILD_PYTHON:-python3}"
command -v "$python" >/dev/null || { log "$python is not on PATH (set PI_SNIPPETS_BUILD_PYTHON)"; exit 1; }
if [[ -z "$target" ]]; then
    target="$(node -p 'const a = {x64: "x64", arm64: "arm64", arm: "armhf"}[process.arch]; `${process.platform}-${a || process.arch}`')"
fi
log "node $(node --version), npm $(npm --version), $("$python" --version 2>&1), target $target"

# npm ci always wipes node_modules; skip it when the lock file is the one last installed.
stamp=node_modules/.pi-snippets-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ "${FORCE_NPM_CI:-0}" != 1 && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "node_modules matches package-lock.json: skipping npm ci"
else
    log "npm ci"
    npm ci --no-audit --no-fund
    printf '%s\n' "$want" > "$stamp"
fi

log "type-check (tsc --noEmit)"
npx --no-install tsc --noEmit -p .

log "bundle (esbuild --minify -> dist/extension.js)"
rm -rf dist
npx --no-install esbuild src/extension.ts --bundle --minify --external:vscode --platform=node \
    --format=cjs --target=node18 --outfile=dist/extension.js --log-level=warning
log "dist/extension.js: $(( $(wc -c < dist/extension.js) / 1024 )) KB"

log "bundle the server ($python bundle_python.py --target $target -> bundled/libs)"
"$python" bundle_python.py --target "$target" --out bundled

vsix="pi-snippets-lsp-$target.vsix"
log "package (vsce package --target $target -> $vsix)"
rm -f "$vsix"
npx --no-install vsce package --no-dependencies --allow-missing-repository --target "$target" -o "$vsix"

test -s "$vsix" || { log "$vsix was not written"; exit 1; }
log "done: $here/$vsix ($(( $(wc -c < "$vsix") / 1024 )) KB)"
