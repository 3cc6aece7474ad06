import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLoop, defaultSettings, loopDir, readState } from '../../../src/core/loop/files';
import { LoopBusy, type LoopTaskHost } from '../../../src/core/loop/runner';
import { ScriptedProvider, type ScriptedTurn } from '../../../src/core/providers/scripted';
import type { ProviderRequest } from '../../../src/core/providers/types';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { acquireTaskLock } from '../../../src/core/store/taskLock';
import { LoopRegistry } from '../../../src/extension/loops/loopRegistry';
import { MemoryLogger } from './fakes';

/**
 * The window's loops over real loop runners: real tasks (TaskRuntime with the scripted provider),
 * real files, real git checkpoints and the real lock. What the loop page and the reload offer
 * show, and what Continue, Cancel and Restore do.
 */
let workspace: string;
let runtime: TaskRuntime;
let registry: LoopRegistry;
let confirms: string[];
let confirmAnswer: boolean;

const promptOf = (r: ProviderRequest) => JSON.stringify(r.messages[0]);
const iterationOf = (r: ProviderRequest) => Number(/iteration (\d+) of/.exec(promptOf(r))?.[1] ?? 0);
/** The progress file the prompt names (its path depends on the loop's name). */
const progressPathOf = (r: ProviderRequest) => /Progress so far \(([^)]+)\)/.exec(promptOf(r))?.[1] ?? 'nowhere.md';
const write = (file_path: string, content: string): ScriptedTurn => ({ blocks: [{ type: 'tool_use', name: 'Write', input: { file_path, content } }] });

/** Per iteration: the files it writes (the progress file as "progress"), then a closing answer. */
function model(plan: Record<number, Record<string, string>>): ScriptedProvider {
  return new ScriptedProvider((request) => {
    const n = iterationOf(request);
    const step = request.messages.filter((m) => m.role === 'assistant').length;
    const files = Object.entries(plan[n] ?? {});
    const next = files[step];
    if (!next) return { blocks: [{ type: 'text', text: `iteration ${n} finished` }] };
    return write(next[0] === 'progress' ? progressPathOf(request) : next[0], next[1]);
  });
}

function newRegistry(provider: ScriptedProvider, owner = 'VS Code window test'): LoopRegistry {
  runtime = new TaskRuntime({ workspace, providerFactory: () => provider });
  const host: LoopTaskHost = {
    startIteration: (prompt, it) => runtime.startTask({ prompt, provider: { provider: 'anthropic', model: 'scripted-model' }, mode: 'bypassPermissions', loopProgressFile: it.progressFile }),
  };
  return new LoopRegistry({
    workspace,
    taskHost: async () => host,
    feed: () => undefined,
    owner,
    log: new MemoryLogger(),
    confirm: async (message) => {
      confirms.push(message);
      return confirmAnswer;
    },
  });
}

const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: workspace, encoding: 'utf8' }).trim();

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'keel-loops-'));
  confirms = [];
  confirmAnswer = true;
});
afterEach(() => {
  registry?.dispose();
  runtime?.dispose();
});

