import { errorMessage } from '../../../shared/domain/errors';
import { assign, fromPromise, setup } from 'xstate';

/**
 * The lifetime of one host process (an extension window, a `keel run`), after Claude Code's
 * session lifecycle: init (load settings) → auth (is there a usable key for the provider?) →
 * active.{idle, querying, compacting} → saving (record what must survive) → exit.
 *
 * - Settings that cannot be loaded at all (the CLI's bad usage, an unusable store) end the
 *   session at once: init → exit, with `startupProblem`; nothing ran, so nothing is saved.
 * - A missing key is not a crash: auth waits in `auth.missing` until SET_KEY or another provider.
 *   A host may still run a query then (QUERY_STARTED): the task reports the missing key itself,
 *   where the person can act on it, and the key is checked again once the session is idle.
 * - The provider may change at any time; a running query keeps its own, and the new one is
 *   checked as soon as the session is idle.
 * - EXIT from any state saves first (once) and always ends in `exit`, whether saving worked or not.
 */
export interface AppSessionContext {
  provider: string;
  /** The provider whose key the last check accepted (null: none yet, or it changed since). */
  checkedProvider: string | null;
  activeQueries: number;
  authProblem: string | null;
  /** Why the session ended before it began (init could not load the settings). */
  startupProblem: string | null;
}

export type AppSessionEvent =
  | { type: 'SET_KEY' }
  | { type: 'PROVIDER_CHANGED'; provider: string }
  | { type: 'QUERY_STARTED' }
  | { type: 'QUERY_SETTLED' }
  | { type: 'COMPACTION_STARTED' }
  | { type: 'COMPACTION_DONE' }
  | { type: 'EXIT' };

export const appSessionMachine = setup({
  types: {
    context: {} as AppSessionContext,
    events: {} as AppSessionEvent,
    input: {} as { provider: string },
  },
  actors: {
    /** Loads the host's settings (provided by the host); resolves with the provider to use, rejects when the host cannot run. */
    loadSettings: fromPromise<{ provider?: string }, void>(async () => ({})),
    /** Resolves when the provider can be used (a key is present or not needed); rejects with why not. */
    checkAuth: fromPromise<void, { provider: string }>(async () => undefined),
    /** Records what must survive the process (provided by the host: unsettled tasks as interrupted, logs closed). */
    save: fromPromise<void, void>(async () => undefined),
  },
  actions: {
    countStarted: assign({ activeQueries: ({ context }) => context.activeQueries + 1 }),
    countSettled: assign({ activeQueries: ({ context }) => Math.max(0, context.activeQueries - 1) }),
    takeProvider: assign({ provider: ({ context, event }) => (event.type === 'PROVIDER_CHANGED' ? event.provider : context.provider) }),
  },
  guards: {
    noQueriesLeft: ({ context }) => context.activeQueries <= 1,
    providerUnchecked: ({ context }) => context.checkedProvider !== context.provider,
  },
}).createMachine({
  id: 'appSession',
  context: ({ input }) => ({ provider: input.provider, checkedProvider: null, activeQueries: 0, authProblem: null, startupProblem: null }),
  initial: 'init',
  on: { EXIT: '.saving' },
  states: {
    init: {
      invoke: {
        src: 'loadSettings',
        onDone: { target: 'auth', actions: assign({ provider: ({ context, event }) => event.output.provider || context.provider }) },
        onError: { target: 'exit', actions: assign({ startupProblem: ({ event }) => errorMessage(event.error) }) },
      },
    },
    auth: {
      initial: 'checking',
      on: {
        PROVIDER_CHANGED: { target: '.checking', actions: 'takeProvider' },
        // Running without a usable key: the task says what is missing (and how to fix it).
        QUERY_STARTED: { target: '#appSession.active.querying', actions: 'countStarted' },
      },
      states: {
        checking: {
          invoke: {
            src: 'checkAuth',
            input: ({ context }) => ({ provider: context.provider }),
            onDone: { target: '#appSession.active', actions: assign({ authProblem: null, checkedProvider: ({ context }) => context.provider }) },
            onError: { target: 'missing', actions: assign({ authProblem: ({ event }) => errorMessage(event.error), checkedProvider: null }) },
          },
        },
        missing: { on: { SET_KEY: 'checking' } },
      },
    },
    active: {
      initial: 'idle',
      on: { PROVIDER_CHANGED: { actions: 'takeProvider' } },
      states: {
        idle: {
          // A provider changed (or never accepted) while queries ran is checked now.
          always: { guard: 'providerUnchecked', target: '#appSession.auth' },
          on: { QUERY_STARTED: { target: 'querying', actions: 'countStarted' } },
        },
        querying: {
          on: {
            QUERY_STARTED: { actions: 'countStarted' },
            QUERY_SETTLED: [{ guard: 'noQueriesLeft', target: 'idle', actions: assign({ activeQueries: 0 }) }, { actions: 'countSettled' }],
            COMPACTION_STARTED: 'compacting',
          },
        },
        compacting: {
          on: {
            COMPACTION_DONE: 'querying',
            // Another task's query may start or end meanwhile; the compacting one is still running.
            QUERY_STARTED: { actions: 'countStarted' },
            QUERY_SETTLED: { actions: 'countSettled' },
          },
        },
      },
    },
    saving: {
      invoke: { src: 'save', onDone: 'exit', onError: 'exit' },
      // Saving runs once, however many times the host is told to end.
      on: { EXIT: { actions: [] } },
    },
    exit: { type: 'final' },
  },
});
