import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

/**
 * `npm ci` on the Node this project supports (README: Node 20) installs without an EBADENGINE
 * warning: no package of the lock file asks for a newer Node. Checked as a person would see it,
 * with npm's own dry run of `npm ci` on a copy of package.json and package-lock.json (nothing is
 * downloaded or installed). Issue 26 item 18: @octokit/request (under the conformance suite)
 * wanted content-type 3, which needs Node 22; package.json's `overrides` pins 2.1.0 (same API,
 * Node 18+).
 */
const ROOT = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'keel-engines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('npm ci --dry-run prints no EBADENGINE warning on this Node', async () => {
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  copyFileSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const { stdout, stderr } = await promisify(execFile)(npm, ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  expect(`${stdout}\n${stderr}`).not.toMatch(/EBADENGINE/);
}, 60_000);
