import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionAsker, PermissionRequest } from '../../../src/core/permissions/gate';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { workerCommandBeside } from '../../../src/core/workers/spawnWorker';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { reviewOf } from '../../../src/shared/domain/review';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle } from './cliHarness';

/**
 * Per-hunk review and checkpoints when the turn runs on a real worker process (the default of the
 * CLI and of VS Code), as in process: the person's review travels host → worker with the allow,
 * the worker writes exactly the reviewed text, keeps the file's before-image in the task's
 * checkpoints, and the model is told which change did not land.
 */
const BEFORE = ['function greet(name) {', '  return "Hello, " + name;', '}', '', 'function part(name) {', '  return "Bye, " + name;', '}', ''].join('\n');
const AFTER = BEFORE.replace('"Hello, "', '"Hi, "').replace('"Bye, "', '"Farewell, "');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.each([{ onWorker: true }, { onWorker: false }])('a reviewed Write (on a worker: $onWorker)', ({ onWorker }) => {
  it('writes exactly the accepted hunk, checkpoints the file first and tells the model', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'keel-rw-ws-'));
    const storage = mkdtempSync(join(tmpdir(), 'keel-rw-st-'));
    writeFileSync(join(ws, 'greet.js'), BEFORE);
    const server: FakeModelServer = await startFakeModelServer({
      turns: [{ blocks: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'greet.js', content: AFTER } }] }, { blocks: [{ type: 'text', text: 'ok' }] }],
    });
    const asked: PermissionRequest[] = [];
    const asker: PermissionAsker = {
      async ask(req) {
        asked.push(req);
        const diff = req.subject.kind === 'write' ? req.subject.diff! : null;
        return { decision: 'allow', review: reviewOf(diff!.before, diff!.after, [{ kind: 'accept' }, { kind: 'reject' }]) };
      },
    };
    const bundle = dirname(await cliBundle());
    const runtime = new TaskRuntime({
      workspace: ws,
      storageDir: storage,
      asker,
      ownerLabel: 'test',
      ...(onWorker ? { workers: { command: workerCommandBeside(bundle, join), max: 1, strategy: 'lru' as const } } : {}),
    });
    cleanups.push(
      () => server.close(),
      () => rmSync(ws, { recursive: true, force: true }),
      () => rmSync(storage, { recursive: true, force: true }),
      () => runtime.shutdownWorkers(),
      () => runtime.dispose(),
    );
    const task = runtime.startTask({ prompt: 'shorten the greetings', provider: { provider: 'anthropic', model: 'claude-sonnet-5-5', apiKey: 'k', baseUrl: server.url }, mode: 'default' });
    const events: TaskEvent[] = [];
    task.subscribe((e) => events.push(e));
    const done = await task.settled();
    expect(done.status).toBe('completed');
    expect(asked).toHaveLength(1);
    expect(readFileSync(join(ws, 'greet.js'), 'utf8')).toBe(BEFORE.replace('"Hello, "', '"Hi, "'));
    expect(events.find((e) => e.type === 'permission' && e.decision === 'allow')).toMatchObject({ reason: expect.stringContaining('change 2 left out') });
    expect(events.find((e) => e.type === 'checkpoint')).toMatchObject({ toolCallId: 'toolu_w', files: [expect.objectContaining({ path: 'greet.js', kept: true })] });
    const told = JSON.stringify(server.requests.filter((r) => r.path === '/v1/messages')[1]?.body);
    expect(told).toContain('1 of 2 applied as you proposed');
    expect(told).toContain('NOT applied');
  });
});
