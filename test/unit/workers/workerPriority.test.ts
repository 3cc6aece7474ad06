import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { AUTOGROUP_TRIES, lowerWorkerPriority, type PriorityIo } from '../../../src/core/workers/workerPriority';

/**
 * How the host lowers a worker's CPU priority, against a recording seam: the process's nice value,
 * and on Linux its autogroup's (the scheduling group of the session the worker leads). The real
 * effect on a real worker process is in pool.test.ts.
 */
interface Recorded {
  io: PriorityIo;
  niced: [number, number][];
  written: [string, string][];
  /** Retries scheduled (run with `runLater`). */
  later: (() => void)[];
}

function recording(opts: { hostNice?: number; own?: string; theirs?: string; writeFails?: string[]; setFails?: string } = {}): Recorded {
  const failures = [...(opts.writeFails ?? [])];
  const r: Recorded = {
    niced: [],
    written: [],
    later: [],
    io: {
      getPriority: () => opts.hostNice ?? 0,
      setPriority: (pid, nice) => {
        if (opts.setFails) throw Object.assign(new Error(opts.setFails), { code: 'EACCES' });
        r.niced.push([pid, nice]);
      },
      readFile: (path) => {
        if (path === '/proc/self/autogroup') return `${opts.own ?? '/autogroup-1 nice 0'}\n`;
        if (opts.theirs === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
        return `${opts.theirs}\n`;
      },
      writeFile: (path, text) => {
        const code = failures.shift();
        if (code) throw Object.assign(new Error(`${code}: refused`), { code });
        r.written.push([path, text]);
      },
      later: (_ms, fn) => r.later.push(fn),
    },
  };
  return r;
}

function runLater(r: Recorded): void {
  while (r.later.length > 0) r.later.shift()!();
}

describe('lowering a worker\'s CPU priority', () => {
  it('lowers a real process started as workers are (detached: a session of its own)', async () => {
    // What the host does where no spawner thread can start (processLauncher.ts, launchHere).
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { detached: true, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const pid = child.pid!;
      const logs: string[] = [];
      lowerWorkerPriority(pid, 10, () => child.exitCode === null, (m) => logs.push(m));
      expect(logs).toEqual([]);
      expect(getPriority(pid)).toBe(Math.max(10, getPriority()));
      if (process.platform === 'linux' && existsSync('/proc/self/autogroup')) {
        const group = (p: number | 'self') => readFileSync(`/proc/${p}/autogroup`, 'utf8').trim().split(/\s+/);
        expect(group(pid)[0]).not.toBe(group('self')[0]);
        // Written at once, or retried within ~2 s when another write came first (unprivileged).
        for (let i = 0; i < 40 && group(pid)[2] !== '10'; i++) await new Promise((r) => setTimeout(r, 60));
        expect(group(pid)[2]).toBe(String(Math.max(10, Number(group('self')[2]))));
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('sets the worker\'s nice value', () => {
    const r = recording();
    lowerWorkerPriority(42, 10, () => true, () => undefined, r.io);
    expect(r.niced).toEqual([[42, 10]]);
  });

  it('never asks for more than the host has: a host at nice 15 gets workers at 15', () => {
    const r = recording({ hostNice: 15, theirs: '/autogroup-2 nice 0', own: '/autogroup-1 nice 12' });
    lowerWorkerPriority(42, 10, () => true, () => undefined, r.io);
    expect(r.niced).toEqual([[42, 15]]);
    if (process.platform === 'linux') expect(r.written).toEqual([['/proc/42/autogroup', '12']]);
  });

  it('reports a refusal and leaves the worker running', () => {
    const r = recording({ setFails: 'permission denied' });
    const logs: string[] = [];
    lowerWorkerPriority(42, 10, () => true, (m) => logs.push(m), r.io);
    expect(logs.join('\n')).toMatch(/could not lower its CPU priority \(nice 10\): permission denied/);
  });

  describe.runIf(process.platform === 'linux')('on Linux, the autogroup of the session the worker leads', () => {
    it('is lowered too when it is not the host\'s own', () => {
      const r = recording({ theirs: '/autogroup-2 nice 0' });
      lowerWorkerPriority(42, 10, () => true, () => undefined, r.io);
      expect(r.written).toEqual([['/proc/42/autogroup', '10']]);
    });

    it('is never touched when the worker shares the host\'s group (that would lower the host)', () => {
      const r = recording({ own: '/autogroup-7 nice 0', theirs: '/autogroup-7 nice 0' });
      lowerWorkerPriority(42, 10, () => true, () => undefined, r.io);
      expect(r.written).toEqual([]);
      expect(r.niced).toEqual([[42, 10]]);
    });

    it('is left alone on a kernel without autogroups', () => {
      const r = recording({ theirs: undefined });
      lowerWorkerPriority(42, 10, () => true, () => undefined, r.io);
      expect(r.written).toEqual([]);
    });

    it('is retried while the kernel says "again" (one unprivileged write per 100 ms), then set', () => {
      const r = recording({ theirs: '/autogroup-2 nice 0', writeFails: ['EAGAIN', 'EAGAIN'] });
      const logs: string[] = [];
      lowerWorkerPriority(42, 10, () => true, (m) => logs.push(m), r.io);
      expect(r.written).toEqual([]);
      runLater(r);
      expect(r.written).toEqual([['/proc/42/autogroup', '10']]);
      expect(logs).toEqual([]);
    });

    it('gives up after its tries and says so', () => {
      const r = recording({ theirs: '/autogroup-2 nice 0', writeFails: Array.from({ length: AUTOGROUP_TRIES }, () => 'EAGAIN') });
      const logs: string[] = [];
      lowerWorkerPriority(42, 10, () => true, (m) => logs.push(m), r.io);
      runLater(r);
      expect(r.written).toEqual([]);
      expect(logs.join('\n')).toMatch(/could not lower the CPU priority of its scheduling group \(nice 10\)/);
    });

    it('stops trying once the worker is gone', () => {
      const r = recording({ theirs: '/autogroup-2 nice 0', writeFails: ['EAGAIN'] });
      let alive = true;
      const logs: string[] = [];
      lowerWorkerPriority(42, 10, () => alive, (m) => logs.push(m), r.io);
      alive = false;
      runLater(r);
      expect(r.written).toEqual([]);
      expect(logs).toEqual([]);
    });
  });
});
