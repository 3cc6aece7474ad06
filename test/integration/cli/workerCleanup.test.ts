import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { eventually, watchDir } from '../../unit/helpers/changes';
import { isAlive, killIfAlive } from '../../unit/tools/helpers';
import { cliBundle, ofType, runCli, type CliRun } from './cliHarness';

/**
 * A command a worker runs never outlives the worker, however the worker's world ends — its host
 * killed with SIGKILL (the worker sees its socket close), the worker itself told to stop by a
 * signal, or the worker killed with SIGKILL (it cannot clean up: its host does). The command
 * ignores SIGTERM and leaves a child, so only a kill of its whole process group ends it. Real
 * processes and signals; every pid is checked gone. (signals.test.ts covers SIGTERM and Ctrl+C
 * of the host, in process and — KEEL_WORKERS=1 — on workers.)
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const started: number[] = [];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-wclean-ws-'));
});
afterEach(async () => {
  // A failed test must not leave its command running on the machine.
  for (const pid of started.splice(0)) killIfAlive(pid);
  await server.close();
});

interface Running {
  run: CliRun;
  /** The worker process running the command (the shell's parent). */
  worker: number;
  shell: number;
  sleeper: number;
}

/** `keel run --workers 1` whose Bash call runs a shell that ignores SIGTERM and waits on `sleep 120`. */
async function commandOnWorker(): Promise<Running> {
  const file = (name: string) => join(workspace, name);
  server.enqueue({
    blocks: [{ type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: `trap '' TERM; echo $PPID > ${file('worker.pid')}; echo $$ > ${file('shell.pid')}; sleep 120 & echo $! > ${file('sleep.pid')}; wait` } }],
  });
  const run = await runCli(['run', 'wait two minutes', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions', '--workers', '1'], KEY);
  started.push(run.child.pid!);
  const read = (name: string) => (existsSync(file(name)) ? Number(readFileSync(file(name), 'utf8').trim()) : 0);
  await eventually(() => read('sleep.pid') > 0, () => `the command never started; stderr: ${run.stderr()}`, watchDir(workspace));
  const running = { run, worker: read('worker.pid'), shell: read('shell.pid'), sleeper: read('sleep.pid') };
  started.push(running.sleeper, running.shell, running.worker);
  // The shell's parent is the worker process, not keel run.
  expect(running.worker).not.toBe(run.child.pid);
  expect(readFileSync(`/proc/${running.worker}/cmdline`, 'utf8')).toContain('worker');
  for (const pid of [running.worker, running.shell, running.sleeper]) expect(isAlive(pid)).toBe(true);
  return running;
}

async function expectGone(pids: Record<string, number>): Promise<void> {
  for (const [what, pid] of Object.entries(pids)) {
    await eventually(() => !isAlive(pid), () => `${what} (pid ${pid}) is still alive`);
  }
}

describe.skipIf(process.platform !== 'linux')('a command run by a worker does not outlive it', () => {
  it('keel run killed with SIGKILL: the worker sees its connection drop, kills the command and exits', async () => {
    const { run, worker, shell, sleeper } = await commandOnWorker();
    run.child.kill('SIGKILL');
    await run.exit;
    await expectGone({ 'the worker': worker, 'the command': shell, "the command's child": sleeper });
  });

  it('the worker told to stop by SIGTERM: it kills the command and exits, and the task is interrupted', async () => {
    const { run, worker, shell, sleeper } = await commandOnWorker();
    process.kill(worker, 'SIGTERM');
    await expectGone({ 'the worker': worker, 'the command': shell, "the command's child": sleeper });
    expect((await run.exit).code).toBe(1);
    expect(ofType(run.events, 'error').at(-1)).toMatchObject({ code: 'worker_lost', message: expect.stringContaining('code 143') as unknown });
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'interrupted' });
  });

  it('the worker killed with SIGKILL: its host kills the command it left behind', async () => {
    const { run, worker, shell, sleeper } = await commandOnWorker();
    process.kill(worker, 'SIGKILL');
    await expectGone({ 'the worker': worker, 'the command': shell, "the command's child": sleeper });
    expect((await run.exit).code).toBe(1);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'interrupted' });
  });
});
