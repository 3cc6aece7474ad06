import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { isAlive } from '../../unit/tools/helpers';
import { cliBundle } from './cliHarness';

/**
 * `keel run` and `keel tasks list` given a storage path that cannot hold tasks — a file, a folder
 * under a file, a folder the user cannot
 * read — fail at once with exit 3 and a message naming the path; a run never starts unrecorded
 * (no request reaches the model). Tests run as root here, so the unreadable folder is tried as
 * the unprivileged user `nobody`.
 */
let server: FakeModelServer;
let dir: string;
let cli: string;

beforeAll(async () => {
  server = await startFakeModelServer({ fallback: { blocks: [{ type: 'text', text: 'should never be asked' }] } });
  dir = mkdtempSync(join(tmpdir(), 'keel-storage-'));
  chmodSync(dir, 0o755);
  // A copy everyone can read (the bundle's own folder is private to this user).
  const built = await cliBundle();
  cli = join(dir, 'cli.js');
  copyFileSync(built, cli);
  for (const wasm of ['web-tree-sitter.wasm', 'tree-sitter-bash.wasm']) copyFileSync(join(dirname(built), wasm), join(dir, wasm));
}, 120_000);
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  stderr: string;
  pid: number;
}

/** Runs the CLI and resolves when it exits (the test's timeout bounds it; one still alive then is killed). */
function keel(args: string[], asUser?: number): Promise<Ended> {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, ANTHROPIC_API_KEY: 'sk-test' },
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(asUser !== undefined ? { uid: asUser, gid: asUser } : {}),
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr, pid: child.pid! })));
}

function unusablePaths(): { what: string; path: string; asUser?: number }[] {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a folder');
  const locked = join(dir, 'locked');
  mkdirSync(locked, { recursive: true });
  chmodSync(locked, 0o000);
  const root = process.getuid?.() === 0;
  return [
    { what: 'a file', path: file },
    { what: 'a folder under a file', path: join(file, 'keel') },
    // Root reads anything: the unreadable folder is tried as `nobody` (65534) when running as root.
    { what: 'an unreadable folder', path: join(locked, 'keel'), ...(root ? { asUser: 65534 } : {}) },
  ];
}

describe('a --storage folder that does not exist is bad usage (exit 2), never created', () => {
  it('keel run and keel tasks list: one line naming the path; nothing is created, no request is made', async () => {
    // Under /proc mkdir says ENOENT for ever; elsewhere a typo would quietly start an empty store.
    for (const path of ['/proc/1/keel-storage-test', join(dir, 'no-such-store')]) {
      const run = await keel(['run', 'hi', '--provider', 'anthropic', '--base-url', server.url, '--storage', path, '--workspace', dir]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toBe(`keel run: --storage ${path}: no such folder; create it first (mkdir -p ${path}), or leave --storage out to use $KEEL_HOME or ~/.keel (see keel run --help)\n`);
      const listed = await keel(['tasks', 'list', '--storage', path]);
      expect(listed.code, listed.stderr).toBe(2);
      expect(existsSync(path)).toBe(false);
    }
    expect(server.requests).toEqual([]);
  });
});

describe('an unusable --storage fails fast with exit 3', () => {
  it('keel run: a clear error naming the path, no request to the model, no record-less run', async () => {
    for (const { what, path, asUser } of unusablePaths()) {
      const run = await keel(['run', 'hi', '--provider', 'anthropic', '--base-url', server.url, '--storage', path, '--workspace', dir], asUser);
      expect([what, run.code], run.stderr).toEqual([what, 3]);
      expect(run.stderr).toContain(path);
      expect(run.stderr).toMatch(/cannot keep tasks/);
      expect(run.stderr).not.toContain('without a record');
      expect(isAlive(run.pid)).toBe(false);
    }
    expect(server.requests).toEqual([]);
  });

  it('keel tasks list: a clear error naming the path', async () => {
    for (const { what, path, asUser } of unusablePaths()) {
      const listed = await keel(['tasks', 'list', '--storage', path], asUser);
      expect([what, listed.code], listed.stderr).toEqual([what, 3]);
      expect(listed.stderr).toContain(path);
    }
  });
});
