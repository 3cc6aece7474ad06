import { assign, fromPromise, setup } from 'xstate';

/**
 * The lifecycle of one host process (an extension window, a CLI run), after Claude Code's
 * session lifecycle: init (load settings) → auth (is there a usable key for the provider?) →
 * active.{idle, querying, compacting} → saving (flush the store) → exit.
 * A missing key is not a crash: auth waits in `auth.missing` until SET_KEY (or the user switches
 * to a provider that needs none). EXIT from anywhere saves first.
 */
export interface AppSessionContext {
  provider: string;
  activeQueries: number;
  authProblem: string | null;
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
    /** Loads settings (provided by the host). */
    loadSettings: fromPromise<void, void>(async () => undefined),
    /** Resolves when the provider can be used (a key is present or not needed); rejects with why not. */
    checkAuth: fromPromise<void, { provider: string }>(async () => undefined),
    /** Flushes whatever must survive the process (provided by the host: the task store). */
    save: fromPromise<void, void>(async () => undefined),
  },
  guards: {
    noQueriesLeft: ({ context }) => context.activeQueries <= 1,
  },
}).createMachine({
  id: 'appSession',
  context: ({ input }) => ({ provider: input.provider, activeQueries: 0, authProblem: null }),
  initial: 'init',
  on: { EXIT: '.saving' },
  states: {
    init: {
      invoke: { src: 'loadSettings', onDone: 'auth', onError: 'auth' },
    },
    auth: {
      initial: 'checking',
      on: { PROVIDER_CHANGED: { target: '.checking', actions: assign({ provider: ({ event }) => event.provider }) } },
      states: {
        checking: {
          invoke: {
            src: 'checkAuth',
            input: ({ context }) => ({ provider: context.provider }),
            onDone: { target: '#appSession.active', actions: assign({ authProblem: null }) },
            onError: { target: 'missing', actions: assign({ authProblem: ({ event }) => (event.error instanceof Error ? event.error.message : String(event.error)) }) },
          },
        },
        missing: { on: { SET_KEY: 'checking' } },
      },
    },
    active: {
      initial: 'idle',
      on: { PROVIDER_CHANGED: { target: 'auth', actions: assign({ provider: ({ event }) => event.provider }) } },
      states: {
        idle: { on: { QUERY_STARTED: { target: 'querying', actions: assign({ activeQueries: ({ context }) => context.activeQueries + 1 }) } } },
        querying: {
          on: {
            QUERY_STARTED: { actions: assign({ activeQueries: ({ context }) => context.activeQueries + 1 }) },
            QUERY_SETTLED: [
              { guard: 'noQueriesLeft', target: 'idle', actions: assign({ activeQueries: 0 }) },
              { actions: assign({ activeQueries: ({ context }) => context.activeQueries - 1 }) },
            ],
            COMPACTION_STARTED: 'compacting',
          },
        },
        compacting: { on: { COMPACTION_DONE: 'querying' } },
      },
    },
    saving: {
      invoke: { src: 'save', onDone: 'exit', onError: 'exit' },
    },
    exit: { type: 'final' },
  },
});
