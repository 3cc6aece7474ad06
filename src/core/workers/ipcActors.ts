import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { fromCallback, type EventObject } from 'xstate';
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

export function ipcConnectionFor(limits: IpcLimits, onStats?: (stats: MessageChannel<FromWorker, ToWorker>['stats']) => void) {
  // The socket passes from `listen` to `channel` through this holder (one per connection).
  let accepted: Socket | null = null;
  return ipcConnectionMachine.provide({
    actors: {
      listen: fromCallback<EventObject, { address: string }>(({ input, sendBack }) => {
        let server: Server | null = createServer({ pauseOnConnect: true }, (socket) => {
          if (accepted || !server) {
            socket.destroy();
            return;
          }
          accepted = socket;
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
      channel: fromCallback<EventObject, { address: string }>(({ sendBack, receive }) => {
        const socket = accepted;
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
    },
  });
}
