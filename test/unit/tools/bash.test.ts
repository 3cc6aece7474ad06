import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BASH_MAX_OUTPUT_CHARS, bashTool } from '../../../src/core/tools/bash';
import { isAlive, killIfAlive, makeContext, makeTempDir, waitFor } from './helpers';

let ws: { dir: string; cleanup: () => void };
const pidsToReap: number[] = [];
beforeEach(() => {
  ws = makeTempDir();
});
afterEach(() => {
  for (const pid of pidsToReap.splice(0)) killIfAlive(pid);
  ws.cleanup();
});

const readPid = (file: string): number => {
  const pid = Number(readFileSync(file, 'utf8').trim());
  pidsToReap.push(pid);
  return pid;
};

describe('Bash', () => {
  it('runs in the workspace, streams output and reports exit 0', async () => {
    const ctx = makeContext(ws.dir);
    const r = await bashTool.invoke({ command: 'pwd; echo out; echo err >&2' }, ctx);
    expect(r.isError).toBe(false);
    expect(r.summary).toBe('exit 0');
    // stdout and stderr are separate pipes, so their relative order is not guaranteed.
    expect(r.content.split('\n').sort()).toEqual([ws.dir, 'err', 'out'].sort());
    expect(ctx.output.join('')).toContain('out\n');
    expect(ctx.output.join('')).toContain('err\n');
  });

  it('reports a non-zero exit as an error with the output and the code', async () => {
    const r = await bashTool.invoke({ command: 'echo failing; exit 3' }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.summary).toBe('exit 3');
    expect(r.content).toContain('failing');
    expect(r.content).toContain('[exit code 3]');
  });

  it('closes stdin so a command waiting for input ends', async () => {
    const r = await bashTool.invoke({ command: 'cat; echo done' }, makeContext(ws.dir));
    expect(r.content).toBe('done');
  });

  it('keeps at most the output cap and says how much was dropped', async () => {
    const r = await bashTool.invoke({ command: `head -c 100000 /dev/zero | tr '\\0' 'a'; echo; echo TAIL-END` }, makeContext(ws.dir));
    expect(r.isError).toBe(false);
    const dropped = 100000 + 1 + 9 - BASH_MAX_OUTPUT_CHARS;
    expect(r.content).toContain(`${dropped} of 100010 characters dropped`);
    expect(r.content.length).toBeLessThan(BASH_MAX_OUTPUT_CHARS + 200);
    expect(r.content.startsWith('aaaa')).toBe(true);
    expect(r.content.endsWith('TAIL-END')).toBe(true);
  });

  it('kills the command and its children on timeout', async () => {
    const pidFile = path.join(ws.dir, 'pid');
    const r = await bashTool.invoke({ command: `sleep 100 & echo $! > ${pidFile}; echo started; wait`, timeout: 1000 }, makeContext(ws.dir));
    expect(r.isError).toBe(true);
    expect(r.summary).toBe('timed out after 1000 ms');
    expect(r.content).toContain('started');
    const pid = readPid(pidFile);
    await waitFor(() => !isAlive(pid), `process ${pid} to die`);
  });

  it('escalates to SIGKILL for children that ignore SIGTERM', async () => {
    const pidFile = path.join(ws.dir, 'pid');
    const r = await bashTool.invoke({ command: `trap '' TERM; sleep 100 & echo $! > ${pidFile}; wait`, timeout: 1000 }, makeContext(ws.dir));
    expect(r.summary).toBe('timed out after 1000 ms');
    // SIGKILL was sent before the tool returned; the kernel finishes the process a moment later.
    const pid = readPid(pidFile);
    await waitFor(() => !isAlive(pid), `process ${pid} to die`);
  });

  it('on cancel kills the whole process group, grandchildren included', async () => {
    const pidFile = path.join(ws.dir, 'pidfile');
    const ctx = makeContext(ws.dir);
    const pending = bashTool.invoke({ command: `bash -c 'sleep 100 & echo $! > ${pidFile}; wait'` }, ctx);
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the pid file');
    const pid = readPid(pidFile);
    expect(isAlive(pid)).toBe(true);
    ctx.controller.abort();
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(r.summary).toBe('cancelled');
    await waitFor(() => !isAlive(pid), `process ${pid} to die`);
  });

  it('does not start when already cancelled', async () => {
    const ctx = makeContext(ws.dir);
    ctx.controller.abort();
    const marker = path.join(ws.dir, 'ran');
    const r = await bashTool.invoke({ command: `touch ${marker}` }, ctx);
    expect(r.summary).toBe('cancelled');
    expect(existsSync(marker)).toBe(false);
  });

  it('returns when the shell exits even if a background child keeps the output open', async () => {
    const pidFile = path.join(ws.dir, 'bg');
    const r = await bashTool.invoke({ command: `sleep 100 & echo $! > ${pidFile}; echo launched` }, makeContext(ws.dir));
    const pid = readPid(pidFile);
    expect(r.isError).toBe(false);
    expect(r.content).toContain('launched');
    expect(r.content).toContain('background processes kept running');
    expect(isAlive(pid)).toBe(true);
  });

  it('survives an output listener that throws', async () => {
    const ctx = makeContext(ws.dir, {
      onOutput: () => {
        throw new Error('view gone');
      },
    });
    const r = await bashTool.invoke({ command: 'echo still-here' }, ctx);
    expect(r).toEqual({ content: 'still-here', isError: false, summary: 'exit 0' });
  });

  it('reports a workspace that does not exist as a failure to start', async () => {
    const r = await bashTool.invoke({ command: 'true' }, makeContext(path.join(ws.dir, 'missing')));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('Could not run the command');
  });

  it('describes the command it will run', () => {
    expect(bashTool.subject({ command: 'npm test', description: 'Run tests' }, { workspace: ws.dir })).toEqual({
      kind: 'execute',
      tool: 'Bash',
      command: 'npm test',
      cwd: ws.dir,
      summary: 'Run tests',
    });
  });
});
