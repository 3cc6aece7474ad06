import { describe, expect, it } from 'vitest';
import type { SnapshotMessage, ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { ViewConnection, type ShownTask } from '../../../src/extension/viewConnection';
import { MemoryLogger } from './fakes';
import { SimulatedClock } from 'xstate';

/**
 * One view's message stream, driven by its session machine: what a page receives, in which order
 * and with which numbers, as the view loads, hides, comes back, loses its page or is closed.
 */
const CONFIG = { provider: 'demo', providerLabel: 'Demo', model: 'demo model', mode: 'default' } as const;
const text = (delta: string) => ({ type: 'event', event: { type: 'text', taskId: 't1', delta } }) as const;

function view(opts: { answer?: () => boolean | Promise<boolean> | never; shown?: ShownTask; idleTimeoutMs?: number; clock?: SimulatedClock } = {}) {
  const posted: ToWebviewMessage[] = [];
  const log = new MemoryLogger();
  let shows: string | null = opts.shown?.taskId ?? null;
  let readinessChanges = 0;
  const conn = new ViewConnection(
    'v1',
    'sidebar',
    (m) => {
      posted.push(m);
      const a = opts.answer ? opts.answer() : true;
      return typeof a === 'boolean' ? Promise.resolve(a) : a;
    },
    log,
    { maxPending: 3, ...(opts.idleTimeoutMs !== undefined ? { idleTimeoutMs: opts.idleTimeoutMs } : {}), ...(opts.clock ? { clock: opts.clock } : {}) },
  );
  const snapshot = (): Omit<SnapshotMessage, 'seq'> => ({ type: 'snapshot', transcript: null, config: { ...CONFIG, model: `shows ${shows ?? 'nothing'}` } });
  conn.connect({ snapshot, readinessChanged: () => void readinessChanges++ }, opts.shown ?? null);
  const show = (s: ShownTask) => {
    shows = s?.taskId ?? null;
    conn.show(s);
  };
  return { conn, posted, log, show, readinessChanges: () => readinessChanges };
}

const summary = (ms: ToWebviewMessage[]) =>
  ms.map((m) => `${m.seq}:${m.type}${m.type === 'event' && m.event.type === 'text' ? `:${m.event.delta}` : ''}${m.type === 'error' ? `:${m.message}` : ''}${m.type === 'snapshot' ? `:${m.config.model}` : ''}`);
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('ViewConnection: a view\'s session decides what its page receives', () => {
  it('posts nothing before the page says ready', () => {
    const { conn, posted } = view();
    conn.send(text('a'));
    conn.send({ type: 'error', message: 'e1' });
    expect(posted).toEqual([]);
    expect(conn.state).toBe('new');
    expect(conn.isReady).toBe(false);
  });

  it('on ready sends the snapshot as seq 1, then kept host errors, then live messages', () => {
    const { conn, posted } = view({ shown: { taskId: 't1', settled: false } });
    conn.send(text('covered by the snapshot'));
    conn.send({ type: 'error', message: 'e1' });
    conn.ready();
    conn.send(text('live'));
    expect(summary(posted)).toEqual(['1:snapshot:shows t1', '2:error:e1', '3:event:live']);
    expect(conn.state).toBe('active');
  });

  it('keeps while hidden and resends on the next ready, numbering from 1 again', () => {
    const { conn, posted, readinessChanges } = view({ shown: { taskId: 't1', settled: false } });
    conn.ready();
    conn.send(text('a'));
    conn.setVisible(false);
    expect(conn.state).toBe('paused');
    conn.send(text('b'));
    conn.send({ type: 'error', message: 'while hidden' });
    expect(summary(posted)).toEqual(['1:snapshot:shows t1', '2:event:a']);
    conn.setVisible(true);
    expect(summary(posted)).toHaveLength(2);
    conn.ready();
    conn.send(text('c'));
    expect(summary(posted.slice(2))).toEqual(['1:snapshot:shows t1', '2:error:while hidden', '3:event:c']);
    expect(readinessChanges()).toBe(3);
  });

  it('keeps only the newest messages for the next page', () => {
    const { conn, posted } = view();
    for (const m of ['e1', 'e2', 'e3', 'e4', 'e5']) conn.send({ type: 'error', message: m });
    conn.ready();
    expect(summary(posted)).toEqual(['1:snapshot:shows nothing', '2:error:e3', '3:error:e4', '4:error:e5']);
    expect(conn.state).toBe('inactive');
  });

  it('a view hidden past the idle timeout drops what it kept: its next page gets the snapshot alone', async () => {
    // The idle timeout runs on a clock the test moves, not on the wall clock.
    const clock = new SimulatedClock();
    const { conn, posted, log } = view({ idleTimeoutMs: 5, clock });
    conn.ready();
    conn.setVisible(false);
    conn.send({ type: 'error', message: 'stale' });
    clock.increment(4);
    expect(conn.state).toBe('paused');
    clock.increment(1);
    expect(conn.state).toBe('timeout');
    conn.send({ type: 'error', message: 'also stale' });
    conn.ready();
    expect(summary(posted)).toEqual(['1:snapshot:shows nothing', '1:snapshot:shows nothing']);
    expect(log.lines).toContain('debug view v1: paused → timeout');
  });

  it('a failed post pauses the view until its next ready; what follows is kept for that page', async () => {
    let ok = true;
    const { conn, posted, log } = view({ answer: () => ok });
    conn.ready();
    ok = false;
    conn.send(text('lost'));
    await settle();
    expect(conn.state).toBe('paused');
    expect(log.lines.some((l) => l.startsWith('warn webview message 2 not delivered'))).toBe(true);
    conn.send({ type: 'error', message: 'kept' });
    ok = true;
    conn.ready();
    expect(summary(posted.slice(2))).toEqual(['1:snapshot:shows nothing', '2:error:kept']);
    expect(conn.state).toBe('inactive');
  });

  it('a post that throws pauses the view, and the rest of that page\'s messages wait for the next one', () => {
    let fail = false;
    const { conn, posted } = view({
      answer: () => {
        if (fail) throw new Error('disposed');
        return true;
      },
    });
    conn.send({ type: 'error', message: 'e1' });
    fail = true;
    expect(() => conn.ready()).not.toThrow();
    expect(conn.state).toBe('paused');
    fail = false;
    conn.ready();
    // The first page got the snapshot (which threw) and nothing else; e1 waited for the second.
    expect(summary(posted)).toEqual(['1:snapshot:shows nothing', '1:snapshot:shows nothing', '2:error:e1']);
  });

  it('a late failure from an earlier page does not pause the current one', async () => {
    const resolvers: Array<(ok: boolean) => void> = [];
    const { conn } = view({ answer: () => new Promise<boolean>((r) => resolvers.push(r)) as never });
    conn.ready();
    conn.setVisible(false);
    conn.ready();
    resolvers[0]!(false);
    await settle();
    expect(conn.state).toBe('inactive');
    expect(conn.isReady).toBe(true);
  });

  it('the session follows the shown task (its run ending, running again); showing another task sends a loaded page its snapshot, numbered on; a hidden one gets it on its next ready', () => {
    const { conn, posted, show } = view();
    conn.ready();
    show({ taskId: 't1', settled: false });
    expect(conn.state).toBe('active');
    conn.sendTaskEvent({ type: 'done', taskId: 't1', status: 'completed', stopReason: 'end_turn' });
    expect(conn.state).toBe('completed');
    conn.sendTaskEvent({ type: 'task', taskId: 't1', state: 'running' });
    expect(conn.state).toBe('active');
    conn.setVisible(false);
    show({ taskId: 't2', settled: true });
    show(null);
    show({ taskId: 't3', settled: true });
    expect(summary(posted)).toEqual(['1:snapshot:shows nothing', '2:snapshot:shows t1', '3:event', '4:event']);
    conn.ready();
    expect(conn.state).toBe('completed');
    show(null);
    expect(conn.state).toBe('inactive');
    expect(summary(posted.slice(4))).toEqual(['1:snapshot:shows t3', '2:snapshot:shows nothing']);
  });

  it('an event its snapshot already holds is not posted again, yet its session still follows it', () => {
    const posted: ToWebviewMessage[] = [];
    const post = (m: ToWebviewMessage) => {
      posted.push(m);
      return true;
    };
    const conn = new ViewConnection('v1', 'sidebar', post, new MemoryLogger());
    const snapshot = (): Omit<SnapshotMessage, 'seq'> => ({ type: 'snapshot', transcript: null, config: CONFIG });
    // The snapshot holds the task's first 3 events (its `done` among them); the queue delivers them late.
    conn.connect({ snapshot, coverage: () => ({ taskId: 't1', seq: 3 }), readinessChanged: () => undefined }, { taskId: 't1', settled: false });
    conn.ready();
    conn.sendTaskEvent({ type: 'text', taskId: 't1', delta: 'held' }, 2);
    conn.sendTaskEvent({ type: 'done', taskId: 't1', status: 'completed', stopReason: 'end_turn' }, 3);
    expect(summary(posted)).toEqual(['1:snapshot:demo model']);
    expect(conn.state).toBe('completed');
    conn.sendTaskEvent({ type: 'text', taskId: 't1', delta: 'new' }, 4);
    expect(summary(posted)).toEqual(['1:snapshot:demo model', '2:event:new']);
  });

  it('a disposed view gets nothing and accepts nothing', () => {
    const { conn, posted, readinessChanges } = view();
    conn.ready();
    conn.dispose();
    conn.send({ type: 'error', message: 'late' });
    conn.ready();
    expect(conn.state).toBe('destroyed');
    expect(conn.receive({ type: 'ready' })).toBeUndefined();
    expect(summary(posted)).toEqual(['1:snapshot:shows nothing']);
    expect(readinessChanges()).toBe(2);
    expect(() => conn.dispose()).not.toThrow();
  });
});
