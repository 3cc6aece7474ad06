import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepWorkerProcesses, sweepWorkerProcessesInBackground, WORKER_TAG_ENV } from '../../../src/core/workers/workerSweep';
import { isAlive, killIfAlive, waitFor } from '../tools/helpers';

/**
 * The host's cleanup after a worker that died without stopping its commands: every process that
 * carries the worker's tag dies, with its process group — including one that left for a session
 * of its own, or cleared its environment but stayed in its group — and no other process is
 * touched. Real processes; pids checked gone (or alive).
 */
const started: number[] = [];
/** The shells' own process groups (each is detached): whatever a failed test, or the stranger, left. */
const groups: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) killIfAlive(pid);
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/** A detached shell (its own group, like a worker's command) with `env`, running `script`; its pid files appear in `dir`. */
function shell(script: string, env: NodeJS.ProcessEnv): number {
  const child = spawn('/bin/sh', ['-c', script], { env: { PATH: process.env.PATH, ...env }, detached: true, stdio: 'ignore' });
  child.unref();
  started.push(child.pid!);
  groups.push(child.pid!);
  return child.pid!;
}

async function pidIn(file: string): Promise<number> {
  await waitFor(() => existsSync(file) && readFileSync(file, 'utf8').trim() !== '', `${file}`);
  const pid = Number(readFileSync(file, 'utf8').trim());
  started.push(pid);
  return pid;
}

describe.skipIf(process.platform !== 'linux')('sweepWorkerProcesses', () => {
  for (const [how, sweep] of [
    ['synchronously', (tag: string) => Promise.resolve(sweepWorkerProcesses(tag))],
    ['in the background', sweepWorkerProcessesInBackground],
  ] as const) {
    it(`kills every process carrying the tag and its group, and nothing else (${how})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'keel-sweep-'));
      const tag = `t-${Math.random().toString(36).slice(2)}`;
      const tagged = { [WORKER_TAG_ENV]: tag };
      // A command ignoring SIGTERM with a child; a child that cleared its environment (still in
      // the command's group); a grandchild that moved to a session of its own (setsid).
      const command = shell(`trap '' TERM; sleep 120 & echo $! > ${dir}/child; env -i /bin/sleep 120 & echo $! > ${dir}/bare; setsid sleep 120 & echo $! > ${dir}/away; wait`, tagged);
      const child = await pidIn(join(dir, 'child'));
      const bare = await pidIn(join(dir, 'bare'));
      const away = await pidIn(join(dir, 'away'));
      // Another worker's command, and a process that is not Keel's at all.
      const otherWorker = shell('sleep 120', { [WORKER_TAG_ENV]: `${tag}-other` });
      const stranger = shell('sleep 120', {});
      for (const pid of [command, child, bare, away, otherWorker, stranger]) expect(isAlive(pid)).toBe(true);

      expect(await sweep(tag)).toBeGreaterThanOrEqual(3);

      for (const pid of [command, child, bare, away]) await waitFor(() => !isAlive(pid), `pid ${pid} gone`);
      expect(isAlive(otherWorker)).toBe(true);
      expect(isAlive(stranger)).toBe(true);
      expect(isAlive(process.pid)).toBe(true);
    });
  }

  it('finds nothing for a tag no process carries', async () => {
    expect(sweepWorkerProcesses('no-such-tag')).toBe(0);
    expect(await sweepWorkerProcessesInBackground('no-such-tag')).toBe(0);
    expect(sweepWorkerProcesses('')).toBe(0);
  });
});
