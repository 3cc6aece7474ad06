import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
import { buildCli, runCli, startCli } from './cliHelpers';

/**
 * The host no longer waits on fsync (the task's writer does it off the event loop), and the
 * durability at a turn boundary still holds: a tool runs only once the record of its turn is on
 * disk, so `kill -9` the moment the tool has started finds the whole turn recorded — the answer
 * that asked for the tool, the call, the permission, the `executingTool` state — and the task
 * resumes from it, telling the model the call is not confirmed to have finished.
 */
describe('kill -9 right after a turn boundary', () => {
  let dir: string;
  let cli: string;
  let server: FakeModelServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-turnkill-'));
    cli = await buildCli(dir);
    server = await startFakeModelServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the turn recorded, and the task resumes from it', async () => {
    const ws = join(dir, 'ws');
    const storage = join(dir, 'store');
    mkdirSync(ws);
    mkdirSync(storage); // a --storage folder must exist
    // The person's own rules (HOME is `dir`): the command may run in default mode.
    mkdirSync(join(dir, '.keel'));
    writeFileSync(join(dir, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(touch:*)', 'Bash(sleep:*)'] } }));
    const marker = join(ws, 'started');
    server.enqueue({ blocks: [{ type: 'text', text: 'Starting it now.' }, { type: 'tool_use', id: 'toolu_long', name: 'Bash', input: { command: `touch ${marker} && sleep 60` } }] });
    const env = { ANTHROPIC_API_KEY: 'test-key', HOME: dir };
    const common = ['--provider', 'anthropic', '--base-url', server.url, '--storage', storage];
    const run = startCli(cli, ['run', 'run the long job', '--workspace', ws, '--output-format', 'stream-json', ...common], env);
    // The tool has started: the turn boundary before it was passed.
    await waitUntil(() => existsSync(marker), () => `the command never started; stderr: ${run.stderr()}`, 60_000);
    run.child.kill('SIGKILL');
    await run.exited;

    const id = (JSON.parse(run.lines[0]!) as TaskEvent).taskId;
    const recorded = readFileSync(join(storage, 'tasks', id, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => (JSON.parse(l) as { event: TaskEvent }).event);
    const at = (pred: (e: TaskEvent) => boolean) => recorded.findIndex(pred);
    const answer = at((e) => e.type === 'message' && e.message.role === 'assistant' && e.message.content.some((b) => b.type === 'tool_use' && b.id === 'toolu_long'));
    const call = at((e) => e.type === 'tool_call' && e.id === 'toolu_long');
    const allowed = at((e) => e.type === 'permission' && e.toolCallId === 'toolu_long' && e.decision === 'allow');
    const boundary = at((e) => e.type === 'turn' && e.state === 'executingTool');
    expect([answer, call, allowed, boundary].every((i) => i >= 0), JSON.stringify(recorded.map((e) => e.type))).toBe(true);
    expect(answer < call && call < allowed && allowed < boundary).toBe(true);

    // A later process sees it interrupted, and continues it: the call is reported as not confirmed.
    const list = await runCli(cli, ['tasks', 'list', '--json', '--storage', storage], env);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ id, status: 'interrupted' })]);
    server.enqueue({ blocks: [{ type: 'text', text: 'The job was cut off; I will not run it again without asking.' }] });
    const before = server.requests.length;
    const resumed = await runCli(cli, ['run', '--resume', id, '--workspace', ws, '--output-format', 'stream-json', ...common], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    // The resumed turn's request (a lesson call for memory may follow it).
    const sent = JSON.stringify(server.requests[before]!.body);
    expect(sent).toContain('toolu_long');
    expect(sent).toContain('not confirmed to have run');
  }, 120_000);
});
