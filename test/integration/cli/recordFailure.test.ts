import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * A run whose record fails ends failed, visibly (issue 26 item 1): the faults are real — a file-
 * size limit (`ulimit -f`, RLIMIT_FSIZE, on the `keel run` process), a full disk (a tmpfs of a
 * few pages, mounted in a user and mount namespace of its own), the task's folder removed while
 * it runs. Each time: `keel run` exits 3, stderr and stream-json say the record failed, the
 * stored task (where it still exists) is listed and shown as failed with the reason, and no
 * temporary `meta.json.*.tmp` is left behind.
 */
let server: FakeModelServer;
let cli: string;
let dir: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
/** KEEL_WORKERS=N (scripts/test.sh) runs the task's turns on worker processes, as runCli does. */
const WORKERS = process.env.KEEL_WORKERS ? { KEEL_WORKERS: process.env.KEEL_WORKERS } : {};
/** An answer far longer than the room the faults leave (about 120 KB). */
const LONG = 'The record of this answer will not fit. '.repeat(3000);

beforeAll(async () => {
  cli = await cliBundle();
  server = await startFakeModelServer();
  dir = mkdtempSync(join(tmpdir(), 'keel-recfail-'));
}, 120_000);
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const runArgs = (workspace: string, storage: string) => [
  'run',
  'write a long answer',
  '--provider',
  'anthropic',
  '--base-url',
  server.url,
  '--model',
  'claude-test',
  '--workspace',
  workspace,
  '--output-format',
  'stream-json',
  '--storage',
  storage,
];

function workspace(): string {
  const ws = mkdtempSync(join(dir, 'ws-'));
  return ws;
}

interface Ran {
  code: number | null;
  events: Record<string, unknown>[];
  stderr: string;
}

/**
 * Runs `script` (a shell, which ends by exec'ing `node cli.js …`, given as "$1" "$2") and collects
 * what `keel run` printed; `wrapper` is a command the shell runs under (e.g. `unshare …`).
 */
