#!/usr/bin/env bash
# Install the real agents of tests/agents (Claude Code, Gemini CLI, Codex), exactly as
# package-lock.json pins them, into a cache folder outside the repository:
#
#   bash tests/agents/node/setup.sh        prints the folder whose node_modules/.bin has
#                                          claude, gemini and codex
#
# PI_SNIPPETS_AGENTS_CACHE  the folder (default $HOME/.cache/pi-snippets-agents)
#
# Needs node >= 20 and npm, no login; the only network access is npm fetching the pinned
# packages from the npm registry, and none at all once the cache was installed from this
# very package-lock.json (a copy kept there says so). Claude Code's package and Codex's are
# a launcher plus a native binary in a per-platform optional dependency; Claude Code's
# install script puts its binary in place: package.json's allowScripts lets npm 11 run it
# and no other (keytar's and node-pty's, both optional, would build or download from
# outside npm).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${PI_SNIPPETS_AGENTS_CACHE:-$HOME/.cache/pi-snippets-agents}"
mkdir -p "$cache"
stamp="$cache/node_modules/.installed-package-lock.json"
bin="$cache/node_modules/.bin"
if [[ -f "$stamp" ]] && cmp -s "$here/package-lock.json" "$stamp" &&
    [[ -x "$bin/claude" && -x "$bin/gemini" && -x "$bin/codex" ]]; then
    echo "$cache"
    exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$cache/"
cd "$cache"
npm ci --no-audit --no-fund >&2
cp package-lock.json "$stamp"
echo "$cache"
