import { assign, emit, fromCallback, sendTo, setup, type EventObject } from 'xstate';
import type { FromWorker, ToWorker } from '../../workers/protocol';

/**
 * The host's end of one worker's socket: disconnected → connecting (listening for the worker)
 * → connected (NDJSON both ways) → disconnected. A line that breaks the protocol, the peer going
 * away or CLOSE all end in `disconnected`, with the reason kept; nothing is delivered after that.
 * Emits `ipc:connected`, `ipc:message` (each valid message, in order) and `ipc:disconnected`.
 * The I/O is in two actors provided by the pool: `listen` (the socket server, until one peer
 * connects) and `channel` (the connection itself).
 */
export interface IpcConnectionInput {
  /** The socket path (or pipe name) the worker connects to. */
  address: string;
}

interface IpcConnectionContext extends IpcConnectionInput {
  /** Why the connection is down (null until it has been up and went down, or failed to come up). */
  reason: string | null;
  /** True when the peer broke the protocol (a malformed, unknown or oversized message). */
  broken: boolean;
  sent: number;
  received: number;
}

export type IpcConnectionEvent =
  | { type: 'OPEN' }
  | { type: 'CLOSE'; reason: string }
  /** From `listen`: a peer connected. */
  | { type: 'ACCEPTED' }
  /** From `listen`: the socket could not be served. */
  | { type: 'LISTEN_FAILED'; reason: string }
  /** From `channel`: one valid message. */
  | { type: 'RECEIVED'; message: FromWorker }
  /** From `channel`: the peer closed the connection. */
  | { type: 'PEER_CLOSED' }
  /** From `channel`: the peer broke the protocol. */
  | { type: 'VIOLATION'; reason: string }
  | { type: 'SEND'; message: ToWorker };

export type IpcConnectionEmitted =
  | { type: 'ipc:connected' }
  | { type: 'ipc:message'; message: FromWorker }
  | { type: 'ipc:disconnected'; reason: string; broken: boolean };

export const ipcConnectionMachine = setup({
  types: {
    context: {} as IpcConnectionContext,
    input: {} as IpcConnectionInput,
    events: {} as IpcConnectionEvent,
    emitted: {} as IpcConnectionEmitted,
  },
  actors: {
    /** Serves `address` until one peer connects (ACCEPTED) or it cannot (LISTEN_FAILED). Provided by the pool. */
    listen: fromCallback<EventObject, { address: string }>(({ sendBack }) => {
      sendBack({ type: 'LISTEN_FAILED', reason: 'no socket server wired' });
    }),
    /** The connection: sends RECEIVED / PEER_CLOSED / VIOLATION; takes SEND and CLOSE. Provided by the pool. */
    channel: fromCallback<EventObject, { address: string }>(({ sendBack }) => {
      sendBack({ type: 'PEER_CLOSED' });
    }),
  },
}).createMachine({
  id: 'ipcConnection',
  context: ({ input }) => ({ ...input, reason: null, broken: false, sent: 0, received: 0 }),
  initial: 'disconnected',
  states: {
    disconnected: {
      on: { OPEN: { target: 'connecting', actions: assign({ reason: null, broken: false }) } },
    },
    connecting: {
      invoke: { src: 'listen', input: ({ context }) => ({ address: context.address }) },
      on: {
        ACCEPTED: 'connected',
        LISTEN_FAILED: {
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
      invoke: { id: 'channel', src: 'channel', input: ({ context }) => ({ address: context.address }) },
      on: {
        RECEIVED: { actions: [assign({ received: ({ context }) => context.received + 1 }), emit(({ event }) => ({ type: 'ipc:message', message: event.message }) as const)] },
        SEND: { actions: [assign({ sent: ({ context }) => context.sent + 1 }), sendTo('channel', ({ event }) => event)] },
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