function runShell(script: string, args: string[], storage: string, wrapper: string[] = []): Promise<Ran> {
  const [program = 'bash', ...before] = [...wrapper, 'bash'];
  return new Promise((resolve) => {
    const child = spawn(program, [...before, '-c', script, 'bash', process.execPath, cli, ...args], {
      env: { PATH: process.env.PATH, HOME: storage, KEEL_HOME: storage, ...KEY, ...WORKERS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('close', (code, signal) => resolve({ code, events: parseEvents(out), stderr: `${err}${signal ? `\n(ended by ${signal})` : ''}` }));
  });
}

function parseEvents(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** What a person sees of the run: exit 3, the record's failure on stderr and in stream-json, the run ended failed. */
function expectFailedVisibly(ran: Ran, reason: RegExp): void {
  expect(ran.code, ran.stderr).toBe(3);
  expect(ran.stderr).toMatch(/keel run: task \S+ failed: the record of this task could not be saved/);
  expect(ran.stderr).toMatch(reason);
  const error = ofType(ran.events, 'error').find((e) => e.code === 'record_failed');
  expect(error, JSON.stringify(ran.events.slice(-5))).toBeDefined();
  expect(String(error!.message)).toMatch(reason);
  expect(ran.events.at(-1)).toMatchObject({ type: 'done', status: 'failed' });
  expect(ofType(ran.events, 'done')).toHaveLength(1);
}

/** Files a writer left half-made: temp files of meta.json, the index or a snapshot. */
function leftovers(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    for (const e of readdirSync(p, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(p, e.name));
      else if (e.name.endsWith('.tmp')) out.push(join(p, e.name));
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}

describe('a run whose record fails ends failed, visibly', () => {
  it('a file-size limit reached mid-run (ulimit -f): exit 3, the reason everywhere, the task listed and shown failed', async () => {
    const storage = join(dir, 'fsize');
    mkdirSync(storage);
    server.enqueue({ blocks: [{ type: 'text', text: LONG }], chunkSize: 2000 });
    // 32 blocks of 1 KB: the task's log reaches it in the middle of the answer; meta.json stays far below.
    const ran = await runShell('ulimit -f 32 && exec "$@"', runArgs(workspace(), storage), storage);
    expectFailedVisibly(ran, /size limit/);
    const id = String(ran.events[0]!.taskId);
    expect(leftovers(storage)).toEqual([]);

    // The stored task says so, listed and shown (a later process, without the limit).
    const list = await runCli(['tasks', 'list', '--json'], {}, storage);
    await list.exit;
    const rows = JSON.parse(list.stdout()) as { id: string; status: string }[];
    expect(rows).toEqual([expect.objectContaining({ id, status: 'failed' })]);
    const show = await runCli(['tasks', 'show', id], {}, storage);
    await show.exit;
    expect(show.stdout()).toMatch(/status: +failed/);
    expect(show.stdout()).toMatch(/record: +incomplete: the record of this task could not be saved .*size limit/);
    const meta = JSON.parse(readFileSync(join(storage, 'tasks', id, 'meta.json'), 'utf8')) as { status: string; recordError?: string };
    expect(meta).toMatchObject({ status: 'failed', recordError: expect.stringMatching(/size limit/) });
  }, 120_000);

  it('a full disk mid-run (a tmpfs of a few pages): exit 3, the reason everywhere, no temp file left', async (ctx) => {
    const outside = mkdtempSync(join(dir, 'tmpfs-'));
    const storage = join(outside, 'store');
    mkdirSync(storage);
    // A user and mount namespace of its own, where this user may mount a tmpfs; skipped where the
    // kernel forbids unprivileged namespaces (said so).
    const probe = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'bash', '-c', `mount -t tmpfs -o size=48k tmpfs '${storage}'`], { encoding: 'utf8' });
    if (probe.status !== 0) {
      process.stdout.write(`skipped: cannot mount a small tmpfs here (unshare --user --mount: ${probe.stderr.trim() || probe.status})\n`);
      ctx.skip();
    }
    server.enqueue({ blocks: [{ type: 'text', text: LONG }], chunkSize: 2000 });
    // The run, then what a later process finds, all inside the namespace (the tmpfs lives there).
    const script = [
      'set -u',
      `mount -t tmpfs -o size=48k tmpfs '${storage}' || exit 90`,
      '"$@"',
      `echo $? > '${outside}/exit'`,
      `"$1" "$2" tasks list --json --storage '${storage}' > '${outside}/list.json'`,
      `for d in '${storage}'/tasks/*/; do "$1" "$2" tasks show "$(basename "$d")" --storage '${storage}' > '${outside}/show.txt'; done`,
      `find '${storage}' -name '*.tmp' > '${outside}/leftovers.txt'`,
      `cat '${storage}'/tasks/*/meta.json > '${outside}/meta.json'`,
      `exit "$(cat '${outside}/exit')"`,
    ].join('\n');
    const ran = await runShell(script, runArgs(workspace(), storage), storage, ['unshare', '--user', '--map-root-user', '--mount']);
    expectFailedVisibly(ran, /the disk is full/);
    const id = String(ran.events[0]!.taskId);
    expect(readFileSync(join(outside, 'leftovers.txt'), 'utf8')).toBe('');
    expect(JSON.parse(readFileSync(join(outside, 'list.json'), 'utf8'))).toEqual([expect.objectContaining({ id, status: 'failed' })]);
    expect(readFileSync(join(outside, 'show.txt'), 'utf8')).toMatch(/record: +incomplete: .*the disk is full/);
    expect(JSON.parse(readFileSync(join(outside, 'meta.json'), 'utf8'))).toMatchObject({ status: 'failed', recordError: expect.stringMatching(/disk is full/) });
  }, 120_000);

  it("the task's folder deleted mid-run: exit 3, said on stderr and in stream-json", async () => {
    const storage = join(dir, 'deleted');
    let release!: () => void;
    const until = new Promise<void>((r) => (release = r));
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins, then waits while its folder goes away.' }], fault: { kind: 'stall', afterEvents: 4, until } });
    const run = await runCli(runArgs(workspace(), storage).slice(0, -2), KEY, storage);
    await waitUntil(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, 60_000);
    const id = String(run.events[0]!.taskId);
    rmSync(join(storage, 'tasks', id), { recursive: true, force: true });
    release();
    const exit = await run.exit;
    expectFailedVisibly({ code: exit.code, events: run.events, stderr: run.stderr() }, /removed or moved/);
    expect(existsSync(join(storage, 'tasks', id))).toBe(false);
    expect(leftovers(storage)).toEqual([]);
  }, 120_000);

  it('a record that holds: exit 0 and nothing said about it (the check costs a run nothing)', async () => {
    const storage = join(dir, 'fine');
    server.enqueue({ blocks: [{ type: 'text', text: 'All saved.' }] });
    const run = await runCli(runArgs(workspace(), storage).slice(0, -2), KEY, storage);
    const exit = await run.exit;
    expect(exit.code, run.stderr()).toBe(0);
    expect(run.stderr()).not.toMatch(/record/);
    expect(leftovers(storage)).toEqual([]);
  }, 120_000);
});
