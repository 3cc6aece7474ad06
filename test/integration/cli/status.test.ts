import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRow } from '../../../src/shared/domain/agents';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { eventually, watchDir } from '../../unit/helpers/changes';
import { cliBundle, runCli, type CliRun } from './cliHarness';

/**
 * `keel status --json` while another `keel` process works, as a person would check on it: the
 * working process is a real `keel run` / `keel loop` child against the fake model server, held in
 * a Bash command that waits for a file the test creates once it has looked.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const provider = () => ['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions'];
const HOLD = 'touch started; while [ ! -f release ]; do sleep 0.05; done; echo released';
const bash = (command: string) => ({ blocks: [{ type: 'tool_use' as const, name: 'Bash', input: { command } }] });
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-status-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-status-home-'));
});
afterEach(async () => {
  writeFileSync(join(workspace, 'release'), '');
  await server.close();
});

async function statusWhileHeld(worker: CliRun): Promise<{ agents: AgentRow[]; summary: string }> {
  await eventually(() => existsSync(join(workspace, 'started')) || worker.child.exitCode !== null, () => `the command never started: ${worker.stderr()}`, worker.changes, watchDir(workspace));
  expect(worker.child.exitCode, worker.stderr()).toBeNull();
  const status = await runCli(['status', '--json'], {}, storage);
  expect((await status.exit).code, status.stderr()).toBe(0);
  writeFileSync(join(workspace, 'release'), '');
  expect((await worker.exit).code, worker.stderr()).toBe(0);
  return JSON.parse(status.stdout()) as { agents: AgentRow[]; summary: string };
}

describe('keel status --json', () => {
  it('lists a running task and its sub-agent with status, elapsed time, tokens and cost', async () => {
    server.enqueue(
      { blocks: [{ type: 'tool_use', name: 'Task', input: { description: 'wait for the release file', prompt: 'wait' } }] },
      bash(HOLD),
      say('sub-agent done'),
      say('all done'),
    );
    const worker = await runCli(['run', 'check the release', ...provider()], KEY, storage);
    const { agents, summary } = await statusWhileHeld(worker);
    const task = agents.find((a) => a.kind === 'task');
    const sub = agents.find((a) => a.kind === 'subagent');
    expect(task).toMatchObject({ title: 'check the release', status: 'working', pid: worker.child.pid });
    expect(sub).toMatchObject({ parentId: task!.id, status: 'working' });
    expect(task!.tokens).toBeGreaterThan(0);
    expect(task!.costUsd).toBeGreaterThanOrEqual(0);
    expect(task!.startedAt).toBeLessThanOrEqual(Date.now());
    expect(summary).toBe('2 working');
  });

  it('lists a loop with its running iteration', async () => {
    // The iteration reaches the goal (a loop that only ran out of iterations would exit 5, not 0).
    const done = { blocks: [{ type: 'tool_use' as const, name: 'Write', input: { file_path: '.keel/loop/rel/progress.md', content: '# Progress\nDONE\n' } }] };
    server.enqueue(bash(HOLD), done, say('waited'));
    const worker = await runCli(['loop', 'wait for the release', '--name', 'rel', '--max-iterations', '1', ...provider()], KEY, storage);
    const { agents } = await statusWhileHeld(worker);
    const loopRow = agents.find((a) => a.kind === 'loop');
    expect(loopRow).toMatchObject({ id: 'loop:rel', status: 'working' });
    expect(agents.find((a) => a.parentId === 'loop:rel')).toMatchObject({ kind: 'task', status: 'working', title: 'rel: iteration 1' });
  });

  it('says so when no Keel process is running', async () => {
    const status = await runCli(['status'], {}, storage);
    expect((await status.exit).code).toBe(0);
    expect(status.stdout()).toContain('No agents');
  });
});

describe('keel status --follow', () => {
  it('says it waits while no Keel process runs, prints a process that starts later, and ends on the first SIGTERM (issue 26 items 9, 17)', async () => {
    const follower = await runCli(['status', '--follow'], {}, storage);
    await eventually(() => follower.stderr().includes('keel status: waiting for a Keel process'), () => `no waiting line: ${follower.stderr()}`, follower.changes);
    server.enqueue(bash(HOLD), say('done'));
    const worker = await runCli(['run', 'hold on', ...provider()], KEY, storage);
    await eventually(() => follower.events.some((l) => l.type === 'snapshot' && l.pid === worker.child.pid), () => `no snapshot of the run: ${follower.stdout()}`, follower.changes);
    writeFileSync(join(workspace, 'release'), '');
    expect((await worker.exit).code, worker.stderr()).toBe(0);
    follower.child.kill('SIGTERM');
    expect(await follower.exit).toEqual({ code: 0, signal: null });
  }, 120_000);
});
