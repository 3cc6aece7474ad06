import { assign, fromCallback, setup, type EventObject } from 'xstate';
import type { ProviderRequest } from '../../providers/types';
import type { StreamOutput } from '../stream/assembly';
import { streamMachine } from '../stream/stream.machine';

/**
 * The call machine guards one provider request with the task's lock:
 * idle → guarded.queued (waiting for the lock) → guarded.locked → guarded.running (the stream
 * machine) → done.
 * A continuation key seen before is a duplicate: it is dropped (`duplicate`) and counted, and no
 * request is sent. A lock that cannot be had in time ends in `timeout`. The lock is held by
 * an actor invoked for the whole of `guarded`, so it is released however that state is left,
 * including when the call actor is stopped (cancel).
 */
export interface CallInput {
  taskId: string;
  request: ProviderRequest;
  /** Identifies this step of the task ("<taskId>:r<run>:c<model calls>:h<history length>:a<attempt>"). */
  continuationKey: string;
  lockTimeoutMs: number;
}

export type CallOutput = StreamOutput | { ok: false; duplicate: true } | { ok: false; timeout: true };

interface CallContext extends CallInput {
  result: CallOutput | null;
}

type CallEvent = { type: 'LOCK_ACQUIRED' } | { type: 'LOCK_FAILED'; reason: string };

export const callMachine = setup({
  types: {
    context: {} as CallContext,
    input: {} as CallInput,
    output: {} as CallOutput,
    events: {} as CallEvent,
  },
  actors: {
    /**
     * Waits for the task lock, sends LOCK_ACQUIRED (or LOCK_FAILED), and holds the lock until it is
     * stopped: leaving `guarded` in any way, including the actor being stopped on cancel,
     * releases it. Provided by the runtime (LockManager).
     */
    holdTaskLock: fromCallback<EventObject, { taskId: string; timeoutMs: number }>(({ sendBack }) => {
      sendBack({ type: 'LOCK_FAILED', reason: 'no lock manager wired' });
    }),
    stream: streamMachine,
  },
  guards: {
    /** True when this continuation was already started (provided by the runtime). */
    isDuplicateContinuation: (_: unknown, _params: { taskId: string; key: string }) => false,
  },
  actions: {
    /** Records the continuation so a second start of it is a duplicate (provided by the runtime). */
    registerContinuation: (_: unknown, _params: { taskId: string; key: string }) => {},
    /** Counts a dropped duplicate (provided by the runtime: LockManager counters). */
    countDuplicate: () => {},
  },
}).createMachine({
  id: 'call',
  context: ({ input }) => ({ ...input, result: null }),
  initial: 'idle',
  states: {
    idle: {
      always: [
        {
          guard: { type: 'isDuplicateContinuation', params: ({ context }) => ({ taskId: context.taskId, key: context.continuationKey }) },
          target: 'duplicate',
          actions: 'countDuplicate',
        },
        {
          target: 'guarded',
          actions: { type: 'registerContinuation', params: ({ context }) => ({ taskId: context.taskId, key: context.continuationKey }) },
        },
      ],
    },
    guarded: {
      invoke: { src: 'holdTaskLock', input: ({ context }) => ({ taskId: context.taskId, timeoutMs: context.lockTimeoutMs }) },
      initial: 'queued',
      states: {
        queued: {
          on: {
            LOCK_ACQUIRED: 'locked',
            LOCK_FAILED: '#call.timeout',
          },
        },
        locked: { always: 'running' },
        running: {
          invoke: {
            src: 'stream',
            input: ({ context }) => ({ taskId: context.taskId, request: context.request }),
            onDone: { target: '#call.done', actions: assign({ result: ({ event }) => event.output }) },
          },
        },
      },
    },
    done: { type: 'final' },
    duplicate: { type: 'final', entry: assign({ result: { ok: false, duplicate: true } }) },
    timeout: { type: 'final', entry: assign({ result: { ok: false, timeout: true } }) },
  },
  output: ({ context }) => context.result ?? { ok: false, timeout: true },
});
