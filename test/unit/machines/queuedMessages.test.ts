import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { TaskHandle } from '../../../src/core/runtime/types';
import type { MessageAttachment } from '../../../src/shared/domain/attachments';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ConversationMessage } from '../../../src/shared/domain/messages';
import { CountingModel } from '../helpers/countingModel';

/**
 * Messages typed while the agent works, through the real task, turn and call machines and the
 * task's lock: queued, then sent when the run ends as exactly one next request that carries them
 * — never two requests at once, never refused. The model's every request waits until the test
 * answers it (CountingModel), and it counts requests in flight.
 */
const PROVIDER = { provider: 'anthropic' as const, model: 'claude-sonnet-5-5', apiKey: 'k' };
const texts = (m: ConversationMessage | undefined) => (m?.content ?? []).map((b) => (b.type === 'text' ? b.text : `[${b.type}]`));

let dispose: (() => void) | undefined;
afterEach(() => {
  dispose?.();
  dispose = undefined;
});

function setup() {
  const model = new CountingModel();
  const runtime = new TaskRuntime({ workspace: mkdtempSync(join(tmpdir(), 'keel-queue-')), providerFactory: () => model, limits: { retryBaseMs: 1 } });
  dispose = () => runtime.dispose();
  const requests = (n: number) => model.requestsSeen(n);
  return { model, runtime, requests };
}

function events(task: TaskHandle): TaskEvent[] {
  const out: TaskEvent[] = [];
  task.subscribe((e) => out.push(e));
  return out;
}

describe('messages queued while a run is under way', () => {
  it('yield exactly one next request, after the first answered, carrying each message in order', async () => {
    const { model, runtime, requests } = setup();
    const task = runtime.startTask({ prompt: 'refactor the parser', provider: PROVIDER });
    const seen = events(task);
    await requests(1);
    task.sendUserMessage('also keep the old API');
    task.sendUserMessage('and add a test');
    // Queued, not sent: no second request while the first is in flight, and nothing refused.
    expect(model.requests).toHaveLength(1);
    expect(seen.filter((e) => e.type === 'queued')).toHaveLength(2);
    expect(seen.some((e) => e.type === 'error')).toBe(false);
    model.answer('Refactored.');
    await requests(2);
    const second = model.requests[1]!;
    // The conversation so far, then the queued messages (merged into one user turn for the model).
    expect(texts(second[0])).toEqual(['refactor the parser']);
    expect(texts(second[1])).toEqual(['Refactored.']);
    expect(second.slice(2).flatMap(texts)).toEqual(['also keep the old API', 'and add a test']);
    model.answer('Kept it, and tested.');
    const done = await task.settled();
    await model.changes.until(() => model.inFlight === 0, () => 'no request in flight');
    expect(done.status).toBe('completed');
    expect(model.requests).toHaveLength(2);
    expect(model.maxInFlight).toBe(1);
  });

  it('carry their attachments as blocks after their text; the views get only the summaries', async () => {
    const { model, runtime, requests } = setup();
    const task = runtime.startTask({ prompt: 'look', provider: PROVIDER });
    const seen = events(task);
    await requests(1);
    const attachment: MessageAttachment = { kind: 'file', label: 'src/a.ts:2-3', content: '2  b\n3  c', note: 'lines 2-3 of 9' };
    task.sendUserMessage('see @src/a.ts#L2-3', { attachments: [attachment] });
    const queued = seen.find((e) => e.type === 'queued');
    expect(queued?.type === 'queued' && queued.message.attachments).toEqual([{ kind: 'file', label: 'src/a.ts:2-3', note: 'lines 2-3 of 9' }]);
    expect(JSON.stringify(seen.filter((e) => e.type === 'queued'))).not.toContain('2  b');
    model.answer('ok');
    await requests(2);
    const last = model.requests[1]!.at(-1)!;
    expect(texts(last)[0]).toBe('see @src/a.ts#L2-3');
    expect(texts(last)[1]).toBe('<attachment kind="file" name="src/a.ts:2-3">\n2  b\n3  c\n[Keel: lines 2-3 of 9]\n</attachment>');
    const shown = task.transcript().items.filter((i) => i.kind === 'user');
    expect(shown.at(-1)).toMatchObject({ text: 'see @src/a.ts#L2-3', attachments: [{ kind: 'file', label: 'src/a.ts:2-3' }] });
    model.answer('done');
    await task.settled();
  });

  it('a message sent while the run is still starting (initializing) is queued, not lost', async () => {
    const { model, runtime, requests } = setup();
    const task = runtime.startTask({ prompt: 'first', provider: PROVIDER });
    const seen = events(task);
    // Right after start, before the run's first request: the task is initializing.
    await new Promise<void>((r) => queueMicrotask(r));
    task.sendUserMessage('early');
    await requests(1);
    expect(seen.filter((e) => e.type === 'queued')).toHaveLength(1);
    model.answer('one');
    await requests(2);
    expect(texts(model.requests[1]!.at(-1))).toEqual(['early']);
    model.answer('two');
    await task.settled();
  });
});
