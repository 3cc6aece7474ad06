#!/usr/bin/env bash
# The README's test command (`npm test`): installs what is missing, then runs every test.
#   1. node dependencies (npm ci) when node_modules is missing or stale
#   2. the prerequisites every test needs that a fresh Debian machine lacks (Debian packages such
#      as ripgrep, bubblewrap and tree, which unit tests run for real; code-server 4.100.3 in a
#      cache folder for the e2e), installed by scripts/e2e/ensure-deps.sh
#   3. typecheck, lint and the layering check
#   4. unit tests (vitest project "unit": pure logic, no process, no server; `npm run test:unit`),
#      then integration tests (project "integration": the CLI, workers, bash, MCP servers, the
#      fake model server; `npm run test:integration`; `keel run` runs its tasks on workers by
#      default), then the signal tests of `keel run` again with its task in process
#      (KEEL_WORKERS=0: a command must not outlive it there either)
#   5. build and package the .vsix
#   6. the end-to-end tests in code-server driven by Playwright (vitest project "e2e")
# A stage that fails does not hide the others: every stage that can still run runs (the e2e needs
# the package; everything needs the node dependencies), and the closing lines always say which
# stages failed and how many tests passed and failed. The exit status is 1 when anything failed.
# Set KEEL_SKIP_E2E=1 to stop after step 5.
set -uo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# What the tests run under, for reading a CI log: the scheduling context differs between a
# terminal (a session and autogroup of its own) and a CI runner (often the kernel's root autogroup).
autogroup=$(cat /proc/self/autogroup 2>/dev/null || echo 'n/a')
printf 'machine: node %s, %s cores, nice %s, session %s, autogroup %s\n' "$(node -v)" "$(nproc 2>/dev/null || echo '?')" \
  "$(nice)" "$(ps -o sid= -p $$ 2>/dev/null | tr -d ' ' || echo '?')" "${autogroup:-root (empty)}"

FAILED=()
SKIPPED=()
RESULTS=()
# stage NAME CMD...: runs one stage, records whether it failed; returns its status.
stage() {
  local name=$1
  shift
  step "$name"
  local t0=$SECONDS
  "$@"
  local rc=$?
  if ((rc != 0)); then
    FAILED+=("$name (exit $rc)")
    printf '\033[1m== %s failed (exit %s) after %s s\033[0m\n' "$name" "$rc" $((SECONDS - t0))
  else
    printf '== %s: ok in %s s\n' "$name" $((SECONDS - t0))
  fi
  return "$rc"
}

# The closing lines CI reads: the stages that failed or were skipped, then "total: N passed, N
# failed" over every test suite that ran (a suite whose report is missing counts as failed).
summary() {
  node -e '
    let p = 0, f = 0;
    const missing = [];
    for (const file of process.argv.slice(1)) {
      try {
        const r = require(require("path").resolve(file));
        p += r.numPassedTests;
        f += r.numFailedTests;
      } catch {
        missing.push(file);
      }
    }
    for (const m of missing) console.log(`no report: ${m} (the suite did not finish)`);
    console.log(`total: ${p} passed, ${f} failed`);
  ' ${RESULTS[@]+"${RESULTS[@]}"}
  local s
  for s in ${SKIPPED[@]+"${SKIPPED[@]}"}; do printf 'skipped: %s\n' "$s"; done
  for s in ${FAILED[@]+"${FAILED[@]}"}; do printf 'failed stage: %s\n' "$s"; done
  if ((${#FAILED[@]} > 0)); then
    printf 'npm test: %s stage(s) failed\n' "${#FAILED[@]}"
    exit 1
  fi
  printf 'npm test: every stage passed\n'
  exit 0
}

mkdir -p test-results
rm -f test-results/unit.json test-results/integration.json test-results/integration-in-process.json test-results/e2e.json

if ! stage "node dependencies" bash scripts/ensure-node-deps.sh; then
  SKIPPED+=("every other stage: the node dependencies did not install")
  summary
fi

# Before the unit tests: Glob/Grep, the sandbox and the permission corpus's real-bash checks run
# the real rg, bwrap and tree, which a fresh machine does not have.
stage "prerequisites (Debian packages, code-server)" bash -c 'bash scripts/e2e/ensure-deps.sh >/dev/null'
deps_ok=$?

stage "typecheck" npm run --silent typecheck
stage "lint + layering check" npm run --silent lint

RESULTS+=(test-results/unit.json)
stage "unit tests" npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=test-results/unit.json

RESULTS+=(test-results/integration.json)
stage "integration tests" npx vitest run --project integration --reporter=default --reporter=json --outputFile.json=test-results/integration.json

# The CLI suite and the interleavings property run on workers (the default of keel run, as of VS
# Code: docs/workers.md, "One default"). The signals again with execution in this process
# (KEEL_WORKERS=0): a host whose task runs in process must stop its commands itself. One file.
RESULTS+=(test-results/integration-in-process.json)
stage "keel run's signals in process (KEEL_WORKERS=0)" env KEEL_WORKERS=0 npx vitest run --project integration test/integration/cli/signals.test.ts --reporter=default --reporter=json --outputFile.json=test-results/integration-in-process.json

stage "build and package" npm run --silent package
package_ok=$?

if [ "${KEEL_SKIP_E2E:-0}" = "1" ]; then
  SKIPPED+=("end-to-end tests: KEEL_SKIP_E2E=1")
elif ((package_ok != 0)); then
  SKIPPED+=("end-to-end tests: build and package failed")
  FAILED+=("end-to-end tests (not run)")
elif ((deps_ok != 0)); then
  SKIPPED+=("end-to-end tests: the prerequisites (code-server, Chromium) did not install")
  FAILED+=("end-to-end tests (not run)")
else
  RESULTS+=(test-results/e2e.json)
  stage "end-to-end tests (code-server + Playwright)" npx vitest run --project e2e --reporter=default --reporter=json --outputFile.json=test-results/e2e.json
fi
summary