describe('the window\'s loops (loop page, reload offer)', () => {
  it('a loop started here shows each iteration with its verdict, reasons and progress, and ends complete', async () => {
    registry = newRegistry(model({ 1: { progress: 'step 1 done\n' }, 2: { progress: 'step 1 done\nstep 2 done\nDONE\n' } }));
    let changes = 0;
    registry.onChange(() => changes++);
    const { name, done } = await registry.start('Make the tests pass', defaultSettings());
    expect(name).toBe('make-the-tests-pass');
    expect(registry.state().loops[0]).toMatchObject({ name, driver: 'here' });
    expect(await done).toBe('complete');
    const [loop] = registry.state().loops;
    expect(loop).toMatchObject({ name, status: 'complete', driver: 'none', iteration: 2, goal: 'Make the tests pass' });
    expect(loop!.iterations.map((i) => i.verdict)).toEqual(['continue', 'complete']);
    expect(loop!.iterations[1]!.reasons.join(' ')).toContain('stop word "DONE"');
    expect(loop!.iterations.map((i) => i.progress)).toEqual(['step 1 done\n', 'step 1 done\nstep 2 done\nDONE\n']);
    expect(changes).toBeGreaterThan(2);
    expect(registry.interrupted()).toEqual([]);
  });

  it('a loop a reload cut off is offered, and Continue runs it to its end from its state.json', async () => {
    createLoop(workspace, 'port-it', 'port the module', defaultSettings());
    registry = newRegistry(model({ 1: { progress: 'ported\nDONE\n' } }));
    expect(registry.interrupted()).toEqual([{ name: 'port-it', iteration: 1 }]);
    expect(registry.state().loops[0]).toMatchObject({ name: 'port-it', status: 'active', driver: 'none' });
    expect(await registry.continue('port-it')).toBe('complete');
    expect(readState(workspace, 'port-it')).toMatchObject({ status: 'complete', iteration: 1 });
    expect(registry.interrupted()).toEqual([]);
    await expect(registry.continue('port-it')).rejects.toThrow(/complete; start a new loop/);
  });

  it('a loop another window or `keel loop` drives is neither offered, continued nor cancelled here', async () => {
    createLoop(workspace, 'busy', 'work', defaultSettings());
    const other = acquireTaskLock(loopDir(workspace, 'busy'), 'keel loop');
    if (!other.ok) throw new Error('could not take the lock');
    try {
      registry = newRegistry(model({}));
      expect(registry.interrupted()).toEqual([]);
      expect(registry.state().loops[0]).toMatchObject({ name: 'busy', driver: 'elsewhere', heldBy: 'a keel loop in a terminal' });
      await expect(registry.continue('busy')).rejects.toBeInstanceOf(LoopBusy);
      expect(() => registry.cancel('busy')).toThrow(/run by keel loop; cancel it there/);
      expect(readState(workspace, 'busy').status).toBe('active');
    } finally {
      other.lock.release();
    }
    expect(registry.interrupted()).toEqual([{ name: 'busy', iteration: 1 }]);
  });

  it('a stalled loop continues when asked; an interrupted one can be cancelled without running', async () => {
    // The progress file never changes: stalled after 3 iterations.
    registry = newRegistry(model({ 4: { progress: 'finally\nDONE\n' } }));
    const { name, done } = await registry.start('spin', defaultSettings());
    expect(await done).toBe('stalled');
    expect(registry.state().loops[0]).toMatchObject({ status: 'stalled', driver: 'here' });
    expect(await registry.continue(name)).toBe('complete');

    createLoop(workspace, 'left', 'left over', defaultSettings());
    expect(registry.cancel('left')).toBe('Loop "left" cancelled.');
    expect(readState(workspace, 'left').status).toBe('cancelled');
    expect(registry.interrupted()).toEqual([]);
  });

  it('restores the files of an iteration\'s checkpoint after confirmation, never moving the branch or the index', async () => {
    git('init', '-q', '-b', 'main');
    writeFileSync(join(workspace, 'a.txt'), 'zero\n');
    git('add', 'a.txt');
    git('commit', '-q', '-m', 'start');
    const head = git('rev-parse', 'HEAD');
    registry = newRegistry(model({ 1: { 'a.txt': 'one\n', progress: 'one\n' }, 2: { 'a.txt': 'two\n', 'b.txt': 'new\n', progress: 'two\nDONE\n' } }));
    const { name, done } = await registry.start('count', defaultSettings({ checkpoints: true }));
    expect(await done).toBe('complete');
    const first = registry.state().loops[0]!.iterations[0]!.checkpoint!;
    expect(first.ref).toBe(`refs/keel/loop/${name}/1`);

    confirmAnswer = false;
    expect(await registry.restore(name, first.commit)).toBe('Nothing restored.');
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('two\n');

    confirmAnswer = true;
    expect(await registry.restore(name, first.commit)).toMatch(/restored to loop "count" after iteration 1/);
    expect(confirms[1]).toContain('after iteration 1');
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('one\n');
    expect(() => readFileSync(join(workspace, 'b.txt'), 'utf8')).toThrow();
    expect(git('rev-parse', 'HEAD')).toBe(head);
    expect(git('symbolic-ref', 'HEAD')).toBe('refs/heads/main');
    expect(git('diff', '--cached', '--name-only')).toBe('');

    await expect(registry.restore(name, 'f'.repeat(40))).rejects.toThrow(/not a checkpoint of loop "count"/);
    await expect(registry.restore('nope', first.commit)).rejects.toThrow(/no loop named "nope"/);
  });

  it('refuses to restore files while an iteration of the loop runs here', async () => {
    git('init', '-q', '-b', 'main');
    createLoop(workspace, 'running', 'go', defaultSettings({ checkpoints: true }));
    // A model that never answers: the iteration keeps running until the loop is cancelled.
    registry = newRegistry(new ScriptedProvider(() => ({ blocks: [{ type: 'text', text: 'slow' }], chunkSize: 1, delayMs: 60_000 })));
    const started = new Promise<void>((resolve) => registry.onEvent((e) => e.state === 'iteration' && resolve()));
    const run = registry.continue('running');
    await started;
    await expect(registry.restore('running', 'a'.repeat(40))).rejects.toThrow(/running an iteration; cancel it/);
    expect(registry.cancel('running')).toBe('Loop "running" cancelled.');
    expect(await run).toBe('cancelled');
  });
});
