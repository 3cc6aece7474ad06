import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/core/events/eventBus';
import { ActivityFeed } from '../../../src/core/events/activityFeed';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { ChatController } from '../../../src/extension/chatController';
import { ViewConnection } from '../../../src/extension/viewConnection';
import { applyTaskEvent, type TaskTranscript } from '../../../src/shared/domain/transcript';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { ListProvider, textTurn } from '../helpers/scriptedEvents';
import { fakeHost, recordingPort, type FakeTask } from './fakes';

/**
 * The chat views follow the shown task through a queued subscriber of the process's event bus:
 * events reach them a little after the task delivered them, so a snapshot taken meanwhile already
 * holds some (each view skips those: no text delta twice), and a view queue that overflows is told
 * so and rebuilt from a fresh snapshot (the same transcript as the task's).
 */
function chatOnBus(capacity?: number) {
  const h = fakeHost();
  const bus = new EventBus();
  h.runtime.bus = bus;
  const c = new ChatController({ ...h.host, ...(capacity !== undefined ? { viewQueueCapacity: capacity } : {}) });
  const views = ['v1', 'v2'].map((id) => {
    const port = recordingPort();
    const conn = new ViewConnection(id, 'sidebar', port.post, h.log);
    c.attach(conn);
    const fromPage = async (data: unknown) => {
      const m = conn.receive(data);
      if (m) await c.handle(conn, m);
    };
    return { conn, port, fromPage };
  });
  return { h, bus, c, views };
}

/** What a page shows after these messages: its last snapshot's transcript with every later event folded in. */
function shown(posted: ToWebviewMessage[]): TaskTranscript | null {
  let t: TaskTranscript | null = null;
  for (const m of posted) {
    if (m.type === 'snapshot') t = m.transcript;
    else if (m.type === 'event' && t) t = applyTaskEvent(t, m.event);
  }
  return t;
}
const answerOf = (t: TaskTranscript | null) => t?.items.flatMap((i) => (i.kind === 'assistant' ? [i.text] : [])).join('|');
const settled = () => new Promise((r) => setTimeout(r, 0));

async function startedTask(chat: ReturnType<typeof chatOnBus>): Promise<FakeTask> {
  const [v1] = chat.views;
  for (const v of chat.views) await v.fromPage({ type: 'ready' });
  await v1!.fromPage({ type: 'prompt', text: 'explain' });
  const task = chat.h.runtime.tasks[0]!;
  await settled();
  await chat.bus.drained();
  task.emit({ type: 'assistant_start', taskId: task.id, messageId: 'm1', model: 'demo' });
  return task;
}

describe('chat views on the event bus', () => {
  it('a snapshot taken while deltas wait in the queue: that view skips them, a view with an older snapshot gets them, neither shows a delta twice', async () => {
    const chat = chatOnBus();
    const task = await startedTask(chat);
    const [v1, v2] = chat.views;
    for (const d of ['Hel', 'lo ', 'world']) task.emit({ type: 'text', taskId: task.id, delta: d });
    // v1's page reloads now: its snapshot holds the three deltas, which are still queued.
    v1!.conn.setVisible(false);
    await v1!.fromPage({ type: 'ready' });
    const reloadedAt = v1!.port.posted.length;
    task.emit({ type: 'text', taskId: task.id, delta: '!' });
    await chat.bus.drained();
    expect(v1!.port.posted[reloadedAt - 1]).toMatchObject({ type: 'snapshot', seq: 1 });
    expect(answerOf(shown(v1!.port.posted))).toBe('Hello world!');
    // Only the delta after its snapshot was posted to v1's new page.
    expect(v1!.port.posted.slice(reloadedAt).map((m) => (m.type === 'event' ? m.event.type : m.type))).toEqual(['text']);
    expect(answerOf(shown(v2!.port.posted))).toBe('Hello world!');
    expect(shown(v1!.port.posted)).toEqual(task.transcript());
    expect(shown(v2!.port.posted)).toEqual(task.transcript());
  });

  it('a view queue that overflows is told how many it missed and rebuilt from a fresh snapshot: the same transcript, each delta once', async () => {
    const chat = chatOnBus(4);
    const task = await startedTask(chat);
    const deltas = Array.from({ length: 50 }, (_, i) => `d${i} `);
    for (const d of deltas) task.emit({ type: 'text', taskId: task.id, delta: d });
    task.emit({ type: 'task', taskId: task.id, state: 'completed', title: task.transcript().title });
    task.emit({ type: 'done', taskId: task.id, status: 'completed', stopReason: 'end_turn' });
    await chat.bus.drained();
    expect(chat.h.log.lines.some((l) => /fell \d+ events behind task/.test(l))).toBe(true);
    for (const v of chat.views) {
      const t = shown(v.port.posted);
      expect(answerOf(t)).toBe(deltas.join(''));
      expect(t).toEqual(task.transcript());
    }
    const sub = chat.bus.stats().find((s) => s.name.startsWith('chat views of'))!;
    expect(sub.missed).toBeGreaterThan(0);
  });

  it('with a real TaskRuntime on an activity feed: events carry their number in the task, and the view shows what the task holds', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-views-bus-'));
    const feed = new ActivityFeed();
    const provider = new ListProvider([textTurn('An answer streamed in several deltas, through the bus.')], 1);
    const runtime = new TaskRuntime({ workspace, providerFactory: () => provider, feed, limits: { retryBaseMs: 1 } });
    const seqs: number[] = [];
    feed.bus.observe((e) => void (e.kind === 'TaskEvent' && e.taskSeq !== undefined && seqs.push(e.taskSeq)), { name: 'test' });
    const h = fakeHost({ provider: { provider: 'anthropic', model: 'claude-sonnet-4-5' } });
    const c = new ChatController({ ...h.host, loadRuntime: async () => runtime });
    const port = recordingPort();
    const conn = new ViewConnection('v', 'sidebar', port.post, h.log);
    c.attach(conn);
    const fromPage = async (data: unknown) => {
      const m = conn.receive(data);
      if (m) await c.handle(conn, m);
    };
    await fromPage({ type: 'ready' });
    await fromPage({ type: 'prompt', text: 'explain' });
    const task = c.shownTask()!;
    await task.settled();
    await feed.bus.drained();
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(task.eventSeq!()).toBe(seqs.length);
    expect(answerOf(shown(port.posted))).toBe('An answer streamed in several deltas, through the bus.');
    expect(shown(port.posted)).toEqual(task.transcript());
    c.dispose();
  });
});
