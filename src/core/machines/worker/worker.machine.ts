import { assign, emit, enqueueActions, fromCallback, sendTo, setup, type EventObject } from 'xstate';

/**
 * One worker process, as its host sees it:
 * starting → ready → busy → ready; ready | busy → shuttingDown → dead; starting → dead when the
 * process cannot start or says nothing within `readyTimeoutMs`; ready | busy → dead when it
 * crashes, drops its connection, breaks the protocol or leaves a health check unanswered.
 * A cancelled query keeps the worker `busy.cancelling` until the worker answers it; one that does
 * not answer within `shutdownGraceMs` is killed (dead), so a cancel always really stops.
 * `shuttingDown` asks for a graceful stop and kills the process group after the grace period.
 * Every state entered emits its event (`worker:ready`, `worker:busy`, `worker:idle`,
 * `worker:crashed`, `worker:stopped`) for the pool. The I/O is in two root actors provided by the
 * pool: `process` (the child process and its socket) and `healthClock` (when to check).
 */
export interface WorkerInput {
  workerId: string;
  readyTimeoutMs: number;
  shutdownGraceMs: number;
}

export interface WorkerContext extends WorkerInput {
  pid: number | null;
  queryId: string | null;
  queriesProcessed: number;
  startedAt: number;
  lastActivityAt: number;
  /** Why it died (null while alive). */
  reason: string | null;
}

export type WorkerEvent =
  /** From `process`: the worker said `ready`. */
  | { type: 'READY'; pid: number }
  /** From `process`: the child exited (`code`/`signal` as Node reports them). */
  | { type: 'EXITED'; code: number | null; signal: string | null }
  /** From `process`: the connection went down (`broken`: a protocol violation). */
  | { type: 'DISCONNECTED'; reason: string; broken: boolean }
  /** From `process`: the child could not be started, or its socket not served. */
  | { type: 'SPAWN_FAILED'; reason: string }
  /** From `healthClock`: time to check. */
  | { type: 'HEALTH_DUE' }
  /** From `process`: the answer to a health check. */
  | { type: 'HEALTH_OK' }
  /** From `healthClock`: a check went unanswered for the answer limit, and the worker sent nothing else either. */
  | { type: 'HEALTH_TIMEOUT'; ms: number }
  /** From the pool: run this query. */
  | { type: 'ASSIGN'; queryId: string }
  /** From `process`: the worker answered the query (complete or error). */
  | { type: 'QUERY_DONE'; queryId: string }
  /** From the query's owner: stop the query. */
  | { type: 'CANCEL_QUERY'; queryId: string }
  /** From the pool: stop (graceful) or kill now. */
  | { type: 'SHUTDOWN'; graceful: boolean; reason: string };

export type WorkerEmitted =
  | { type: 'worker:ready'; workerId: string; pid: number }
  | { type: 'worker:busy'; workerId: string; queryId: string }
  | { type: 'worker:idle'; workerId: string; queriesProcessed: number }
  | { type: 'worker:crashed'; workerId: string; reason: string; queryId: string | null }
  | { type: 'worker:stopped'; workerId: string; reason: string };

/** A transition to `dead` that records why and tells the pool the worker crashed. */
const crash = (reason: (e: WorkerEvent) => string) => ({
  target: '#worker.dead' as const,
  actions: [{ type: 'died' as const, params: ({ event }: { event: WorkerEvent }) => ({ reason: reason(event) }) }, 'announceCrash' as const],
});

const exitText = (e: WorkerEvent) => (e.type === 'EXITED' ? `the worker process exited (${e.signal ? `signal ${e.signal}` : `code ${e.code}`})` : '');

/**
 * What a live worker (ready or busy) does alike: answers the health clock, dies on an exit, a
 * broken connection or an unanswered health check, and shuts down on request (gracefully, or at
 * once). Defined once and shared by both states, so they cannot drift apart.
 */
const whileLive = {
  HEALTH_DUE: { actions: { type: 'checkHealth' as const, params: { busy: false } } },
  HEALTH_OK: { actions: 'healthAnswered' as const },
  HEALTH_TIMEOUT: crash((e) => (e.type === 'HEALTH_TIMEOUT' ? `the worker did not answer a health check, or send anything, within ${e.ms} ms` : '')),
  EXITED: crash(exitText),
  DISCONNECTED: crash((e) => (e.type === 'DISCONNECTED' ? e.reason : '')),
  SHUTDOWN: [
    { guard: 'graceful' as const, target: '#worker.shuttingDown' as const, actions: 'recordReason' as const },
    { target: '#worker.dead' as const, actions: 'recordReason' as const },
  ],
};

