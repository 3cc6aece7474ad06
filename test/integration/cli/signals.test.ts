import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { changesOf, eventually, watchDir } from '../../unit/helpers/changes';
import { isAlive } from '../../unit/tools/helpers';
import { cliBundle, ofType, runCli, type CliRun } from './cliHarness';

/**
 * SIGTERM, SIGHUP and SIGINT end `keel run` within a few seconds whatever it is doing — a stream in
 * flight, a command running (even one that ignores SIGTERM), a retry backoff — and a task stopped
 * that way is recorded as interrupted, so it can be resumed. Real processes, real signals; no
 * time limit of its own (the test's timeout bounds every wait; a run left alive is killed). With
 * KEEL_WORKERS=1 (scripts/test.sh runs this file so too) the task runs on a worker process, and
 * its command must still die with the run.
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (prompt: string, ...extra: string[]) => ['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', ...extra];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-sig-ws-'));
});
afterEach(async () => {
  await server.close();
});

/** The exit of `run` (the test's timeout bounds the wait; the harness kills a run left alive). */
function exitOf(run: CliRun): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return run.exit;
}

/** What the store says of the run's only task: its meta file and the `task` states in its log. */
function recorded(run: CliRun): { status: string; states: string[] } {
  const id = String(run.events[0]!.taskId);
  const dir = join(run.storage, 'tasks', id);
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as { status: string };
  const states = readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => (JSON.parse(l) as { event: { type: string; state?: string } }).event)
    .filter((e) => e.type === 'task')
    .map((e) => e.state!);
  return { status: meta.status, states };
}

/** The exit status a shell reports ($?): the code, or 128 + the signal's number. */
function shellStatus(exit: { code: number | null; signal: NodeJS.Signals | null }): number {
  return exit.code ?? 128 + (exit.signal === 'SIGINT' ? 2 : exit.signal === 'SIGTERM' ? 15 : exit.signal === 'SIGHUP' ? 1 : 0);
}

async function expectInterrupted(run: CliRun, code: number): Promise<void> {
  expect(shellStatus(await exitOf(run)), run.stderr()).toBe(code);
  expect(isAlive(run.child.pid!)).toBe(false);
  expect(run.events.at(-1)).toMatchObject({ type: 'task', state: 'interrupted' });
  const { status, states } = recorded(run);
  expect(status).toBe('interrupted');
  expect(states.at(-1)).toBe('interrupted');
  expect(run.stderr()).toContain(`keel run --resume ${String(run.events[0]!.taskId)}`);
  // Its lock is released: the task is free to be resumed by the next process.
  expect(existsSync(join(run.storage, 'tasks', String(run.events[0]!.taskId), 'lock'))).toBe(false);
}

describe('keel run ends on SIGTERM whatever it is doing, and records the task as interrupted', () => {
  it('a stream in flight (the server stalls mid-answer)', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(args('answer slowly'), KEY);
    await eventually(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, run.changes);
    run.child.kill('SIGTERM');
    await expectInterrupted(run, 143);
  });

  // SIGHUP (the terminal closed) ends it the same way, with its own exit status.
  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('a command running that ignores SIGTERM: it and its children are killed too (%s)', async (signal, status) => {
    const pidfile = join(workspace, 'sleep.pid');
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: `trap '' TERM HUP; sleep 120 & echo $! > ${pidfile}; wait` } }] });
    const run = await runCli(args('wait two minutes', '--mode', 'bypassPermissions'), KEY);
    await eventually(() => existsSync(pidfile) && readFileSync(pidfile, 'utf8').trim() !== '', () => `the command never started; stderr: ${run.stderr()}`, watchDir(workspace));
    const sleeper = Number(readFileSync(pidfile, 'utf8').trim());
    expect(isAlive(sleeper)).toBe(true);
    run.child.kill(signal);
    await expectInterrupted(run, status);
    await eventually(() => !isAlive(sleeper), () => `sleep ${sleeper} outlived keel run`);
  });

  it('a retry backoff (the server said: retry after 60 s)', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 529, retryAfterSeconds: 60 }, repeat: 5 });
    const run = await runCli(args('hi'), KEY);
    await eventually(() => server.requests.length >= 1 && run.events.length > 0, () => `no request yet; stderr: ${run.stderr()}`, run.changes, changesOf(server));
    run.child.kill('SIGTERM');
    await expectInterrupted(run, 143);
  });
});

