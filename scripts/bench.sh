#!/usr/bin/env bash
# `npm run bench [-- name…]`: installs what the benchmarks need on a fresh machine, then runs them
# (scripts/bench.mjs). Results go to bench/results/<name>.json, which git ignores; reference
# figures live in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-node-deps.sh
exec node scripts/bench.mjs "$@"
