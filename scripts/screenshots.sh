#!/usr/bin/env bash
# `npm run screenshots`: refreshes the README's pictures (docs/screenshot-chat.png, dark theme;
# docs/screenshot-chat-light.png, light theme) on purpose. It runs the UI end-to-end test in
# code-server (test/e2e/ui.test.ts, which saves them under test-results/docs/; a plain `npm test`
# leaves docs/ alone) and copies them over docs/. Commit the new pictures if they look right.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-node-deps.sh
rm -rf test-results/docs
npx vitest run --project e2e test/e2e/ui.test.ts

shopt -s nullglob
shots=(test-results/docs/*.png)
if ((${#shots[@]} == 0)); then
  echo "screenshots: the UI test saved no picture under test-results/docs/" >&2
  exit 1
fi
for shot in "${shots[@]}"; do
  cp "$shot" "docs/$(basename "$shot")"
  echo "updated docs/$(basename "$shot")"
done
