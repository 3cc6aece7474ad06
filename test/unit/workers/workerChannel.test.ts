import { openSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageChannel } from '../../../src/core/workers/channel';
import { launchInThisThread, launchWorkerProcess, type LaunchCallbacks } from '../../../src/core/workers/processLauncher';
import { WorkerPool } from '../../../src/core/workers/pool';
import { envelopeSchema, type Envelope } from '../../../src/core/workers/rpc';
import { killProcessGroup, type WorkerCommand } from '../../../src/core/workers/spawnWorker';
import { eventually, fakeWorker, gone, runOn } from './fakeWorker';

/**
 * A worker's channel is one no other process can join (issue 21, item 5): the socketpair its
 * process inherits on fd 3, through the spawner thread's relay and through a spawn in the host's
 * own thread. Real processes (the fake worker speaks the real protocol); what they hold is read
 * from /proc.
 */
const pools: WorkerPool[] = [];
const pids: number[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
  for (const pid of pids.splice(0)) killProcessGroup(pid);
});

/** fd → link target of every descriptor `pid` holds. */
function fds(pid: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const n of readdirSync(`/proc/${pid}/fd`)) {
    try {
      out.set(Number(n), readlinkSync(`/proc/${pid}/fd/${n}`));
    } catch {
      // Closed while listing.
    }
  }
  return out;
}

/** The path bound to a Unix socket of this inode ('' for one without a name), from /proc/net/unix. */
function unixSocketPath(inode: string): string | undefined {
  for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols[6] === inode) return cols[7] ?? '';
  }
  return undefined;
}

const socketInode = (link: string) => /^socket:\[(\d+)\]$/.exec(link)?.[1];

/**
 * What a worker process holds: its channel on fd 3 (and its stderr, fd 2, the host's log pipe:
 * libuv makes every stdio pipe a socketpair) and no other socket; the channel has no name and
 * cannot be opened through /proc.
 */
function expectPrivateChannel(pid: number): string {
  const held = fds(pid);
  const sockets = [...held].filter(([, link]) => socketInode(link) !== undefined);
  expect(sockets.map(([fd]) => fd).sort()).toEqual([2, 3]);
  const inode = socketInode(held.get(3)!)!;
  expect(unixSocketPath(inode)).toBe('');
  // Another process of the same user cannot open it either (as it could open a pipe there).
  expect(() => openSync(`/proc/${pid}/fd/3`, 'r+')).toThrow(/ENXIO|ENOENT|EACCES/);
  expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toMatch(/--socket/);
  return inode;
}

describe.runIf(process.platform === 'linux')('a worker channel no other process can join', () => {
  it('each pool worker talks to the host over its own inherited socketpair, and holds no other', async () => {
    const pool = new WorkerPool({ command: fakeWorker(), max: 2, shutdownGraceMs: 2000, healthIntervalMs: 600_000 });
    pools.push(pool);
    const [a, b] = await Promise.all([pool.acquire('task-a'), pool.acquire('task-b')]);
    const inodes = [expectPrivateChannel(a.pid!), expectPrivateChannel(b.pid!)];
    expect(new Set(inodes).size).toBe(2);
    // The channel works: a query goes down and its answer comes back.
    const run = runOn(a.handle, 'q1', 'task-a', 'hello');
    expect((await run.done).at(-1)).toBe('complete');
    expect(JSON.stringify(run.events)).toContain('echo: hello');
  });

  it.each([
    ['through the spawner thread', launchWorkerProcess],
    ['in the host\'s own thread', launchInThisThread],
  ] as const)('a launch %s hands over a working channel before the pid', async (_how, launch) => {
    const events: string[] = [];
    let stream: Duplex | null = null;
    const ready = new Promise<Envelope>((resolve, reject) => {
      const cb: LaunchCallbacks = {
        channel: (s) => {
          events.push('channel');
          stream = s;
          new MessageChannel<Envelope, Envelope>(s, { schema: envelopeSchema, maxLineBytes: 1 << 20, onMessage: resolve, onBroken: reject, onClose: () => undefined });
        },
        spawned: (pid) => {
          events.push('spawned');
          pids.push(pid);
        },
        error: (message) => reject(new Error(message)),
        exit: () => undefined,
        stderr: () => undefined,
        warn: () => undefined,
      };
      launch(fakeWorker(), 'w1', null, cb);
    });
    const first = await ready;
    expect(events).toEqual(['channel', 'spawned']);
    expect(first).toMatchObject({ kind: 'notify', method: 'ready', params: { pid: pids[0] } });
    expectPrivateChannel(pids[0]!);
    // The host end closing is the worker's cue to exit.
    stream!.destroy();
    await eventually(() => gone(pids[0]!), 10_000, 'the worker to exit once its channel closed');
  });

  it('a worker whose `ready` names another pid is not taken', async () => {
    const command: WorkerCommand = fakeWorker('--wrong-pid');
    const pool = new WorkerPool({ command, max: 1, shutdownGraceMs: 2000, healthIntervalMs: 600_000, spawnRetries: 0 });
    pools.push(pool);
    await expect(pool.acquire('task-a')).rejects.toThrow(/says it is pid \d+, but it was started as pid \d+/);
  });
});
