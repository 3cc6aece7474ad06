/**
 * The packaged Keel extension for e2e tests: `keel.vsix` at the repo root, (re)built with
 * `npm run package` when it is missing or older than the sources it is built from.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './codeServer';

export const KEEL_VSIX = join(REPO_ROOT, 'keel.vsix');

/** Inputs of the package: when one is newer than keel.vsix, the .vsix is stale. */
const SOURCES = ['src', 'webview', 'media', 'package.json', 'scripts/build.mjs', '.vscodeignore'];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/**
 * Returns the path of an up-to-date keel.vsix, running `npm run package` first if it is missing
 * or stale (set KEEL_E2E_NO_REBUILD=1 to use whatever is there). Throws if packaging fails.
 */
export function ensureKeelVsix(): string {
  const fresh =
    existsSync(KEEL_VSIX) &&
    (process.env.KEEL_E2E_NO_REBUILD === '1' ||
      Math.max(...SOURCES.map((s) => newestMtime(join(REPO_ROOT, s)))) <= statSync(KEEL_VSIX).mtimeMs);
  if (!fresh) {
    execFileSync('npm', ['run', 'package'], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (!existsSync(KEEL_VSIX)) throw new Error('npm run package did not produce keel.vsix');
  }
  return KEEL_VSIX;
}
