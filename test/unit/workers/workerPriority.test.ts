import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { AUTOGROUP_TRIES, autogroupNice, lowerWorkerPriority, type PriorityIo } from '../../../src/core/workers/workerPriority';

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
  /** A process's autogroup: `[name, 'nice', value]`, or `['']` in the root group (the kernel prints nothing). */
  const group = (p: number | 'self') => readFileSync(`/proc/${p}/autogroup`, 'utf8').trim().split(/\s+/);
  const hasAutogroups = process.platform === 'linux' && existsSync('/proc/self/autogroup');

  /** Starts a process as the pool starts a worker (detached: a session of its own), runs `fn`, kills it. */
  async function withDetachedProcess(fn: (pid: number, alive: () => boolean) => Promise<void>): Promise<void> {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { detached: true, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await fn(child.pid!, () => child.exitCode === null);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** Written at once, or retried within ~2 s when another write came first (unprivileged). */
  async function groupNiceSettles(pid: number, expected: string): Promise<string> {
    for (let i = 0; i < 40 && group(pid)[2] !== expected; i++) await new Promise((r) => setTimeout(r, 60));
    return group(pid)[2]!;
  }

  it('lowers a real process started as workers are (detached: a session of its own)', async () => {
    // What the host does where no spawner thread can start (processLauncher.ts, launchHere).
    await withDetachedProcess(async (pid, alive) => {
      const logs: string[] = [];
      lowerWorkerPriority(pid, 10, alive, (m) => logs.push(m));
      expect(logs).toEqual([]);
      expect(getPriority(pid)).toBe(Math.max(10, getPriority()));
      if (hasAutogroups) {
        // This process may have an autogroup of its own (a login or terminal session) or be in the
        // root group (started by init or a service manager, as CI runners are): either way the
        // worker's group is another, and is lowered.
        expect(group(pid)[0]).not.toBe(group('self')[0]);
        const expected = String(Math.max(10, Number(group('self')[2]) || 0));
        expect(await groupNiceSettles(pid, expected)).toBe(expected);
      }
    });
  });

  it.runIf(hasAutogroups)('lowers a real worker\'s group when the host is in the root autogroup (its /proc/self/autogroup is empty)', async () => {
    // The real process, the real /proc writes; only the host's own group is read as the root
    // group's empty text, whatever session this test runs in.
    const io: PriorityIo = {
      getPriority: () => getPriority(),
      setPriority,
      readFile: (path) => (path === '/proc/self/autogroup' ? '' : readFileSync(path, 'utf8')),
      writeFile: (path, text) => writeFileSync(path, text),
      later: (ms, fn) => setTimeout(fn, ms).unref(),
    };
    await withDetachedProcess(async (pid, alive) => {
      const logs: string[] = [];
      lowerWorkerPriority(pid, 10, alive, (m) => logs.push(m), io);
      expect(await groupNiceSettles(pid, '10')).toBe('10');
      expect(logs).toEqual([]);
    });
  });

  describe('which nice value a worker\'s autogroup gets (autogroupNice)', () => {
    it('10 when the host has a group of its own at nice 0, or is in the root group (empty text)', () => {
      expect(autogroupNice('/autogroup-1 nice 0\n', '/autogroup-2 nice 0\n', 10)).toBe(10);
      expect(autogroupNice('', '/autogroup-2 nice 0\n', 10)).toBe(10);
      expect(autogroupNice('\n', '/autogroup-2 nice 0', 10)).toBe(10);
    });

    it('the host group\'s own value where that is lower still', () => {
      expect(autogroupNice('/autogroup-1 nice 15', '/autogroup-2 nice 0', 10)).toBe(15);
    });

    it('none when the worker shares the host\'s group or has none of its own', () => {
      expect(autogroupNice('/autogroup-7 nice 0', '/autogroup-7 nice 0', 10)).toBeNull();
      expect(autogroupNice('/autogroup-7 nice 0', '', 10)).toBeNull();
      expect(autogroupNice('', '', 10)).toBeNull();
    });

    it('is self-contained: its source text alone decides the same (the spawner thread runs it)', () => {
      const copy = new Function(`return (${autogroupNice.toString()});`)() as typeof autogroupNice;
      expect(copy('', '/autogroup-2 nice 0', 10)).toBe(10);
      expect(copy('/autogroup-1 nice 12', '/autogroup-2 nice 0', 10)).toBe(12);
      expect(copy('/autogroup-7 nice 0', '/autogroup-7 nice 0', 10)).toBeNull();
    });
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

    it('is lowered when the host is in the root autogroup (the kernel prints nothing for it)', () => {
      const r = recording({ own: '', theirs: '/autogroup-2 nice 0' });
      lowerWorkerPriority(42, 10, () => true, () => undefined, r.io);
      expect(r.written).toEqual([['/proc/42/autogroup', '10']]);
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
