import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { ListProvider, end, midStreamError, start, textBlock, toolTurn, type Step } from '../helpers/scriptedEvents';
import { wiredTask } from '../helpers/wiredTask';

/**
 * Cost and usage are the machines' own: the turn prices each model call (providers/pricing.ts)
 * and its usage events carry the call's price and the task's running total; the task machine adds
 * every run up. Sonnet costs $3 / $15 per million input / output tokens; every scripted answer
 * here uses 10 input and 5 output tokens (scriptedEvents.ts), so each call costs $0.000105.
 */
const MODEL = 'claude-sonnet-4-5';
const CALL = (10 * 3 + 5 * 15) / 1_000_000;
const answer = (text: string): Step => [start(), ...textBlock(0, text), ...end('end_turn')];
/** A stream that failed after message_start: 10 input and 1 output tokens reported (scriptedEvents.ts). */
const FAILED = (10 * 3 + 1 * 15) / 1_000_000;
const usages = (events: TaskEvent[]) => events.filter((e): e is Extract<TaskEvent, { type: 'usage' }> => e.type === 'usage');

describe('the turn prices each model call and the task adds its runs up', () => {
  it('usage events carry each call’s price and the running total, across runs', async () => {
    const { actor, events, settled } = wiredTask([toolTurn('r1', 'Read', { file_path: 'missing.txt' }), answer('first run done'), answer('second run done')]);
    actor.start();
    actor.send({ type: 'START', text: 'read it' });
    await settled(1);
    actor.send({ type: 'USER_MESSAGE', text: 'and again' });
    await settled(2);
    const u = usages(events);
    expect(u).toHaveLength(3);
    u.forEach((e, i) => {
      expect(e).toMatchObject({ inputTokens: 10, outputTokens: 5 });
      expect(e.costUsd).toBeCloseTo(CALL, 12);
      expect(e.totalCostUsd).toBeCloseTo(CALL * (i + 1), 12);
    });
    const context = actor.getSnapshot().context;
    expect(context.costUsd).toBeCloseTo(3 * CALL, 12);
    expect(context.usage).toEqual({ inputTokens: 30, outputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0 });
    actor.stop();
  });

  it('a task continued from its log goes on from the cost it had', async () => {
    const { actor, events, settled } = wiredTask([answer('continued')], { costUsd: 0.5 });
    actor.start();
    actor.send({ type: 'START', text: 'continue' });
    await settled(1);
    expect(usages(events).map((e) => e.totalCostUsd)).toEqual([0.5 + CALL]);
    actor.stop();
  });

  it('a summary made to compact the conversation is a model call: it is counted and priced', async () => {
    // A context limit of one token: the conversation is summarised before the answer is asked for.
    const { actor, events, settled, provider } = wiredTask([answer('the summary'), answer('answered')], { limits: { contextLimit: 1 } });
    actor.start();
    actor.send({ type: 'START', text: 'a long conversation' });
    await settled(1);
    expect(events.some((e) => e.type === 'compacted' && e.summary)).toBe(true);
    expect(provider.requests).toHaveLength(2);
    expect(usages(events).map((e) => e.totalCostUsd)).toEqual([CALL, 2 * CALL].map((c) => expect.closeTo(c, 12)));
    expect(actor.getSnapshot().context.usage).toEqual({ inputTokens: 20, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 });
    actor.stop();
  });

  it('what a failed attempt used before it failed counts, retried or not', async () => {
    const retried = wiredTask([midStreamError(), answer('second attempt')], { limits: { retryLimit: 1 } });
    retried.actor.start();
    retried.actor.send({ type: 'START', text: 'hi' });
    await retried.settled(1);
    expect(retried.events.map((e) => e.type).filter((t) => t === 'usage' || t === 'retry')).toEqual(['usage', 'retry', 'usage']);
    expect(usages(retried.events).map((e) => [e.costUsd, e.totalCostUsd])).toEqual([
      [expect.closeTo(FAILED, 12), expect.closeTo(FAILED, 12)],
      [expect.closeTo(CALL, 12), expect.closeTo(FAILED + CALL, 12)],
    ]);
    expect(retried.actor.getSnapshot().context.costUsd).toBeCloseTo(FAILED + CALL, 12);
    retried.actor.stop();

    const failed = wiredTask([midStreamError()]);
    failed.actor.start();
    failed.actor.send({ type: 'START', text: 'hi' });
    await failed.settled(1);
    expect(failed.actor.getSnapshot().matches('awaitingUser')).toBe(true);
    expect(usages(failed.events).map((e) => e.totalCostUsd)).toEqual([expect.closeTo(FAILED, 12)]);
    expect(failed.actor.getSnapshot().context.usage).toEqual({ inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
    failed.actor.stop();
  });

  it('a model without a known price costs nothing', async () => {
    const { actor, events, settled } = wiredTask([answer('local')], { model: 'llama3.2' });
    actor.start();
    actor.send({ type: 'START', text: 'hi' });
    await settled(1);
    expect(usages(events).map((e) => [e.costUsd, e.totalCostUsd])).toEqual([[0, 0]]);
    actor.stop();
  });
});

describe('what a person sees of the cost', () => {
  it('the transcript and a resumed stored task keep the running total', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-cost-ws-'));
    const storageDir = mkdtempSync(join(tmpdir(), 'keel-cost-store-'));
    const first = new TaskRuntime({ workspace, storageDir, providerFactory: () => new ListProvider([answer('one')]) });
    const task = first.startTask({ prompt: 'hi', provider: { provider: 'anthropic', model: MODEL } });
    await task.settled();
    expect(task.transcript().usage.costUsd).toBeCloseTo(CALL, 12);
    first.dispose();
    const second = new TaskRuntime({ workspace, storageDir, providerFactory: () => new ListProvider([answer('three')]) });
    const resumed = await second.resume(task.id, { provider: { provider: 'anthropic', model: MODEL }, followUp: 'more' });
    const events: TaskEvent[] = [];
    resumed.subscribe((e) => events.push(e));
    await new Promise<void>((resolve) => resumed.subscribe((e) => e.type === 'done' && resolve()));
    expect(usages(events).map((e) => e.totalCostUsd)).toHaveLength(1);
    expect(usages(events)[0]!.totalCostUsd).toBeCloseTo(2 * CALL, 12);
    expect(resumed.transcript().usage.costUsd).toBeCloseTo(2 * CALL, 12);
    second.dispose();
  });
});
