#!/usr/bin/env bash
# Install the Node MCP clients of tests/mcp (the MCP Inspector CLI and the TypeScript
# SDK), exactly as package-lock.json pins them, into tests/mcp/node/node_modules.
#
#   bash tests/mcp/node/setup.sh
#
# Needs node >= 18 and npm; the only network access is `npm ci` fetching the pinned
# packages from the npm registry, and none at all once node_modules was installed from
# this very package-lock.json (a copy kept in node_modules says so).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
stamp=node_modules/.installed-package-lock.json
if [[ -f "$stamp" ]] && cmp -s package-lock.json "$stamp"; then
  exit 0
fi
npm ci --no-audit --no-fund >&2
cp package-lock.json "$stamp"
