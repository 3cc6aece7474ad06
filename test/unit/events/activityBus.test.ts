import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProcessActivity } from '../../../src/core/agents/processActivity';
import type { BusDelivery } from '../../../src/core/events/eventBus';
import type { ActivityEvent } from '../../../src/core/events/activityFeed';
import { NOTHING_APPROVED } from '../../../src/core/trust/items';

/**
 * One bus per process: the activity feed (status board, loop judge, status socket) is a view of
 * the same EventBus the metrics collector, the logger and `keel events` readers subscribe to.
 */
describe('ProcessActivity: one event bus', () => {
  it('what the feed publishes goes over the one bus; a stuck queued subscriber misses events without holding up the board', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-activity-bus-'));
    const activity = new ProcessActivity({ workspace: home, keelHome: home, home, environment: () => ({}), log: () => undefined, trust: NOTHING_APPROVED });
    const bus = activity.feed.bus;
    const seen: ActivityEvent[] = [];
    activity.feed.subscribe((a) => seen.push(a));
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const slow: BusDelivery[] = [];
    bus.subscribe(
      async (d) => {
        slow.push(d);
        if (slow.length === 1) await stuck;
      },
      { name: 'slow view', capacity: 10 },
    );
    const taskId = 'task-1';
    activity.feed.publishTask({ type: 'task', taskId, state: 'running' }, { title: 'fix it' });
    await new Promise<void>((r) => setImmediate(r)); // the slow subscriber takes its first event and sticks
    // A log-only event goes over the bus too, but activity listeners get only view events.
    activity.feed.publishTask({ type: 'message', taskId, message: { role: 'user', content: [{ type: 'text', text: 'fix it' }] } });
    for (let i = 0; i < 50; i++) activity.feed.publishTask({ type: 'turn', taskId, state: i % 2 ? 'streaming' : 'waiting', turn: 1 });
    activity.feed.publishTask({ type: 'done', taskId, status: 'completed', stopReason: 'end_turn' });

    // The board saw the task finish while the slow subscriber was still on its first event.
    expect(slow).toHaveLength(1);
    expect(activity.board.rows().find((r) => r.id === taskId)?.status).toBe('done');
    expect(seen.filter((a) => a.kind === 'task').map((a) => (a.kind === 'task' ? a.event.type : ''))).not.toContain('message');
    expect(seen.at(-1)).toMatchObject({ kind: 'task', event: { type: 'done' } });
    // The metrics collector is a queued subscriber of the same bus.
    await new Promise<void>((r) => setImmediate(r)); // queued subscribers drain on microtasks
    expect(activity.metrics.snapshot().runs.completed).toBe(1);
    expect(activity.metrics.snapshot().byKind.TaskEvent).toBe(53);

    release();
    await bus.drained();
    const lagged = slow.find((d) => d.kind === 'Lagged');
    expect(lagged?.kind === 'Lagged' && lagged.missed).toBeGreaterThan(0);
    await activity.dispose();
  });
});