export const workerMachine = setup({
  types: {
    context: {} as WorkerContext,
    input: {} as WorkerInput,
    events: {} as WorkerEvent,
    emitted: {} as WorkerEmitted,
  },
  actors: {
    /**
     * Spawns the worker and serves its socket; sends READY, EXITED, DISCONNECTED, SPAWN_FAILED,
     * HEALTH_OK and QUERY_DONE; takes SEND_* commands. Stopping it kills the process group if it
     * is still alive. Provided by the pool.
     */
    process: fromCallback<EventObject, { workerId: string }>(({ sendBack }) => {
      sendBack({ type: 'SPAWN_FAILED', reason: 'no worker process wired' });
    }),
    /** Sends HEALTH_DUE every interval; after SENT, HEALTH_TIMEOUT unless ANSWERED (or anything else from the worker) comes within the answer limit. Provided by the pool. */
    healthClock: fromCallback<EventObject, { workerId: string }>(() => () => undefined),
  },
  guards: {
    graceful: ({ event }) => event.type === 'SHUTDOWN' && event.graceful,
  },
  actions: {
    died: assign((_, p: { reason: string }) => ({ reason: p.reason })),
    /** Asks the worker; `busy`: the clock allows a worker running a query longer to answer (the pool's `busyHealthAnswerMs`). */
    checkHealth: enqueueActions(({ enqueue }, p: { busy: boolean }) => {
      enqueue.sendTo('process', { type: 'SEND_HEALTH_CHECK' });
      enqueue.sendTo('healthClock', { type: 'SENT', busy: p.busy });
    }),
    healthAnswered: sendTo('healthClock', { type: 'ANSWERED' }),
    recordReason: assign({ reason: ({ event }) => (event.type === 'SHUTDOWN' ? event.reason : null) }),
    announceCrash: emit(({ context }) => ({ type: 'worker:crashed', workerId: context.workerId, reason: context.reason ?? 'unknown', queryId: context.queryId }) as const),
  },
  delays: {
    readyTimeout: ({ context }) => context.readyTimeoutMs,
    shutdownGrace: ({ context }) => context.shutdownGraceMs,
  },
}).createMachine({
  id: 'worker',
  context: ({ input }) => ({ ...input, pid: null, queryId: null, queriesProcessed: 0, startedAt: Date.now(), lastActivityAt: Date.now(), reason: null }),
  invoke: [
    { id: 'process', src: 'process', input: ({ context }) => ({ workerId: context.workerId }) },
    { id: 'healthClock', src: 'healthClock', input: ({ context }) => ({ workerId: context.workerId }) },
  ],
  initial: 'starting',
  states: {
    starting: {
      after: { readyTimeout: crash((_e) => 'the worker did not become ready in time') },
      on: {
        READY: {
          target: 'ready',
          actions: [
            assign({ pid: ({ event }) => event.pid, lastActivityAt: () => Date.now() }),
            emit(({ context, event }) => ({ type: 'worker:ready', workerId: context.workerId, pid: event.pid }) as const),
          ],
        },
        SPAWN_FAILED: crash((e) => (e.type === 'SPAWN_FAILED' ? `the worker could not start: ${e.reason}` : '')),
        EXITED: crash(exitText),
        DISCONNECTED: crash((e) => (e.type === 'DISCONNECTED' ? e.reason : '')),
        SHUTDOWN: { target: 'dead', actions: assign({ reason: ({ event }) => event.reason }) },
      },
    },
    ready: {
      on: {
        ASSIGN: {
          target: 'busy',
          actions: [
            assign({ queryId: ({ event }) => event.queryId, lastActivityAt: () => Date.now() }),
            emit(({ context, event }) => ({ type: 'worker:busy', workerId: context.workerId, queryId: event.queryId }) as const),
          ],
        },
        ...whileLive,
      },
    },
    busy: {
      initial: 'working',
      on: {
        QUERY_DONE: {
          guard: ({ context, event }) => context.queryId === event.queryId,
          target: 'ready',
          actions: [
            assign({ queryId: null, queriesProcessed: ({ context }) => context.queriesProcessed + 1, lastActivityAt: () => Date.now() }),
            emit(({ context }) => ({ type: 'worker:idle', workerId: context.workerId, queriesProcessed: context.queriesProcessed }) as const),
          ],
        },
        ...whileLive,
        HEALTH_DUE: { actions: { type: 'checkHealth', params: { busy: true } } },
      },
      states: {
        working: {
          on: {
            CANCEL_QUERY: {
              guard: ({ context, event }) => context.queryId === event.queryId,
              target: 'cancelling',
              actions: sendTo('process', ({ event }) => ({ type: 'SEND_CANCEL', queryId: event.queryId })),
            },
          },
        },
        /** The worker was told to stop the query; it must answer within the grace period. */
        cancelling: {
          after: { shutdownGrace: crash((_e) => 'the worker did not stop a cancelled query within the grace period') },
        },
      },
    },
    shuttingDown: {
      entry: sendTo('process', { type: 'SEND_SHUTDOWN' }),
      after: { shutdownGrace: { target: 'dead', actions: assign({ reason: ({ context }) => `${context.reason ?? 'shut down'}; killed after the grace period` }) } },
      on: {
        EXITED: 'dead',
        // The socket closes just before the process exits; the exit (or the grace period) ends it.
        DISCONNECTED: {},
      },
    },
    dead: {
      type: 'final',
      entry: [
        // Stopping the root actors kills the process group if anything of it is still alive.
        emit(({ context }) => ({ type: 'worker:stopped', workerId: context.workerId, reason: context.reason ?? 'stopped' }) as const),
      ],
    },
  },
});
