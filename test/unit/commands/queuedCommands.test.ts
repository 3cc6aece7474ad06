import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedProvider, type ScriptedTurn } from '../../../src/core/providers/scripted';
import { combineCommands } from '../../../src/core/commands/commandRun';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { CommandRun, TaskHandle } from '../../../src/core/runtime/types';
import type { TaskEvent } from '../../../src/shared/domain/events';

/**
 * A custom command's allowed-tools hold for exactly the run that answers it, whenever its message
 * was sent: while the last run finishes, or queued while a run works (then the run that sends
 * the queue answers it); a message queued after it does not widen it.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SAFE: CommandRun = { narrowing: { command: '/safe', rules: ['Read'] } };
const bashTurn: ScriptedTurn = { blocks: [{ type: 'tool_use', id: 'b1', name: 'Bash', input: { command: 'echo hi' } }] };
const text = (t: string): ScriptedTurn => ({ blocks: [{ type: 'text', text: t }] });

function runtimeWith(script: ScriptedTurn[]) {
  const workspace = mkdtempSync(join(tmpdir(), 'keel-qcmd-'));
  const storageDir = mkdtempSync(join(tmpdir(), 'keel-qcmd-store-'));
  dirs.push(workspace, storageDir);
  const provider = new ScriptedProvider(script);
  return new TaskRuntime({ workspace, storageDir, providerFactory: () => provider });
}

/** Resolves with the `done` of the `n`th run of `task`. */
function nthDone(task: TaskHandle, n: number): Promise<TaskEvent> {
  let seen = 0;
  return new Promise((resolve) => task.subscribe((e) => e.type === 'done' && ++seen === n && resolve(e)));
}

function bashResult(task: TaskHandle) {
  const item = task.transcript().items.find((i) => i.kind === 'tool' && i.name === 'Bash');
  return item?.kind === 'tool' ? item : undefined;
}

describe('a command message keeps its allowed-tools for the run that answers it', () => {
  it('sent while the last run finishes (before its done): the next run is narrowed, even in bypassPermissions', async () => {
    const runtime = runtimeWith([text('first'), bashTurn, text('after')]);
    const task = runtime.startTask({ prompt: 'go', provider: { provider: 'anthropic', model: 'm' }, mode: 'bypassPermissions' });
    const second = nthDone(task, 2);
    let sent = false;
    task.subscribe((e) => {
      if (!sent && e.type === 'task' && e.state === 'completed') {
        sent = true;
        task.sendUserMessage('/safe do it', { command: SAFE });
      }
    });
    await second;
    expect(bashResult(task)?.permission).toMatchObject({ decision: 'deny', reason: '/safe allows only Read (its allowed-tools)' });
    runtime.dispose();
  });

  it('queued while a run works: the run that sends the queue is narrowed; withdrawn, it is not', async () => {
    const runtime = runtimeWith([{ ...text('working on it'), chunkSize: 2 }, bashTurn, text('after')]);
    const task = runtime.startTask({ prompt: 'go', provider: { provider: 'anthropic', model: 'm' }, mode: 'bypassPermissions' });
    const second = nthDone(task, 2);
    let queued = false;
    task.subscribe((e) => {
      if (!queued && e.type === 'text') {
        queued = true;
        task.sendUserMessage('/safe do it', { command: SAFE });
        task.sendUserMessage('and this plain one');
      }
    });
    await second;
    expect(task.transcript().items.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' && i.text)).toEqual(['go', '/safe do it', 'and this plain one']);
    expect(bashResult(task)?.permission).toMatchObject({ decision: 'deny', reason: '/safe allows only Read (its allowed-tools)' });
    runtime.dispose();
  });

  it('a withdrawn command message leaves nothing behind: the queue run is not narrowed', async () => {
    const runtime = runtimeWith([{ ...text('working on it'), chunkSize: 2 }, bashTurn, text('after')]);
    const task = runtime.startTask({ prompt: 'go', provider: { provider: 'anthropic', model: 'm' }, mode: 'bypassPermissions' });
    const second = nthDone(task, 2);
    let queued = false;
    task.subscribe((e) => {
      if (!queued && e.type === 'text') {
        queued = true;
        task.sendUserMessage('/safe do it', { command: SAFE });
        task.sendUserMessage('plain');
      }
      if (e.type === 'queued' && e.message.text === 'plain') task.withdrawQueued(`${task.id}-q1`);
    });
    await second;
    expect(bashResult(task)?.permission?.decision).toBe('allow');
    runtime.dispose();
  });
});

describe('combining the commands of one queue run', () => {
  it('keeps only the rules every narrowing command lists; a model only when all agree', () => {
    const a: CommandRun = { narrowing: { command: '/a', rules: ['Read', 'Bash(git status)'] }, model: 'haiku' };
    const b: CommandRun = { narrowing: { command: '/b', rules: ['Read', 'Edit'] }, model: 'haiku' };
    expect(combineCommands([])).toBeUndefined();
    expect(combineCommands([a])).toBe(a);
    expect(combineCommands([a, b])).toEqual({ narrowing: { command: '/a and /b', rules: ['Read'] }, model: 'haiku' });
    expect(combineCommands([a, { model: 'sonnet' }])).toEqual({ narrowing: a.narrowing });
  });
});
