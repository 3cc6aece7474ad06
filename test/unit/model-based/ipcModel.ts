import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { AnyMachineSnapshot } from 'xstate';
import { ipcConnectionMachine } from '../../../src/core/machines/ipcConnection/ipcConnection.machine';
import { openIpcConnection } from '../../../src/core/workers/ipcActors';
import { SocketDir } from '../../../src/core/workers/socketDir';
import { waitForSnapshot } from '../workers/fakeWorker';
import type { CoverageRecorder } from './coverage';
import { dedupe, transitionPaths, type ModelPath } from './paths';

/**
 * The ipcConnection machine's model, replayed with its real actors (a real Unix socket server in
 * a 0700 folder) and a real client socket in the role of the worker: ACCEPTED is the client
 * connecting, PEER_CLOSED the client ending, VIOLATION a line that is not JSON, LISTEN_FAILED an
 * address in a folder that does not exist; OPEN and CLOSE are what the worker handle sends.
 */
export function ipcPaths(): ModelPath[] {
  return transitionPaths(ipcConnectionMachine, {
    input: { address: '/x' },
    events: (s: AnyMachineSnapshot) => {
      if (s.value === 'disconnected') return s.context.reason === null ? [{ type: 'OPEN' }] : [];
      if (s.value === 'connecting') return [{ type: 'ACCEPTED' }, { type: 'LISTEN_FAILED', reason: 'x' }, { type: 'CLOSE', reason: 'x' }];
      return [{ type: 'PEER_CLOSED' }, { type: 'VIOLATION', reason: 'x' }, { type: 'CLOSE', reason: 'x' }, { type: 'RECEIVED', message: { type: 'shutdown_ack' } }];
    },
    context: (s) => s.context.reason !== null,
  }).filter((p) => p.events.length > 0);
}

export interface IpcReplay {
  observed: string[];
  expected: string[];
  received: string[];
  reason: string | null;
}

export async function replayIpc(path: ModelPath, recorder: CoverageRecorder): Promise<IpcReplay> {
  const dir = new SocketDir();
  const types = path.events.map((e) => e.type);
  const address = types.includes('LISTEN_FAILED') ? join(dir.path, 'missing', 'w.sock') : dir.socketFor('w1');
  const actor = openIpcConnection(address, { maxLineBytes: 4096 }, undefined, recorder.inspect);
  const observed: string[] = [];
  const received: string[] = [];
  actor.subscribe((s) => {
    if (observed.at(-1) !== s.value) observed.push(s.value);
  });
  actor.on('ipc:message', (e) => received.push(e.message.type));
  let client: Socket | null = null;
  try {
    actor.start();
    for (let i = 0; i < path.events.length; i++) {
      const e = path.events[i]!;
      const from = path.values[i] as string;
      await waitForSnapshot(actor, (s) => s.value === from, 10_000, from);
      switch (e.type) {
        case 'OPEN':
          actor.send({ type: 'OPEN' });
          break;
        case 'ACCEPTED':
          client = connect(address);
          client.on('error', () => undefined);
          break;
        case 'CLOSE':
          actor.send({ type: 'CLOSE', reason: 'closed by the test' });
          break;
        case 'PEER_CLOSED':
          client?.end();
          break;
        case 'VIOLATION':
          client?.write('{"type": "ready", oops\n');
          break;
        case 'RECEIVED':
          client?.write(`${JSON.stringify({ type: 'shutdown_ack' })}\n`);
          await waitForSnapshot(actor, () => received.length > 0, 10_000, 'a message');
          break;
      }
    }
    const last = path.values.at(-1) as string;
    await waitForSnapshot(actor, (s) => s.value === last, 10_000, last);
    return { observed, expected: dedupe(path.values).map((v) => JSON.parse(v) as string), received, reason: actor.getSnapshot().context.reason };
  } finally {
    client?.destroy();
    actor.stop();
    dir.remove();
  }
}
