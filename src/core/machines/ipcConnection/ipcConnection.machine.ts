import { assign, emit, fromCallback, setup, type EventObject } from 'xstate';

/**
 * The host's end of one worker's channel: disconnected → connecting (the worker is being started;
 * its channel is not handed over yet) → connected (NDJSON both ways) → disconnected. The channel
 * is the socketpair the worker inherits (workers/spawnWorker.ts, WORKER_CHANNEL_FD): there is no
 * address another process could connect to, so "connecting" waits for the launcher, not for a
 * peer. A line that breaks the protocol, the peer going away or CLOSE all end in `disconnected`,
 * with the reason kept; nothing is delivered after that. Emits `ipc:connected` and
 * `ipc:disconnected`. The I/O is in two actors provided by the pool: `attach` (waits for the
 * launcher's end of the channel) and `channel` (the connection, which lives exactly while the
 * machine is `connected`).
 *
 * The machine holds the connection's lifecycle, not its traffic: the messages go between the
 * channel and its owner's protocol endpoint directly (workers/workerActors.ts, `IpcPeer`), not
 * as an event of this machine each (decided 27 Nov 2026, issue 25: a `SEND` / `RECEIVED` per
 * message was a hop of every message that decided nothing). What it guarantees of the traffic:
 * no message is delivered before `connected` or after it is left.
 */
export interface IpcConnectionInput {
  /** The worker this channel belongs to (for messages). */
  workerId: string;
}

interface IpcConnectionContext extends IpcConnectionInput {
  /** Why the connection is down (null until it has been up and went down, or failed to come up). */
  reason: string | null;
  /** True when the peer broke the protocol (a malformed, unknown or oversized message). */
  broken: boolean;
}

export type IpcConnectionEvent =
  | { type: 'OPEN' }
  | { type: 'CLOSE'; reason: string }
  /** From `attach`: the launcher handed over the host's end of the worker's channel. */
  | { type: 'ATTACHED' }
  /** From `attach`: there will be no channel (the worker could not be started). */
  | { type: 'ATTACH_FAILED'; reason: string }
  /** From `channel`: the peer closed the connection. */
  | { type: 'PEER_CLOSED' }
  /** From `channel`: the peer broke the protocol. */
  | { type: 'VIOLATION'; reason: string };

export type IpcConnectionEmitted =
  | { type: 'ipc:connected' }
  | { type: 'ipc:disconnected'; reason: string; broken: boolean };

export const ipcConnectionMachine = setup({
  types: {
    context: {} as IpcConnectionContext,
    input: {} as IpcConnectionInput,
    events: {} as IpcConnectionEvent,
    emitted: {} as IpcConnectionEmitted,
  },
  actors: {
    /** Waits for the worker's channel (ATTACHED) or its failure to come (ATTACH_FAILED). Provided by the pool. */
    attach: fromCallback<EventObject, { workerId: string }>(({ sendBack }) => {
      sendBack({ type: 'ATTACH_FAILED', reason: 'no launcher wired' });
    }),
    /** The connection: sends PEER_CLOSED / VIOLATION; its messages go to its owner, not here. Provided by the pool. */
    channel: fromCallback<EventObject, { workerId: string }>(({ sendBack }) => {
      sendBack({ type: 'PEER_CLOSED' });
    }),
  },
}).createMachine({
  id: 'ipcConnection',
  context: ({ input }) => ({ ...input, reason: null, broken: false }),
  initial: 'disconnected',
  states: {
    disconnected: {
      on: { OPEN: { target: 'connecting', actions: assign({ reason: null, broken: false }) } },
    },
    connecting: {
      invoke: { src: 'attach', input: ({ context }) => ({ workerId: context.workerId }) },
      on: {
        ATTACHED: 'connected',
        ATTACH_FAILED: {
          target: 'disconnected',
          actions: [
            assign({ reason: ({ event }) => event.reason }),
            emit(({ event }) => ({ type: 'ipc:disconnected', reason: event.reason, broken: false }) as const),
          ],
        },
        CLOSE: {
          target: 'disconnected',
          actions: [
            assign({ reason: ({ event }) => event.reason }),
            emit(({ event }) => ({ type: 'ipc:disconnected', reason: event.reason, broken: false }) as const),
          ],
        },
      },
    },
    connected: {
      entry: emit({ type: 'ipc:connected' }),
      invoke: { id: 'channel', src: 'channel', input: ({ context }) => ({ workerId: context.workerId }) },
      on: {
        PEER_CLOSED: {
          target: 'disconnected',
          actions: [assign({ reason: 'the worker closed the connection' }), emit({ type: 'ipc:disconnected', reason: 'the worker closed the connection', broken: false })],
        },
        VIOLATION: {
          target: 'disconnected',
          actions: [
            assign({ reason: ({ event }) => `protocol violation: ${event.reason}`, broken: true }),
            emit(({ event }) => ({ type: 'ipc:disconnected', reason: `protocol violation: ${event.reason}`, broken: true }) as const),
          ],
        },
        CLOSE: {
          target: 'disconnected',
          actions: [
            assign({ reason: ({ event }) => event.reason }),
            emit(({ event }) => ({ type: 'ipc:disconnected', reason: event.reason, broken: false }) as const),
          ],
        },
      },
    },
  },
});
