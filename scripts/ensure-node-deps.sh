#!/usr/bin/env bash
# Installs the node dependencies (npm ci) when node_modules is missing or older than
# package-lock.json. Shared by `npm test`, `npm run bench` and `npm run screenshots`, which must
# work on a fresh clone. Quiet when there is nothing to do.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  printf '\n\033[1m== %s\033[0m\n' "installing node dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi
