import { assign, setup } from 'xstate';

/**
 * A session is one view (the sidebar, an editor tab) showing the chat: its page, which task it
 * shows, and whether what the host sends reaches it now. The host's outbox for the view follows
 * the state (see `deliveryOf`): a view that is `active`, `completed` or `inactive` has a loaded page
 * and gets each message as it comes; `new` and `paused` keep what a snapshot does not cover until
 * the page says READY; `timeout` keeps nothing (its page will get a snapshot, which holds what
 * matters).
 *
 * Contract: no transition of a session sends anything to its task; attaching, hiding, detaching
 * or destroying a view never starts, stops or cancels the task it shows (navigation only pauses
 * the session). Each READY opens a new page: `openPage` numbers from 1 again with a snapshot,
 * then what was kept. Showing another task (ATTACH, DETACH) while the page is loaded sends a
 * snapshot (`sendSnapshot`); while it is not, only the next page's snapshot shows it.
 *
 * new ─READY→ active | completed | inactive (by what the view shows); HIDE or a message that
 * could not be delivered → paused (the page is gone) ─READY→ back; paused ─idleTimeout→ timeout
 * (what was kept is dropped); active ─TASK_SETTLED→ completed ─TASK_RESUMED→ active; DETACH →
 * inactive; ATTACH → active | completed; any ─DISPOSE→ destroyed.
 */
export interface SessionContext {
  viewId: string;
  /** The task the view shows, or null for the empty chat. */
  taskId: string | null;
  /** Whether that task has settled (its last run ended); a settled task is `completed` here. */
  taskSettled: boolean;
  /** Pages opened so far (one per READY): a failed delivery to an older page changes nothing. */
  pages: number;
}

export type SessionEvent =
  /** The view's page (re)loaded and asks for its state (the webview's `ready`). */
  | { type: 'READY' }
  /** The view was hidden: its page is destroyed until the view is shown again and says READY. */
  | { type: 'HIDE' }
  /** A message to page `page` was not delivered (the page went away without HIDE). */
  | { type: 'UNDELIVERED'; page: number }
  /** The view shows task `taskId` from now on (`settled`: it is not running now). */
  | { type: 'ATTACH'; taskId: string; settled: boolean }
  /** The view shows no task (the empty chat). */
  | { type: 'DETACH' }
  | { type: 'TASK_SETTLED' }
  | { type: 'TASK_RESUMED' }
  /** The view is closed for good. */
  | { type: 'DISPOSE' };

/** What the host does with a message for a view in a given session state. */
export type Delivery = 'post' | 'keep' | 'drop';

/** Post when the page is loaded; keep until the next page while it loads or is hidden; drop after the idle timeout. */
export function deliveryOf(state: string): Delivery {
  switch (state) {
    case 'active':
    case 'completed':
    case 'inactive':
      return 'post';
    case 'new':
    case 'paused':
      return 'keep';
    default:
      return 'drop';
  }
}

type ViewParams = { viewId: string; taskId: string | null };
const viewParams = ({ context }: { context: SessionContext }): ViewParams => ({ viewId: context.viewId, taskId: context.taskId });

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as { viewId: string },
  },
  actions: {
    /** A new page: numbering restarts, the snapshot of `taskId` goes first, then what was kept (provided by the host). */
    openPage: (_: unknown, _p: ViewParams) => {},
    /** The loaded page now shows `taskId` (or nothing): a snapshot, numbered on (provided by the host). */
    sendSnapshot: (_: unknown, _p: ViewParams) => {},
    /** Drops what was kept for a view hidden too long (provided by the host). */
    dropBuffered: (_: unknown, _p: { viewId: string }) => {},
    countPage: assign({ pages: ({ context }) => context.pages + 1 }),
    attach: assign({
      taskId: ({ event }) => (event.type === 'ATTACH' ? event.taskId : null),
      taskSettled: ({ event }) => event.type === 'ATTACH' && event.settled,
    }),
    detach: assign({ taskId: null, taskSettled: false }),
    settle: assign({ taskSettled: true }),
    resume: assign({ taskSettled: false }),
  },
  guards: {
    // What the view shows after the event: an ATTACH says so itself, a READY by what was shown.
    showsNoTask: ({ context }) => context.taskId === null,
    showsSettledTask: ({ context, event }) => (event.type === 'ATTACH' ? event.settled : context.taskSettled),
    currentPage: ({ context, event }) => event.type === 'UNDELIVERED' && event.page === context.pages,
  },
  delays: {
    /** How long a hidden view keeps what its next page must be sent besides the snapshot. */
    idleTimeout: 30 * 60_000,
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({ viewId: input.viewId, taskId: null, taskSettled: false, pages: 0 }),
  initial: 'new',
  on: { DISPOSE: '.destroyed' },
  states: {
    new: {
      on: { ...noPage(), HIDE: 'paused' },
    },
    active: {
      on: {
        ...loadedPage(),
        TASK_SETTLED: { target: 'completed', actions: 'settle' },
      },
    },
    completed: {
      on: {
        ...loadedPage(),
        TASK_RESUMED: { target: 'active', actions: 'resume' },
      },
    },
    inactive: {
      on: loadedPage(),
    },
    paused: {
      after: { idleTimeout: 'timeout' },
      on: noPage(),
    },
    timeout: {
      entry: { type: 'dropBuffered', params: ({ context }) => ({ viewId: context.viewId }) },
      on: noPage(),
    },
    destroyed: { type: 'final' },
  },
});

/** A page opens: the state that matches what the view shows (no task, a settled one, a running one). */
function shown<A>(actions: A) {
  return [
    { guard: 'showsNoTask' as const, target: '#session.inactive', actions },
    { guard: 'showsSettledTask' as const, target: '#session.completed', actions },
    { target: '#session.active', actions },
  ];
}

/**
 * A loaded page: READY (the page reloaded by itself) opens a new page in the same state; another
 * task shown gets a snapshot; the page going (hidden, a failed post) pauses the view.
 */
function loadedPage() {
  const attachActions = ['attach', { type: 'sendSnapshot', params: viewParams }] as const;
  return {
    READY: { actions: ['countPage', { type: 'openPage', params: viewParams }] as const },
    ATTACH: [
      { guard: 'showsSettledTask', target: '#session.completed', actions: attachActions },
      { target: '#session.active', actions: attachActions },
    ],
    DETACH: { target: '#session.inactive', actions: ['detach', { type: 'sendSnapshot', params: viewParams }] as const },
    HIDE: '#session.paused',
    UNDELIVERED: { guard: 'currentPage', target: '#session.paused' },
  } as const;
}

/** No page (hidden, or hidden too long): READY opens one; what the view shows is only remembered. */
function noPage() {
  return {
    READY: shown(['countPage', { type: 'openPage', params: viewParams }] as const),
    ATTACH: { actions: 'attach' },
    DETACH: { actions: 'detach' },
    TASK_SETTLED: { actions: 'settle' },
    TASK_RESUMED: { actions: 'resume' },
  } as const;
}
