import { assign, setup } from 'xstate';

/**
 * A session is one view (the sidebar, an editor tab) attached to a task. It only decides what the
 * view is shown: a snapshot when it (re)appears, deltas while it is active, nothing while it is
 * paused. Contract: no transition of a session sends anything to its task; attaching, hiding,
 * detaching or destroying a view never starts, stops or cancels the task it shows.
 *
 * new → active (ATTACH) ⇄ paused (HIDE / SHOW); active → inactive (DETACH: the view shows no task);
 * active → completed (TASK_SETTLED: the task is done, the view still shows it); paused → timeout
 * after `idleTimeout` hidden (the view's buffered deltas are dropped; SHOW resyncs with a
 * snapshot); any → destroyed (DISPOSE).
 */
export interface SessionContext {
  viewId: string;
  taskId: string | null;
  /** Snapshots sent to the view so far (each (re)appearance gets one). */
  snapshots: number;
}

export type SessionEvent =
  | { type: 'ATTACH'; taskId: string }
  | { type: 'DETACH' }
  | { type: 'HIDE' }
  | { type: 'SHOW' }
  | { type: 'TASK_SETTLED' }
  | { type: 'TASK_RESUMED' }
  | { type: 'DISPOSE' };

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as { viewId: string; idleTimeoutMs?: number },
  },
  actions: {
    /** Sends the view a snapshot of its task (provided by the host). */
    sendSnapshot: (_: unknown, _p: { viewId: string; taskId: string | null }) => {},
    /** Drops the deltas buffered for a hidden view (provided by the host). */
    dropBuffered: (_: unknown, _p: { viewId: string }) => {},
    countSnapshot: assign({ snapshots: ({ context }) => context.snapshots + 1 }),
  },
  delays: {
    idleTimeout: 30 * 60_000,
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({ viewId: input.viewId, taskId: null, snapshots: 0 }),
  initial: 'new',
  on: { DISPOSE: '.destroyed' },
  states: {
    new: {
      on: {
        ATTACH: { target: 'active', actions: assign({ taskId: ({ event }) => event.taskId }) },
        DETACH: 'inactive',
      },
    },
    active: {
      entry: [{ type: 'sendSnapshot', params: ({ context }) => ({ viewId: context.viewId, taskId: context.taskId }) }, 'countSnapshot'],
      on: {
        HIDE: 'paused',
        DETACH: { target: 'inactive', actions: assign({ taskId: null }) },
        ATTACH: { target: 'active', reenter: true, actions: assign({ taskId: ({ event }) => event.taskId }) },
        TASK_SETTLED: 'completed',
      },
    },
    paused: {
      after: { idleTimeout: 'timeout' },
      on: {
        SHOW: 'active',
        ATTACH: { target: 'paused', reenter: true, actions: assign({ taskId: ({ event }) => event.taskId }) },
        DETACH: { actions: assign({ taskId: null }) },
      },
    },
    inactive: {
      entry: [{ type: 'sendSnapshot', params: ({ context }) => ({ viewId: context.viewId, taskId: null }) }, 'countSnapshot'],
      on: {
        ATTACH: { target: 'active', actions: assign({ taskId: ({ event }) => event.taskId }) },
        HIDE: 'paused',
      },
    },
    completed: {
      on: {
        TASK_RESUMED: 'active',
        ATTACH: { target: 'active', actions: assign({ taskId: ({ event }) => event.taskId }) },
        DETACH: { target: 'inactive', actions: assign({ taskId: null }) },
        HIDE: 'paused',
      },
    },
    timeout: {
      entry: { type: 'dropBuffered', params: ({ context }) => ({ viewId: context.viewId }) },
      on: {
        SHOW: 'active',
        ATTACH: { target: 'timeout', reenter: true, actions: assign({ taskId: ({ event }) => event.taskId }) },
      },
    },
    destroyed: { type: 'final' },
  },
});
