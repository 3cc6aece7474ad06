import { spawn, type ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';
import type { AnyMachineSnapshot } from 'xstate';
import { ipcConnectionMachine } from '../../../src/core/machines/ipcConnection/ipcConnection.machine';
import { openIpcConnection } from '../../../src/core/workers/workerActors';
import { waitForSnapshot } from '../workers/fakeWorker';
import type { CoverageRecorder } from './coverage';
import { dedupe, transitionPaths, type ModelPath } from './paths';

/**
 * The ipcConnection machine's model, replayed with its real actors and a real channel: a child
 * process holding the other end of the socketpair `spawn` creates on its fd 3 (as a worker's), in
 * the role of the worker, told by lines on its stdin what to write there: ATTACHED is the
 * launcher handing the host's end over, ATTACH_FAILED the launcher saying none will come,
 * PEER_CLOSED the child ending its end, VIOLATION a line that is not JSON; OPEN and CLOSE are what
 * the worker handle sends.
 */
const PEER = `
const net = require('node:net');
const ch = new net.Socket({ fd: 3, readable: true, writable: true });
ch.on('error', () => {});
ch.on('close', () => process.exit(0));
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  for (const cmd of d.split('\\n').filter(Boolean)) {
    if (cmd === 'end') ch.end();
    if (cmd === 'junk') ch.write('{"kind": "notify", oops\\n');
    if (cmd === 'ack') ch.write(JSON.stringify({ kind: 'notify', method: 'ready', params: {} }) + '\\n');
  }
});
`;

export function ipcPaths(): ModelPath[] {
  return transitionPaths(ipcConnectionMachine, {
    input: { workerId: 'w1' },
    events: (s: AnyMachineSnapshot) => {
      if (s.value === 'disconnected') return s.context.reason === null ? [{ type: 'OPEN' }] : [];
      if (s.value === 'connecting') return [{ type: 'ATTACHED' }, { type: 'ATTACH_FAILED', reason: 'x' }, { type: 'CLOSE', reason: 'x' }];
      return [{ type: 'PEER_CLOSED' }, { type: 'VIOLATION', reason: 'x' }, { type: 'CLOSE', reason: 'x' }, { type: 'RECEIVED', message: { kind: 'notify', method: 'ready', params: {} } }];
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
  const { actor, door } = openIpcConnection('w1', { maxLineBytes: 4096 }, undefined, recorder.inspect);
  const observed: string[] = [];
  const received: string[] = [];
  actor.subscribe((s) => {
    if (observed.at(-1) !== s.value) observed.push(s.value);
  });
  actor.on('ipc:message', (e) => received.push(e.message.kind === 'notify' ? e.message.method : e.message.kind));
  const peer: ChildProcess = spawn(process.execPath, ['-e', PEER], { stdio: ['pipe', 'ignore', 'inherit', 'pipe'] });
  const tell = (cmd: string) => peer.stdin!.write(`${cmd}\n`);
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
        case 'ATTACHED':
          door.attach(peer.stdio[3] as Duplex);
          break;
        case 'ATTACH_FAILED':
          door.fail('the worker could not be started');
          break;
        case 'CLOSE':
          actor.send({ type: 'CLOSE', reason: 'closed by the test' });
          break;
        case 'PEER_CLOSED':
          tell('end');
          break;
        case 'VIOLATION':
          tell('junk');
          break;
        case 'RECEIVED':
          tell('ack');
          await waitForSnapshot(actor, () => received.length > 0, 10_000, 'a message');
          break;
      }
    }
    const last = path.values.at(-1) as string;
    await waitForSnapshot(actor, (s) => s.value === last, 10_000, last);
    return { observed, expected: dedupe(path.values).map((v) => JSON.parse(v) as string), received, reason: actor.getSnapshot().context.reason };
  } finally {
    actor.stop();
    peer.kill('SIGKILL');
  }
}
