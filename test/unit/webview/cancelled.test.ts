import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../../src/core/providers/scripted';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { applyTaskEvent, emptyTranscript } from '../../../src/shared/domain/transcript';
import { TaskStore } from '../../../src/core/store/taskStore';

describe('a cancelled answer is marked where it was cut', () => {
  it('done(aborted) marks the streaming answer cancelled; done(completed) does not', () => {
    let t = emptyTranscript('t1', 'x', 'm');
    t = applyTaskEvent(t, { type: 'assistant_start', taskId: 't1', messageId: 'a1', model: 'm' });
    t = applyTaskEvent(t, { type: 'text', taskId: 't1', delta: 'Half an ans' });
    const cancelled = applyTaskEvent(t, { type: 'done', taskId: 't1', status: 'aborted', stopReason: null });
    expect(cancelled.items[0]).toMatchObject({ kind: 'assistant', text: 'Half an ans', streaming: false, cancelled: true });
    const finished = applyTaskEvent(t, { type: 'done', taskId: 't1', status: 'completed', stopReason: 'end_turn' });
    expect(finished.items[0]).not.toHaveProperty('cancelled');
  });

  it('cancelling a real task mid-answer leaves the cut-off answer marked, live and when reopened from the store', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-cancel-'));
    const storageDir = mkdtempSync(join(tmpdir(), 'keel-cancel-store-'));
    const provider = new ScriptedProvider([{ blocks: [{ type: 'text', text: 'A long answer that keeps going and going and going.' }], chunkSize: 2, delayMs: 5 }]);
    const runtime = new TaskRuntime({ workspace, storageDir, providerFactory: () => provider });
    const task = runtime.startTask({ prompt: 'go', provider: { provider: 'anthropic', model: 'm' } });
    let deltas = 0;
    task.subscribe((e) => {
      if (e.type === 'text' && ++deltas === 3) task.cancel();
    });
    const done = await task.settled();
    expect(done.status).toBe('aborted');
    const answer = task.transcript().items.find((i) => i.kind === 'assistant');
    expect(answer).toMatchObject({ streaming: false, cancelled: true });
    expect(answer?.kind === 'assistant' && answer.text.length).toBeLessThan(20);
    runtime.dispose();
    const stored = await new TaskStore(storageDir).load(task.id);
    expect(stored.replay.transcript.items.find((i) => i.kind === 'assistant')).toMatchObject({ cancelled: true });
  });
});
