#!/usr/bin/env bash
# Run the Node agent-frontend example against examples/settings.json.
#
#   bash scripts/node-client/run.sh
#   PYTHON=/path/to/python bash scripts/node-client/run.sh
#
# With PI_SNIPPETS_CONNECT set ("unix", "unix:PATH" or "tcp://HOST:PORT") the example
# connects to a running daemon instead of starting a server (see expand.mjs).
#
# The server runs as `$PYTHON -m pi_snippets_lsp`. PYTHON must be able to import
# pi_snippets_lsp; unset, it is the active virtualenv's python ($VIRTUAL_ENV), else the
# repo's .venv/bin/python (the venv README and CONTRIBUTING make), else python3.
# Needs node >= 18 and npm; the only network access is `npm ci` fetching vscode-jsonrpc
# from the npm registry (nothing at all once node_modules is in place and matches
# package-lock.json).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [[ -n "${PYTHON:-}" ]]; then
    python="$PYTHON"
elif [[ -n "${VIRTUAL_ENV:-}" && -x "$VIRTUAL_ENV/bin/python" ]]; then
    python="$VIRTUAL_ENV/bin/python"
elif [[ -x "$repo/.venv/bin/python" ]]; then
    python="$repo/.venv/bin/python"
else
    python=python3
fi

cd "$here"
npm ci --no-audit --no-fund >&2
PI_SNIPPETS_SERVER="$python -m pi_snippets_lsp" \
  node expand.mjs --settings "$repo/examples/settings.json"
