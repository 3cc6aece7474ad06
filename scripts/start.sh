#!/usr/bin/env bash
# `npm start`: runs Keel in a real VS Code (code-server) in your browser.
#
#   1. installs node dependencies if node_modules is missing (`npm ci`);
#   2. makes sure the Debian packages and code-server are there (scripts/e2e/ensure-deps.sh);
#   3. packages the extension (`npm run package` -> keel.vsix; KEEL_SKIP_PACKAGE=1 reuses it);
#   4. installs keel.vsix into a persistent dev profile: ${KEEL_CACHE_DIR:-~/.cache/keel}/dev-profile/
#      (settings, chat history and API keys you set there survive restarts);
#   5. starts code-server on 127.0.0.1:${KEEL_PORT:-8080} in the foreground and prints the URL.
#      Ctrl+C stops it together with all its child processes.
#
# Which folder opens: $KEEL_WORKSPACE if set; otherwise a copy of examples/sample-workspace at
# ${KEEL_CACHE_DIR:-~/.cache/keel}/sample-workspace. A copy, not the folder in the repo, so that
# whatever the agent edits there never dirties the Keel repository. It is copied once and then
# kept (your changes survive restarts); delete it to start over from the pristine example.
#
# Which model: with ANTHROPIC_API_KEY in the environment Keel uses Anthropic (the key is passed
# to VS Code through the environment, never written to settings); without it, the built-in demo
# model, so you can try Keel without a key. "Keel: Set API Key" and the settings change that later.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO_ROOT=$(pwd)
CACHE_DIR="${KEEL_CACHE_DIR:-$HOME/.cache/keel}"
PORT="${KEEL_PORT:-8080}"
PROFILE="$CACHE_DIR/dev-profile"
USER_DATA_DIR="$PROFILE/user-data"
EXTENSIONS_DIR="$PROFILE/extensions"

say() { printf '[keel] %s\n' "$*" >&2; }
# Exit status 0 when $1 answers HTTP at all (any status); 2 when it answers 2xx. Node, not curl:
# node is there whenever Keel can run.
http_probe() {
  node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(2000) }).then((r) => process.exit(r.ok ? 2 : 0), () => process.exit(1))' "$1"
}

status=0
http_probe "http://127.0.0.1:$PORT/" || status=$?
if [[ $status != 1 ]]; then
  say "something is already listening on 127.0.0.1:$PORT; stop it or choose another port: KEEL_PORT=8081 npm start"
  exit 1
fi

if [[ ! -d node_modules ]]; then
  say "installing node dependencies (npm ci)"
  npm ci
fi

CODE_SERVER=$(bash scripts/e2e/ensure-deps.sh | tail -n 1)

if [[ "${KEEL_SKIP_PACKAGE:-}" == 1 && -f keel.vsix ]]; then
  say "KEEL_SKIP_PACKAGE=1: using the existing keel.vsix"
else
  say "packaging the extension (npm run package)"
  npm run package
fi

mkdir -p "$USER_DATA_DIR/User" "$EXTENSIONS_DIR"
say "installing keel.vsix into $PROFILE"
"$CODE_SERVER" --user-data-dir "$USER_DATA_DIR" --extensions-dir "$EXTENSIONS_DIR" \
  --install-extension "$REPO_ROOT/keel.vsix" --force </dev/null >&2

if [[ -n "${KEEL_WORKSPACE:-}" ]]; then
  WORKSPACE=$(cd "$KEEL_WORKSPACE" && pwd)
else
  WORKSPACE="$CACHE_DIR/sample-workspace"
  if [[ ! -d "$WORKSPACE" ]]; then
    cp -R "$REPO_ROOT/examples/sample-workspace" "$WORKSPACE"
    say "copied examples/sample-workspace to $WORKSPACE"
  fi
fi

if [[ -n "${ANTHROPIC_API_KEY:-}" ]]; then PROVIDER=anthropic; else PROVIDER=demo; fi

# Update only the settings this script manages; anything else you changed in the profile stays.
KEEL_PROVIDER="$PROVIDER" node - "$USER_DATA_DIR/User/settings.json" <<'NODE'
const fs = require('node:fs');
const file = process.argv[2];
let settings = {};
if (fs.existsSync(file)) {
  try {
    settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    console.error(`[keel] ${file} is not plain JSON (comments?); leaving it as it is`);
    process.exit(0);
  }
}
Object.assign(settings, {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'keel.provider': process.env.KEEL_PROVIDER,
});
// Defaults only: keep whatever you chose in the profile. No marketplace is reachable offline.
const defaults = {
  'workbench.colorTheme': 'Default Dark Modern',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'telemetry.telemetryLevel': 'off',
};
for (const [key, value] of Object.entries(defaults)) if (!(key in settings)) settings[key] = value;
fs.writeFileSync(file, JSON.stringify(settings, null, 2) + '\n');
NODE

# code-server runs in a session (and process group) of its own, so that stopping Keel stops the
# fileWatcher and extension-host processes it starts too, however this script was started.
setsid "$CODE_SERVER" \
  --auth none \
  --bind-addr "127.0.0.1:$PORT" \
  --user-data-dir "$USER_DATA_DIR" \
  --extensions-dir "$EXTENSIONS_DIR" \
  --disable-telemetry \
  --disable-update-check \
  "$WORKSPACE" </dev/null &
CS_PID=$!

stop() {
  trap - INT TERM EXIT
  if kill -0 -- "-$CS_PID" 2>/dev/null; then
    say "stopping code-server"
    kill -TERM -- "-$CS_PID" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 -- "-$CS_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$CS_PID" 2>/dev/null || true
  fi
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

ready=0
for _ in $(seq 300); do
  status=0
  http_probe "http://127.0.0.1:$PORT/healthz" || status=$?
  if [[ $status == 2 ]]; then
    ready=1
    break
  fi
  if ! kill -0 "$CS_PID" 2>/dev/null; then
    say "code-server exited before it was ready"
    exit 1
  fi
  sleep 0.2
done
if [[ $ready != 1 ]]; then
  say "code-server did not answer on 127.0.0.1:$PORT"
  exit 1
fi

URL="http://127.0.0.1:$PORT/?folder=$WORKSPACE"
echo
echo "  Keel is running: open $URL"
echo "  Model provider: $PROVIDER$([[ $PROVIDER == demo ]] && echo ' (a scripted tour of Keel; set ANTHROPIC_API_KEY for Anthropic)')"
echo "  Press Ctrl+C to stop."
echo

set +e
wait "$CS_PID"
STATUS=$?
set -e
exit "$STATUS"
