import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { appSessionMachine } from '../../../src/core/machines/appSession/appSession.machine';
import { sessionMachine } from '../../../src/core/machines/session/session.machine';

describe('session machine: a view attached to a task', () => {
  function view() {
    const pages: (string | null)[] = [];
    const snapshots: (string | null)[] = [];
    const dropped: string[] = [];
    // The idle timeout runs on a clock the test moves, not on the wall clock.
    const clock = new SimulatedClock();
    const actor = createActor(
      sessionMachine.provide({
        actions: {
          openPage: (_, p) => void pages.push(p.taskId),
          sendSnapshot: (_, p) => void snapshots.push(p.taskId),
          dropBuffered: (_, p) => void dropped.push(p.viewId),
        },
        delays: { idleTimeout: 5 },
      }),
      { input: { viewId: 'sidebar' }, clock },
    );
    actor.start();
    return { actor, pages, snapshots, dropped, clock };
  }

  it('each page the view loads gets a snapshot; hiding sends nothing', () => {
    const { actor, pages } = view();
    actor.send({ type: 'ATTACH', taskId: 't1', settled: false });
    expect(pages).toEqual([]);
    actor.send({ type: 'READY' });
    actor.send({ type: 'HIDE' });
    expect(actor.getSnapshot().value).toBe('paused');
    actor.send({ type: 'READY' });
    expect(actor.getSnapshot().value).toBe('active');
    expect(pages).toEqual(['t1', 't1']);
    expect(actor.getSnapshot().context.pages).toBe(2);
  });

  it('switching tasks sends a loaded page the new snapshot; detaching shows none', () => {
    const { actor, snapshots } = view();
    actor.send({ type: 'READY' });
    actor.send({ type: 'ATTACH', taskId: 't1', settled: false });
    actor.send({ type: 'ATTACH', taskId: 't2', settled: true });
    expect(actor.getSnapshot().value).toBe('completed');
    actor.send({ type: 'DETACH' });
    expect(snapshots).toEqual(['t1', 't2', null]);
    expect(actor.getSnapshot().value).toBe('inactive');
  });

  it('a view hidden past the idle timeout drops what it kept and resyncs on its next page', async () => {
    const { actor, dropped, clock } = view();
    actor.send({ type: 'ATTACH', taskId: 't1', settled: false });
    actor.send({ type: 'READY' });
    actor.send({ type: 'HIDE' });
    clock.increment(4);
    expect(actor.getSnapshot().value).toBe('paused');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('timeout');
    expect(dropped).toEqual(['sidebar']);
    actor.send({ type: 'READY' });
    expect(actor.getSnapshot().value).toBe('active');
  });

  it('a failed delivery pauses the view only when it was to the current page', () => {
    const { actor } = view();
    actor.send({ type: 'READY' });
    actor.send({ type: 'READY' });
    actor.send({ type: 'UNDELIVERED', page: 1 });
    expect(actor.getSnapshot().value).toBe('inactive');
    actor.send({ type: 'UNDELIVERED', page: 2 });
    expect(actor.getSnapshot().value).toBe('paused');
  });

  it('task completion and disposal are states of the view only', () => {
    const { actor } = view();
    actor.send({ type: 'ATTACH', taskId: 't1', settled: false });
    actor.send({ type: 'READY' });
    actor.send({ type: 'TASK_SETTLED' });
    expect(actor.getSnapshot().value).toBe('completed');
    actor.send({ type: 'TASK_RESUMED' });
    expect(actor.getSnapshot().value).toBe('active');
    actor.send({ type: 'DISPOSE' });
    expect(actor.getSnapshot().status).toBe('done');
  });
});

describe('app session lifecycle', () => {
  it('waits for a key instead of failing, then runs queries and saves on exit', async () => {
    let hasKey = false;
    let saved = 0;
    const actor = createActor(
      appSessionMachine.provide({
        actors: {
          checkAuth: fromPromise(async () => {
            if (!hasKey) throw new Error('No Anthropic API key is set.');
          }),
          save: fromPromise<void, void>(async () => {
            saved++;
          }),
        },
      }),
      { input: { provider: 'anthropic' } },
    );
    actor.start();
    await new Promise((r) => setTimeout(r, 0));
    expect(actor.getSnapshot().value).toEqual({ auth: 'missing' });
    expect(actor.getSnapshot().context.authProblem).toContain('API key');
    hasKey = true;
    actor.send({ type: 'SET_KEY' });
    await new Promise((r) => setTimeout(r, 0));
    expect(actor.getSnapshot().value).toEqual({ active: 'idle' });
    actor.send({ type: 'QUERY_STARTED' });
    actor.send({ type: 'QUERY_STARTED' });
    actor.send({ type: 'QUERY_SETTLED' });
    expect(actor.getSnapshot().value).toEqual({ active: 'querying' });
    actor.send({ type: 'QUERY_SETTLED' });
    expect(actor.getSnapshot().value).toEqual({ active: 'idle' });
    actor.send({ type: 'EXIT' });
    await new Promise((r) => setTimeout(r, 0));
    expect(actor.getSnapshot().status).toBe('done');
    expect(saved).toBe(1);
  });
});
