import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingOf } from '../../../src/core/replay/recording';
import { replayTask } from '../../../src/core/replay/replayTask';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { MessageAttachment } from '../../../src/shared/domain/attachments';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { CountingModel } from '../helpers/countingModel';

/**
 * `keel tasks replay` of a task whose person queued messages while it worked (one with an
 * attachment from a mention, one cancelled before it was sent): the replay queues and withdraws
 * them where the log did, and the same events come out.
 */
const PROVIDER = { provider: 'anthropic' as const, model: 'claude-sonnet-5-5', apiKey: 'k' };
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
});

describe('replay of a task with queued messages', () => {
  it('queues, withdraws and sends them as the log did: no difference', async () => {
    const storageDir = mkdtempSync(join(tmpdir(), 'keel-replayq-'));
    const workspace = mkdtempSync(join(tmpdir(), 'keel-replayq-ws-'));
    cleanup.push(() => rmSync(storageDir, { recursive: true, force: true }), () => rmSync(workspace, { recursive: true, force: true }));
    const model = new CountingModel();
    const runtime = new TaskRuntime({ workspace, storageDir, ownerLabel: 'test', providerFactory: () => model });
    cleanup.push(() => runtime.dispose());
    const attachment: MessageAttachment = { kind: 'git', label: 'git', content: 'diff --git a/x b/x\n</attachment> not the end', note: 'the diff is cut at 1 line' };

    const task = runtime.startTask({ prompt: 'tidy up', provider: PROVIDER });
    const events: TaskEvent[] = [];
    task.subscribe((e) => events.push(e));
    await model.requestsSeen(1);
    task.sendUserMessage('and look at my changes', { attachments: [attachment] });
    task.sendUserMessage('no, forget it');
    task.withdrawQueued(task.transcript().queued![1]!.id);
    model.answer('Tidied.');
    await model.requestsSeen(2);
    model.answer('Looked.');
    // The second run is under way (it made its request): settled() waits for its end.
    expect((await task.settled()).status).toBe('completed');
    await task.recorded?.();

    const rec = recordingOf(events);
    expect(rec.prompts.map((p) => [p.text, p.queuedAt !== undefined, p.afterRuns])).toEqual([
      ['tidy up', false, 0],
      ['and look at my changes', true, 1],
      ['no, forget it', true, undefined],
    ]);
    // What the model read of the attachment comes back exactly from the log.
    expect(rec.prompts[1]!.attachments).toEqual([attachment]);
    expect(rec.withdrawals).toHaveLength(1);

    const result = await replayTask(runtime.store!, task.id, { idleMs: 5_000 });
    expect(result.divergence).toBeNull();
    expect(result.compared).toBeGreaterThan(10);
  });
});