describe('keel run on SIGINT (Ctrl+C)', () => {
  it('cancels a stream in flight: the task ends aborted and the run exits 1', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(args('answer slowly'), KEY);
    await eventually(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, run.changes);
    run.child.kill('SIGINT');
    expect(shellStatus(await exitOf(run))).toBe(1);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    expect(recorded(run).status).toBe('aborted');
  });

  it('two Ctrl+C in a row: the run ends, the command dies, and the task is recorded (interrupted; aborted if the cancel won)', async () => {
    const pidfile = join(workspace, 'sleep.pid');
    // The command ignores SIGTERM, so the cancel of the first Ctrl+C takes a while to finish.
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: `trap '' TERM; sleep 120 & echo $! > ${pidfile}; wait` } }] });
    const run = await runCli(args('wait two minutes', '--mode', 'bypassPermissions'), KEY);
    await eventually(() => existsSync(pidfile) && readFileSync(pidfile, 'utf8').trim() !== '', () => `the command never started; stderr: ${run.stderr()}`, watchDir(workspace));
    run.child.kill('SIGINT');
    run.child.kill('SIGINT');
    const exit = shellStatus(await exitOf(run));
    // The second Ctrl+C stops it (130, interrupted), unless the two arrived as one signal and the
    // cancel finished (1, aborted), or the cancel finished recording 'aborted' just before the
    // second signal's exit (130, aborted). Either way the record says what happened.
    expect([[130, 'interrupted'], [1, 'aborted'], [130, 'aborted']]).toContainEqual([exit, recorded(run).status]);
    await eventually(() => !isAlive(Number(readFileSync(pidfile, 'utf8').trim())), () => 'the command outlived keel run');
  });
  it('a Ctrl+C after the cancel ended, while its command is still being killed: the command dies too', async () => {
    const pidfile = join(workspace, 'sleep.pid');
    // The command and its child ignore SIGTERM: after the cancel they live until the SIGKILL a moment later.
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: `trap '' TERM; sleep 120 & echo $! > ${pidfile}; wait` } }] });
    const run = await runCli(args('wait two minutes', '--mode', 'bypassPermissions'), KEY);
    await eventually(() => existsSync(pidfile) && readFileSync(pidfile, 'utf8').trim() !== '', () => `the command never started; stderr: ${run.stderr()}`, watchDir(workspace));
    const sleeper = Number(readFileSync(pidfile, 'utf8').trim());
    run.child.kill('SIGINT');
    await eventually(() => ofType(run.events, 'done').length > 0, () => `the cancel never ended the task; stderr: ${run.stderr()}`, run.changes);
    run.child.kill('SIGINT');
    await exitOf(run);
    expect(recorded(run).status).toBe('aborted');
    await eventually(() => !isAlive(sleeper), () => `sleep ${sleeper} outlived keel run`);
  });
});

describe('keel run in text mode (issue 26 item 16)', () => {
  const text = (prompt: string) => ['run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--no-memory'];

  it('says the task id first, on stderr (the answer alone is on stdout)', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'Hello there.' }] });
    const run = await runCli(text('hi'), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(run.stdout()).toBe('Hello there.\n');
    const id = /^keel run: task ([0-9a-f-]{36})\n/.exec(run.stderr())?.[1];
    expect(id, run.stderr()).toBeDefined();
    expect(existsSync(join(run.storage, 'tasks', id!, 'meta.json'))).toBe(true);
  });

  it('Ctrl+C: the answer so far ends its line, then how to continue the task, as after SIGTERM', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], chunkSize: 5, fault: { kind: 'stall', afterEvents: 5 } });
    const run = await runCli(text('answer slowly'), KEY);
    await eventually(() => run.stdout().length > 0, () => `no text yet; stderr: ${run.stderr()}`, run.changes);
    run.child.kill('SIGINT');
    expect(shellStatus(await exitOf(run)), run.stderr()).toBe(1);
    const id = /^keel run: task ([0-9a-f-]{36})\n/.exec(run.stderr())?.[1];
    // Everything the model sent is printed, and the line is ended: nothing is cut or glued to what follows.
    expect(run.stdout()).toMatch(/^The answer.*\n$/);
    expect('The answer begins and then nothing more comes for a long time.').toContain(run.stdout().trimEnd());
    expect(run.stderr()).toContain(`keel run: Ctrl+C: task ${id} cancelled; continue it with: keel run --resume ${id} "<follow-up>"\n`);
  });
});

describe('keel run whose reader goes away (keel run … | head)', () => {
  it('the run ends at its next write, and the command it was running dies with it', async () => {
    const file = (name: string) => join(workspace, name);
    const read = (name: string) => (existsSync(file(name)) ? Number(readFileSync(file(name), 'utf8').trim()) : 0);
    // The command ignores SIGTERM and SIGHUP, leaves a child, and prints (each line is written to stdout as tool_output).
    const command = `trap '' TERM HUP; echo $$ > ${file('shell.pid')}; sleep 120 & echo $! > ${file('sleep.pid')}; while true; do echo tick; sleep 0.2; done`;
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_tick', name: 'Bash', input: { command } }] });
    const run = await runCli(args('print for two minutes', '--mode', 'bypassPermissions'), KEY);
    await eventually(() => read('sleep.pid') > 0 && ofType(run.events, 'tool_output').length > 0, () => `the command never printed; stderr: ${run.stderr()}`, run.changes, watchDir(workspace));
    const shell = read('shell.pid');
    const sleeper = read('sleep.pid');
    expect(isAlive(shell) && isAlive(sleeper)).toBe(true);
    run.child.stdout!.destroy();
    await exitOf(run);
    await eventually(() => !isAlive(shell), () => `the command (pid ${shell}) outlived keel run`);
    await eventually(() => !isAlive(sleeper), () => `its child (pid ${sleeper}) outlived keel run`);
  });
});
