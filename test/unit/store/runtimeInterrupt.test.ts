import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { ListProvider, textTurn, type Step } from '../helpers/scriptedEvents';

/** `interruptAll` is what a host does when told to end (the CLI on SIGTERM): stop and record. */
function runtimeWith(storageDir: string, steps: Step[], delayMs = 0) {
  const provider = new ListProvider(steps, delayMs);
  const runtime = new TaskRuntime({ workspace: mkdtempSync(join(tmpdir(), 'keel-ws-')), storageDir, providerFactory: () => provider, limits: { retryBaseMs: 1 }, ownerLabel: 'test' });
  return { provider, runtime };
}

const anthropic = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5' };

describe('TaskRuntime.interruptAll', () => {
  it('records a running task as interrupted, tells its listeners, lets go of its lock, and it resumes later', async () => {
    const storage = mkdtempSync(join(tmpdir(), 'keel-int-'));
    const first = runtimeWith(storage, [textTurn('a long answer that is cut off in the middle of it')], 50);
    const task = first.runtime.startTask({ prompt: 'answer', provider: anthropic });
    const events: TaskEvent[] = [];
    const streaming = new Promise<void>((resolve) =>
      task.subscribe((e) => {
        events.push(e);
        if (e.type === 'text') resolve();
      }),
    );
    await streaming;
    expect(first.runtime.interruptAll()).toEqual([task.id]);
    expect(events.at(-1)).toMatchObject({ type: 'task', state: 'interrupted' });
    // Its last writes and the lock's release run off the event loop; a host about to end waits for them.
    await first.runtime.closed();
    const dir = join(storage, 'tasks', task.id);
    expect(JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'))).toMatchObject({ status: 'interrupted' });
    expect(existsSync(join(dir, 'lock'))).toBe(false);
    // Nothing more is published or written after the stop.
    await new Promise((r) => setTimeout(r, 300));
    expect(events.at(-1)).toMatchObject({ type: 'task', state: 'interrupted' });
    expect(first.runtime.list()).toEqual([]);

    const second = runtimeWith(storage, [textTurn('Picking up where I stopped.')]);
    expect((await second.runtime.listStored()).tasks.map((t) => t.status)).toEqual(['interrupted']);
    const resumed = await second.runtime.resume(task.id, { provider: anthropic });
    expect((await resumed.settled()).status).toBe('completed');
    // The model gets the answer as far as it was streamed before the stop.
    const streamed = events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('');
    expect(second.provider.requests[0]!.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: streamed }] });
    second.runtime.dispose();
  });

  it('leaves a settled task as it was recorded', async () => {
    const storage = mkdtempSync(join(tmpdir(), 'keel-int-'));
    const { runtime } = runtimeWith(storage, [textTurn('done quickly')]);
    const task = runtime.startTask({ prompt: 'quick', provider: anthropic });
    expect((await task.settled()).status).toBe('completed');
    expect(runtime.interruptAll()).toEqual([]);
    await runtime.closed();
    expect(JSON.parse(readFileSync(join(storage, 'tasks', task.id, 'meta.json'), 'utf8'))).toMatchObject({ status: 'completed' });
  });
});
