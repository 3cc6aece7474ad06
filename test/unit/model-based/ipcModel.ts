import { spawn, type ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';
import type { AnyMachineSnapshot } from 'xstate';
import { ipcConnectionMachine } from '../../../src/core/machines/ipcConnection/ipcConnection.machine';
import { openIpcConnection, type IpcChannel } from '../../../src/core/workers/workerActors';
import { waitForSnapshot } from '../workers/fakeWorker';
import type { CoverageRecorder } from './coverage';
import { dedupe, transitionPaths, type ModelPath } from './paths';

/**
 * The ipcConnection machine's model, replayed with its real actors and a real channel: a child
 * process holding the other end of the socketpair `spawn` creates on its fd 3 (as a worker's), in
 * the role of the worker, told by lines on its stdin what to write there: ATTACHED is the
 * launcher handing the host's end over, ATTACH_FAILED the launcher saying none will come,
 * PEER_CLOSED the child ending its end, VIOLATION a line that is not JSON; OPEN and CLOSE are what
 * the worker handle sends. The messages do not go through the machine (it holds the lifecycle
 * only): on each entry to `connected` the replay sends one message on the channel its owner was
 * given (`IpcPeer.opened`) and waits for the peer's answer at its owner (`IpcPeer.message`); what
 * the owner heard is the replay's output, with the machine's `ipc:disconnected` announcements.
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
  }
});
// Each message the host sends is answered with one naming it (both directions, end to end).
let pending = '';
ch.setEncoding('utf8');
ch.on('data', (d) => {
  pending += d;
  let nl;
  while ((nl = pending.indexOf('\\n')) >= 0) {
    const m = JSON.parse(pending.slice(0, nl));
    pending = pending.slice(nl + 1);
    ch.write(JSON.stringify({ kind: 'notify', method: 'echo:' + m.method, params: {} }) + '\\n');
  }
});
`;

export function ipcPaths(): ModelPath[] {
  return transitionPaths(ipcConnectionMachine, {
    input: { workerId: 'w1' },
    events: (s: AnyMachineSnapshot) => {
      if (s.value === 'disconnected') return s.context.reason === null ? [{ type: 'OPEN' }] : [];
      if (s.value === 'connecting') return [{ type: 'ATTACHED' }, { type: 'ATTACH_FAILED', reason: 'x' }, { type: 'CLOSE', reason: 'x' }];
      return [{ type: 'PEER_CLOSED' }, { type: 'VIOLATION', reason: 'x' }, { type: 'CLOSE', reason: 'x' }];
    },
    context: (s) => s.context.reason !== null,
  }).filter((p) => p.events.length > 0);
}

export interface IpcReplay {
  observed: string[];
  expected: string[];
  /** The channels its owner was given (one per entry to `connected`). */
  opened: number;
  /** What its owner received, in order (the peer's answers to what the replay sent). */
  received: string[];
  /** The machine's `ipc:disconnected` announcements: reason and whether the peer broke the protocol. */
  disconnected: { reason: string; broken: boolean }[];
  reason: string | null;
}

export async function replayIpc(path: ModelPath, recorder: CoverageRecorder): Promise<IpcReplay> {
  const received: string[] = [];
  let heard: (() => void) | null = null;
  const channels: IpcChannel[] = [];
  const { actor, door } = openIpcConnection(
    'w1',
    { maxLineBytes: 4096 },
    { opened: (channel) => channels.push(channel), message: (m) => {
        received.push(m.kind === 'notify' ? m.method : m.kind);
        heard?.();
      },
    },
    recorder.inspect,
  );
  const observed: string[] = [];
  const disconnected: { reason: string; broken: boolean }[] = [];
  actor.subscribe((s) => {
    if (observed.at(-1) !== s.value) observed.push(s.value);
  });
  actor.on('ipc:disconnected', (e) => disconnected.push({ reason: e.reason, broken: e.broken }));
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
        case 'ATTACHED': {
          door.attach(peer.stdio[3] as Duplex);
          await waitForSnapshot(actor, (s) => s.value === 'connected', 10_000, 'connected');
          // Traffic both ways, between the channel and its owner (not through the machine).
          const answered = new Promise<void>((resolve) => (heard = resolve));
          channels.at(-1)?.send({ kind: 'notify', method: 'ping', params: {} });
          // No timer: the test's own timeout says when an answer never came.
          await answered;
          break;
        }
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
      }
    }
    const last = path.values.at(-1) as string;
    await waitForSnapshot(actor, (s) => s.value === last, 10_000, last);
    return { observed, expected: dedupe(path.values).map((v) => JSON.parse(v) as string), opened: channels.length, received, disconnected, reason: actor.getSnapshot().context.reason };
  } finally {
    actor.stop();
    peer.kill('SIGKILL');
  }
}
