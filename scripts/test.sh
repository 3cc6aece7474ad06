#!/usr/bin/env bash
# The README's test command (`npm test`): installs what is missing, then runs every test.
#   1. node dependencies (npm ci) when node_modules is missing or stale
#   2. typecheck, lint and the layering check
#   3. the prerequisites (Debian packages such as ripgrep and bubblewrap, which unit tests use;
#      code-server 4.100.3 in a cache folder for the e2e)
#   4. unit and integration tests (vitest project "unit"), then the signal tests of `keel run`
#      again with its task on a worker process (KEEL_WORKERS=1: a command must not outlive it)
#   5. build and package the .vsix
#   6. the end-to-end tests in code-server driven by Playwright (vitest project "e2e")
# Set KEEL_SKIP_E2E=1 to stop after step 4.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# What the tests run under, for reading a CI log: the scheduling context differs between a
# terminal (a session and autogroup of its own) and a CI runner (often the kernel's root autogroup).
autogroup=$(cat /proc/self/autogroup 2>/dev/null || echo 'n/a')
printf 'machine: node %s, %s cores, nice %s, session %s, autogroup %s\n' "$(node -v)" "$(nproc 2>/dev/null || echo '?')" \
  "$(nice)" "$(ps -o sid= -p $$ 2>/dev/null | tr -d ' ' || echo '?')" "${autogroup:-root (empty)}"

bash scripts/ensure-node-deps.sh

step "typecheck"
npm run --silent typecheck
step "lint + layering check"
npm run --silent lint

# Before the unit tests: Glob/Grep and the sandbox tests run the real rg and bwrap, which a fresh
# machine does not have.
step "prerequisites (Debian packages, code-server)"
bash scripts/e2e/ensure-deps.sh >/dev/null

mkdir -p test-results
step "unit and integration tests"
npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=test-results/unit.json
# The same signals, with execution in a worker: the host ends in ways the worker must follow
# (its commands killed, not left running). One file: ~1 min on a loaded 2-core machine.
step "keel run's signals on a worker (KEEL_WORKERS=1)"
KEEL_WORKERS=1 npx vitest run --project unit test/integration/cli/signals.test.ts --reporter=default --reporter=json --outputFile.json=test-results/unit-workers.json

step "build and package"
npm run --silent package

# The closing line CI reads: "N passed, N failed" over every suite that ran.
summary() {
  node -e '
    let p = 0, f = 0;
    for (const file of process.argv.slice(1)) {
      try { const r = require(require("path").resolve(file)); p += r.numPassedTests; f += r.numFailedTests; } catch {}
    }
    console.log(`total: ${p} passed, ${f} failed`);
  ' "$@"
}

if [ "${KEEL_SKIP_E2E:-0}" = "1" ]; then
  echo "KEEL_SKIP_E2E=1: skipping the end-to-end tests"
  summary test-results/unit.json test-results/unit-workers.json
  exit 0
fi

step "end-to-end tests (code-server + Playwright)"
npx vitest run --project e2e --reporter=default --reporter=json --outputFile.json=test-results/e2e.json
summary test-results/unit.json test-results/unit-workers.json test-results/e2e.json
