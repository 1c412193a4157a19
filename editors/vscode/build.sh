#!/usr/bin/env bash
# Builds the VS Code extension: npm ci, type-check, bundle, package.
# Output: editors/vscode/pi-snippets-lsp.vsix. Safe to run again; exits non-zero on failure.
# FORCE_NPM_CI=1 reinstalls node_modules even when package-lock.json has not changed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

log() { printf 'build.sh: %s\n' "$*" >&2; }

command -v node >/dev/null || { log "node is not on PATH"; exit 1; }
command -v npm >/dev/null || { log "npm is not on PATH"; exit 1; }
log "node $(node --version), npm $(npm --version)"

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

log "bundle (esbuild -> dist/extension.js)"
rm -rf dist
npx --no-install esbuild src/extension.ts --bundle --external:vscode --platform=node \
    --format=cjs --target=node18 --outfile=dist/extension.js --log-level=warning

log "package (vsce -> pi-snippets-lsp.vsix)"
rm -f pi-snippets-lsp.vsix
npx --no-install vsce package --no-dependencies --allow-missing-repository -o pi-snippets-lsp.vsix

test -s pi-snippets-lsp.vsix || { log "pi-snippets-lsp.vsix was not written"; exit 1; }
log "done: $here/pi-snippets-lsp.vsix"
