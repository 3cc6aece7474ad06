import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createActor, fromCallback, type Actor, type EventObject, type InspectionEvent } from 'xstate';
import { ActorWiring } from '../machines/actorWiring';
import { ipcConnectionMachine, type IpcConnectionEvent } from '../machines/ipcConnection/ipcConnection.machine';
import { MessageChannel } from './channel';
import type { ToWorker } from './protocol';
import { fromWorkerSchema, type FromWorker } from './protocolFromWorker';

/**
 * The ipcConnection machine with its real actors for one worker: `listen` serves the worker's
 * socket until the worker connects (only the first connection is kept; the folder is 0700, so
 * only this user's processes can connect at all), `channel` is the NDJSON connection
 * (MessageChannel: validated on receipt, bounded, paused when the worker floods).
 */
export interface IpcLimits {
  maxLineBytes: number;
  highWater?: number;
}

type ChannelStatsListener = (stats: MessageChannel<FromWorker, ToWorker>['stats']) => void;

/** One connection's own: its limits, its statistics listener, and the socket `listen` hands to `channel`. */
interface IpcWiring {
  limits: IpcLimits;
  onStats: ChannelStatsListener | undefined;
  accepted: Socket | null;
}

/** The two actors, reading their connection's wiring through `wiringOf` (by the actor's system). */
function ipcActors(wiringOf: (system: object) => IpcWiring) {
  return {
    listen: fromCallback<EventObject, { address: string }>(({ input, sendBack, system }) => {
      const wiring = wiringOf(system);
      let server: Server | null = createServer({ pauseOnConnect: true }, (socket) => {
        if (wiring.accepted || !server) {
          socket.destroy();
          return;
        }
        wiring.accepted = socket;
        const s = server;
        server = null;
        s.close();
        sendBack({ type: 'ACCEPTED' } satisfies IpcConnectionEvent);
      });
      server.on('error', (err) => {
        if (server) sendBack({ type: 'LISTEN_FAILED', reason: `the worker socket could not be served: ${err.message}` } satisfies IpcConnectionEvent);
      });
      server.listen(input.address);
      return () => {
        server?.close();
        server = null;
        if (process.platform !== 'win32') rmSync(input.address, { force: true });
      };
    }),
    channel: fromCallback<EventObject, { address: string }>(({ sendBack, receive, system }) => {
      const { accepted: socket, limits, onStats } = wiringOf(system);
      if (!socket) {
        sendBack({ type: 'PEER_CLOSED' } satisfies IpcConnectionEvent);
        return () => undefined;
      }
      let live = true;
      const channel = new MessageChannel<FromWorker, ToWorker>(socket, {
        schema: fromWorkerSchema,
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
      socket.resume();
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
 * An ipcConnection actor (not started) for the worker socket at `address`, with `limits`, on the
 * machine every connection of this process shares (building a machine per connection was a
 * large part of starting a worker; actorWiring.ts).
 */
export function openIpcConnection(address: string, limits: IpcLimits, onStats?: ChannelStatsListener, inspect?: (event: InspectionEvent) => void): IpcConnectionActor {
  const actor = createActor(sharedIpcConnectionMachine, { input: { address }, ...(inspect ? { inspect } : {}) });
  connections.bind(actor, { limits, onStats, accepted: null });
  return actor;
}
