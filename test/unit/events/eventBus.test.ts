import { describe, expect, it } from 'vitest';
import { EventBus, type BusDelivery, type BusEvent } from '../../../src/core/events/eventBus';
import { ActivityFeed, busEventsOf } from '../../../src/core/events/activityFeed';

const started = (n: number) => ({ kind: 'SessionCreated' as const, taskId: `t${n}`, title: `task ${n}`, resumed: false });

/** A gate the slow subscriber waits on: nothing here depends on timing. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let release!: () => void;
  const p = new Promise<void>((r) => (release = r));
  return { wait: () => p, open: () => release() };
}

describe('EventBus', () => {
  it('numbers events from 1 without gaps and delivers them in order to every subscriber', async () => {
    const bus = new EventBus();
    const a: number[] = [];
    const b: number[] = [];
    const inline: number[] = [];
    bus.subscribe((d) => void (d.kind !== 'Lagged' && a.push(d.seq)), { name: 'a' });
    bus.subscribe(async (d) => {
      await Promise.resolve();
      if (d.kind !== 'Lagged') b.push(d.seq);
    }, { name: 'b' });
    bus.observe((e) => inline.push(e.seq), { name: 'inline' });
    for (let i = 0; i < 500; i++) bus.publish(started(i));
    expect(inline).toHaveLength(500); // inline observers see each event inside publish
    await bus.drained();
    const expected = Array.from({ length: 500 }, (_, i) => i + 1);
    expect(a).toEqual(expected);
    expect(b).toEqual(expected);
    expect(inline).toEqual(expected);
  });

  it('a slow subscriber lags (told how many it missed) without slowing the publisher or a fast subscriber', async () => {
    const bus = new EventBus();
    const slowGate = gate();
    const slow: BusDelivery[] = [];
    const fast: number[] = [];
    let slowHandled = 0;
    bus.subscribe(
      async (d) => {
        slow.push(d);
        slowHandled++;
        if (slowHandled === 1) await slowGate.wait(); // stuck on its first event until we say so
      },
      { name: 'slow', capacity: 100 },
    );
    for (let i = 0; i < 7; i++) bus.subscribe((d) => void (d.kind !== 'Lagged' && i === 0 && fast.push(d.seq)), { name: `fast${i}` });

    // The publisher goes through 10,000 events in batches, yielding between them so queues drain.
    for (let batch = 0; batch < 100; batch++) {
      for (let i = 0; i < 100; i++) bus.publish(started(batch * 100 + i));
      await new Promise<void>((r) => setImmediate(r));
    }
    // Every publish returned while the slow subscriber was still on its first event.
    expect(slowHandled).toBe(1);
    expect(fast).toHaveLength(10_000);
    expect(fast).toEqual(Array.from({ length: 10_000 }, (_, i) => i + 1));
    const fastStats = bus.stats().filter((s) => s.name.startsWith('fast'));
    expect(fastStats.every((s) => s.missed === 0 && s.delivered === 10_000)).toBe(true);

    slowGate.open();
    await bus.drained();
    const lag = slow.find((d) => d.kind === 'Lagged');
    expect(lag).toEqual({ kind: 'Lagged', missed: 10_000 - 1 - 100, nextSeq: 10_000 - 100 + 1 });
    const seen = slow.filter((d): d is BusEvent => d.kind !== 'Lagged').map((d) => d.seq);
    // Its first event, then (after the notice) the newest 100, in order.
    expect(seen).toEqual([1, ...Array.from({ length: 100 }, (_, i) => 10_000 - 100 + 1 + i)]);
    expect(slow.indexOf(lag!)).toBe(1);
    const slowStats = bus.stats().find((s) => s.name === 'slow')!;
    expect(slowStats.missed + slowStats.delivered).toBe(10_000);
  });

  it('a subscriber that throws is reported and keeps receiving; others are unaffected', async () => {
    const errors: string[] = [];
    const bus = new EventBus({ onError: (name, err) => errors.push(`${name}: ${(err as Error).message}`) });
    const got: number[] = [];
    bus.subscribe((d) => {
      if (d.kind !== 'Lagged' && d.seq === 2) throw new Error('boom');
      if (d.kind !== 'Lagged') got.push(d.seq);
    }, { name: 'flaky' });
    bus.observe(() => {
      throw new Error('inline boom');
    }, { name: 'bad inline' });
    for (let i = 0; i < 3; i++) bus.publish(started(i));
    await bus.drained();
    expect(got).toEqual([1, 3]);
    expect(errors).toContain('flaky: boom');
    expect(errors.filter((e) => e.startsWith('bad inline'))).toHaveLength(3);
  });

  it('filters, unsubscribes and stops after close', async () => {
    const bus = new EventBus();
    const got: string[] = [];
    const sub = bus.subscribe((d) => void (d.kind !== 'Lagged' && got.push(d.kind)), { name: 'only shutdown', filter: (e) => e.kind === 'AppShutdown' });
    bus.publish(started(1));
    bus.publish({ kind: 'AppShutdown', host: 'test', pid: 1, reason: 'done' });
    await bus.drained();
    expect(got).toEqual(['AppShutdown']);
    sub.unsubscribe();
    bus.publish({ kind: 'AppShutdown', host: 'test', pid: 1, reason: 'again' });
    await bus.drained();
    expect(got).toEqual(['AppShutdown']);
    bus.close();
    expect(bus.publish(started(2)).seq).toBe(0);
  });
});

describe('task events on the bus', () => {
  it('each task event goes on as itself, followed by the seed kinds it implies', () => {
    const taskId = 't1';
    expect(busEventsOf({ type: 'tool_call', taskId, id: 'c1', name: 'Read', input: {} }).map((e) => e.kind)).toEqual(['TaskEvent', 'ToolEventReceived']);
    expect(busEventsOf({ type: 'done', taskId, status: 'completed', stopReason: 'end_turn' }).map((e) => e.kind)).toEqual(['TaskEvent', 'SessionCompleted']);
    expect(busEventsOf({ type: 'done', taskId, status: 'aborted', stopReason: null })[1]).toEqual({ kind: 'SessionFailed', taskId, status: 'aborted' });
    expect(busEventsOf({ type: 'phase', taskId, run: 2, phase: 'memorySearch', previous: 'initializing', ms: 3 })[1]).toEqual({
      kind: 'SessionStateChanged',
      taskId,
      machine: 'runPhases',
      state: 'memorySearch',
      run: 2,
    });
    expect(busEventsOf({ type: 'memory', taskId, run: 1, hits: [{ file: 'a.md', title: 'A', score: 3 }], tokens: 10 })[1]?.kind).toBe('MemoryHit');
    expect(busEventsOf({ type: 'gatekeeper', taskId, run: 1, decision: 'rejected', rule: 'secret', reasons: ['looks like an AWS key'] })[1]?.kind).toBe('GatekeeperDecision');
    const bus = new EventBus();
    const kinds: string[] = [];
    bus.observe((e) => kinds.push(e.kind), { name: 'all' });
    new ActivityFeed(undefined, bus).publishTask({ type: 'task', taskId, state: 'running' });
    expect(kinds).toEqual(['TaskEvent', 'SessionStateChanged']);
  });
});

describe('MetricsCollector', () => {
  it('counts runs, tool events, tokens and phase time from the bus', async () => {
    const { MetricsCollector } = await import('../../../src/core/events/metrics');
    const bus = new EventBus();
    const metrics = new MetricsCollector().attach(bus);
    const feed = new ActivityFeed(undefined, bus);
    const taskId = 't';
    feed.publishTask({ type: 'phase', taskId, run: 1, phase: 'memorySearch', previous: 'initializing', ms: 7 });
    feed.publishTask({ type: 'tool_call', taskId, id: 'c', name: 'Read', input: {} });
    feed.publishTask({ type: 'usage', taskId, inputTokens: 10, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 0, costUsd: 0, totalCostUsd: 0 });
    feed.publishTask({ type: 'done', taskId, status: 'completed', stopReason: 'end_turn' });
    await bus.drained();
    const m = metrics.snapshot();
    expect(m).toMatchObject({ runs: { completed: 1, failed: 0 }, toolEvents: 1, tokens: 16, phaseMs: { initializing: 7 } });
    expect(m.byKind.TaskEvent).toBe(4);
  });
});
