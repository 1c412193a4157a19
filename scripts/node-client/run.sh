#!/usr/bin/env bash
# Run the Node agent-frontend example against examples/settings.json.
#
#   PYTHON=/path/to/python bash scripts/node-client/run.sh
#
# With PI_SNIPPETS_CONNECT set ("unix", "unix:PATH" or "tcp://HOST:PORT") the example
# connects to a running daemon instead of starting a server (see expand.mjs).
#
# PYTHON (default python3) must be able to import pi_snippets_lsp. Needs node >= 18 and
# npm; the only network access is `npm ci` fetching vscode-jsonrpc from the npm registry
# (nothing at all once node_modules is in place and matches package-lock.json).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"

cd "$here"
npm ci --no-audit --no-fund >&2
PI_SNIPPETS_SERVER="$python -m pi_snippets_lsp" \
  node expand.mjs --settings "$repo/examples/settings.json"
