import type { Duplex } from 'node:stream';
import { createActor, fromCallback, type Actor, type EventObject, type InspectionEvent } from 'xstate';
import { ActorWiring } from '../machines/actorWiring';
import { ipcConnectionMachine, type IpcConnectionEvent } from '../machines/ipcConnection/ipcConnection.machine';
import { MessageChannel } from './channel';
import { envelopeSchema, type Envelope } from './rpc';

/**
 * The ipcConnection machine with its real actors for one worker: `attach` waits for the host's
 * end of the worker's inherited channel (handed over by the launcher through `IpcChannelDoor`),
 * `channel` is the NDJSON connection over it (MessageChannel: validated on receipt, bounded,
 * paused when the worker floods). No socket is served anywhere: no other process can join.
 */
export interface IpcLimits {
  maxLineBytes: number;
  highWater?: number;
}

type ChannelStatsListener = (stats: MessageChannel<Envelope, Envelope>['stats']) => void;

/** One connection's own: its limits, its statistics listener, and the stream the launcher hands over. */
interface IpcWiring {
  limits: IpcLimits;
  onStats: ChannelStatsListener | undefined;
  stream: Duplex | null;
  failure: string | null;
  /** Set while `attach` waits: called when the stream (or its failure) arrives. */
  wake: (() => void) | null;
}

/** Where the launcher hands a worker's channel to its connection (once). */
export interface IpcChannelDoor {
  /** The host's end of the worker's channel. A second call destroys the stream it is given. */
  attach(stream: Duplex): void;
  /** No channel will come (the process could not be started). */
  fail(reason: string): void;
}

/** The two actors, reading their connection's wiring through `wiringOf` (by the actor's system). */
function ipcActors(wiringOf: (system: object) => IpcWiring) {
  return {
    attach: fromCallback<EventObject, { workerId: string }>(({ sendBack, system }) => {
      const wiring = wiringOf(system);
      let live = true;
      const check = () => {
        if (!live) return;
        if (wiring.stream) sendBack({ type: 'ATTACHED' } satisfies IpcConnectionEvent);
        else if (wiring.failure !== null) sendBack({ type: 'ATTACH_FAILED', reason: wiring.failure } satisfies IpcConnectionEvent);
        else return;
        wiring.wake = null;
      };
      wiring.wake = check;
      check();
      return () => {
        live = false;
        if (wiring.wake === check) wiring.wake = null;
      };
    }),
    channel: fromCallback<EventObject, { workerId: string }>(({ sendBack, receive, system }) => {
      const { stream, limits, onStats } = wiringOf(system);
      if (!stream) {
        sendBack({ type: 'PEER_CLOSED' } satisfies IpcConnectionEvent);
        return () => undefined;
      }
      let live = true;
      const channel = new MessageChannel<Envelope, Envelope>(stream, {
        schema: envelopeSchema,
        maxLineBytes: limits.maxLineBytes,
        ...(limits.highWater ? { highWater: limits.highWater } : {}),
        onMessage: (message) => {
          if (live) sendBack({ type: 'RECEIVED', message } satisfies IpcConnectionEvent);
        },
        onBroken: (reason) => {
          if (live) sendBack({ type: 'VIOLATION', reason } satisfies IpcConnectionEvent);
          live = false;
        },
        onClose: () => {
          if (live) sendBack({ type: 'PEER_CLOSED' } satisfies IpcConnectionEvent);
          live = false;
          onStats?.(channel.stats);
        },
      });
      receive((event) => {
        const e = event as IpcConnectionEvent;
        if (e.type === 'SEND') channel.send(e.message);
      });
      return () => {
        live = false;
        onStats?.(channel.stats);
        channel.destroy();
      };
    }),
  };
}

const connections = new ActorWiring<IpcWiring>('the worker connection');
/** Provided once per process: each connection's actors find their own wiring by their actor's system. */
const sharedIpcConnectionMachine = ipcConnectionMachine.provide({ actors: ipcActors((system) => connections.of(system)) });

export type IpcConnectionActor = Actor<typeof sharedIpcConnectionMachine>;

/**
 * An ipcConnection actor (not started) for worker `workerId`'s channel, with `limits`, on the
 * machine every connection of this process shares (building a machine per connection was a large
 * part of starting a worker; actorWiring.ts), and the door its launcher hands the channel through.
 * A stream handed over while the connection is not waiting for one (it was closed) is destroyed.
 */
export function openIpcConnection(
  workerId: string,
  limits: IpcLimits,
  onStats?: ChannelStatsListener,
  inspect?: (event: InspectionEvent) => void,
): { actor: IpcConnectionActor; door: IpcChannelDoor } {
  const actor = createActor(sharedIpcConnectionMachine, { input: { workerId }, ...(inspect ? { inspect } : {}) });
  const wiring: IpcWiring = { limits, onStats, stream: null, failure: null, wake: null };
  connections.bind(actor, wiring);
  const door: IpcChannelDoor = {
    attach(stream) {
      // Only a connection waiting for its channel takes one (not one closed before it came).
      if (wiring.stream || wiring.failure !== null || actor.getSnapshot().status !== 'active' || actor.getSnapshot().value !== 'connecting') {
        stream.destroy();
        return;
      }
      wiring.stream = stream;
      wiring.wake?.();
    },
    fail(reason) {
      if (wiring.stream || wiring.failure !== null) return;
      wiring.failure = reason;
      wiring.wake?.();
    },
  };
  return { actor, door };
}
