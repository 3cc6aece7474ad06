import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBundle } from './cliHarness';

/**
 * Keel's storage is this user's alone (issue 21 item 11): ~/.keel, $KEEL_HOME or --storage, the
 * task folders, events.jsonl, meta.json, snapshots, the index and the lock files are created 0700
 * (folders) and 0600 (files) whatever the umask, and a store an older Keel left readable by
 * everyone is tightened when Keel starts. Real `keel` processes, the demo model (no network).
 */
let cli: string;
let dir: string;

beforeAll(async () => {
  cli = await cliBundle();
  dir = mkdtempSync(join(tmpdir(), 'keel-private-'));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `keel ARGS` under `umask`, with HOME and the given environment; resolves with its exit code. */
function keel(args: string[], env: Record<string, string>, umask = '000'): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `umask ${umask} && exec "$@"`, 'bash', process.execPath, cli, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('close', (code) => resolve({ code, stderr: err }));
  });
}

/** Every folder and regular file under `root` (itself included) whose mode lets anyone else in: `path mode`. */
function notPrivate(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink() || st.isSocket()) return;
    const mode = st.mode & 0o777;
    if (mode & 0o077) out.push(`${p.slice(root.length) || '/'} ${mode.toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(root);
  return out;
}

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    for (const e of readdirSync(p, { withFileTypes: true })) {
      out.push(join(p, e.name).slice(root.length));
      if (e.isDirectory()) walk(join(p, e.name));
    }
  };
  walk(root);
  return out;
}

describe('Keel keeps its storage private', () => {
  it('~/.keel made by a run is 0700, and everything in it 0700 / 0600, even under umask 000', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const ws = mkdtempSync(join(dir, 'ws-'));
    const run = await keel(['run', 'hello', '--provider', 'demo', '--workspace', ws], { HOME: home });
    expect(run.code, run.stderr).toBe(0);
    const keelHome = join(home, '.keel');
    // The task, its log, meta, lock files and the index were all made.
    const made = files(keelHome);
    expect(made.some((f) => f.endsWith('events.jsonl'))).toBe(true);
    expect(made.some((f) => f.endsWith('meta.json'))).toBe(true);
    const list = await keel(['tasks', 'list'], { HOME: home });
    expect(list.code).toBe(0);
    expect(files(keelHome)).toContain('/index.json');
    expect(notPrivate(keelHome)).toEqual([]);
  }, 120_000);

  it('$KEEL_HOME folders Keel creates are private too, and so is a --storage folder the person made', async () => {
    const ws = mkdtempSync(join(dir, 'ws-'));
    const home = join(dir, 'keel-home-env', 'nested');
    // A --storage folder must exist (Keel never creates a path the person named: a typo is bad
    // usage); made as a person's mkdir makes it, readable by everyone.
    const storage = join(dir, 'storage-flag');
    mkdirSync(storage, { mode: 0o755 });
    chmodSync(storage, 0o755);
    expect((await keel(['run', 'hi', '--provider', 'demo', '--workspace', ws], { HOME: dir, KEEL_HOME: home })).code).toBe(0);
    expect((await keel(['run', 'hi', '--provider', 'demo', '--workspace', ws, '--storage', storage], { HOME: dir })).code).toBe(0);
    expect(notPrivate(home)).toEqual([]);
    expect(notPrivate(storage)).toEqual([]);
  }, 120_000);

  it('a store an older Keel left readable by everyone is tightened when Keel starts', async () => {
    const ws = mkdtempSync(join(dir, 'ws-'));
    const storage = join(dir, 'old-store');
    mkdirSync(storage);
    expect((await keel(['run', 'hi', '--provider', 'demo', '--workspace', ws, '--storage', storage], { HOME: dir }, '022')).code).toBe(0);
    expect((await keel(['tasks', 'list', '--storage', storage], { HOME: dir }, '022')).code).toBe(0);
    // What an older Keel left: folders 0755, files 0644 (and a quarantined task, a snapshot folder).
    mkdirSync(join(storage, 'quarantine', 'old-task'), { recursive: true });
    const loosen = (p: string) => {
      const st = lstatSync(p);
      chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
      if (st.isDirectory()) for (const name of readdirSync(p)) loosen(join(p, name));
    };
    loosen(storage);
    expect(notPrivate(storage).length).toBeGreaterThan(4);
    // Any start: here a listing.
    expect((await keel(['tasks', 'list', '--storage', storage], { HOME: dir }, '022')).code).toBe(0);
    expect(notPrivate(storage)).toEqual([]);
  }, 120_000);
});
