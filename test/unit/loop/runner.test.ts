import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoopEvent } from '../../../src/shared/domain/loop';
import { defaultSettings, loopPaths, readState } from '../../../src/core/loop/files';
import { LoopRunner, type LoopRunnerOptions } from '../../../src/core/loop/runner';
import { ScriptedProvider, type ScriptedTurn } from '../../../src/core/providers/scripted';
import type { ProviderRequest } from '../../../src/core/providers/types';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { Changes } from '../helpers/changes';

/**
 * The loop runner over real tasks: a TaskRuntime with the scripted provider, real tools writing
 * the real progress file, the real judge. Each iteration is a fresh task whose first request holds
 * one user message (the anchor, progress and guardrails), and the loop's files tell the story.
 */
let workspace: string;
let runtime: TaskRuntime;
let runner: LoopRunner | undefined;
let events: LoopEvent[];

const promptOf = (r: ProviderRequest) => JSON.stringify(r.messages[0]);
const iterationOf = (r: ProviderRequest) => Number(/iteration (\d+) of/.exec(promptOf(r))?.[1] ?? 0);
const writeProgress = (text: string): ScriptedTurn => ({ blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: '.keel/loop/l/progress.md', content: text } }] });
const say = (text: string): ScriptedTurn => ({ blocks: [{ type: 'text', text }] });

/** A model that, per iteration, plays `plan[iteration]`: its turns in order, then a closing answer. */
function model(plan: Record<number, ScriptedTurn[]>): ScriptedProvider {
  return new ScriptedProvider((request) => {
    const n = iterationOf(request);
    const step = request.messages.filter((m) => m.role === 'assistant').length;
    return plan[n]?.[step] ?? say(`iteration ${n} finished`);
  });
}

function options(provider: ScriptedProvider): LoopRunnerOptions {
  runtime = new TaskRuntime({ workspace, providerFactory: () => provider });
  return {
    workspace,
    owner: 'test',
    // As the CLI and the extension start an iteration: its progress file may be written without a
    // prompt (it sits under .keel/, which even bypassPermissions otherwise asks about).
    host: {
      startIteration: (prompt, it) =>
        runtime.startTask({ prompt, provider: { provider: 'anthropic', model: 'scripted-model' }, mode: 'bypassPermissions', loopProgressFile: it.progressFile }),
    },
    onEvent: (e) => events.push(e),
  };
}

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'keel-loop-'));
  events = [];
});
afterEach(() => {
  runner?.dispose();
  runtime?.dispose();
});

describe('LoopRunner', () => {
  it('completes when an iteration writes the stop word; every iteration starts from a fresh conversation', async () => {
    const provider = model({ 1: [writeProgress('step 1: parser written\n')], 2: [writeProgress('step 1: parser written\nstep 2: tests pass\nDONE\n')] });
    runner = LoopRunner.create(options(provider), 'l', 'make every test pass', defaultSettings());
    expect(await runner.run()).toBe('complete');

    const firsts = provider.requests.filter((r) => r.messages.length === 1);
    expect(firsts.map(iterationOf)).toEqual([1, 2]);
    // Iteration 2 learns of iteration 1 only through the progress file.
    expect(promptOf(firsts[1]!)).toContain('step 1: parser written');
    expect(promptOf(firsts[1]!)).not.toContain('iteration 1 finished');
    const state = readState(workspace, 'l');
    expect(state).toMatchObject({ status: 'complete', iteration: 2 });
    expect(state.iterations.map((i) => i.verdict)).toEqual(['continue', 'complete']);
    expect(state.iterations[1]!.reasons[0]).toContain('stop word "DONE"');
    expect(readFileSync(join(loopPaths(workspace, 'l').history, '1.md'), 'utf8')).toBe('step 1: parser written\n');
    expect(events.filter((e) => e.state === 'judged').map((e) => (e as { verdict: string }).verdict)).toEqual(['continue', 'complete']);
    expect(runner.view().iterations.map((i) => i.progress)).toEqual(['step 1: parser written\n', 'step 1: parser written\nstep 2: tests pass\nDONE\n']);
  });

  it('stalls at once, reading nothing through it, when the progress file becomes a link during an iteration', async () => {
    const secret = join(mkdtempSync(join(tmpdir(), 'keel-loop-secret-')), 'id_rsa');
    writeFileSync(secret, 'PRIVATE-KEY-MATERIAL\n');
    // Iteration 1 writes progress, then (as a command the person allowed might) swaps it for a link.
    const provider = new ScriptedProvider((request) => {
      const step = request.messages.filter((m) => m.role === 'assistant').length;
      if (step === 0) return writeProgress('step 1\n');
      const progress = loopPaths(workspace, 'l').progress;
      rmSync(progress);
      symlinkSync(secret, progress);
      return say('iteration 1 finished');
    });
    runner = LoopRunner.create(options(provider), 'l', 'make every test pass', defaultSettings());
    expect(await runner.run()).toBe('stalled');
    const state = readState(workspace, 'l');
    expect(state.reasons.join(' ')).toContain('progress.md is a symbolic link');
    expect(provider.requests.filter((r) => r.messages.length === 1)).toHaveLength(1);
    expect(JSON.stringify(provider.requests)).not.toContain('PRIVATE-KEY-MATERIAL');
    expect(JSON.stringify(state)).not.toContain('PRIVATE-KEY-MATERIAL');
    expect(existsSync(join(loopPaths(workspace, 'l').history, '1.md'))).toBe(false);
  });

  it('stalls when the progress file stays the same for 3 iterations, and goes on when the person resumes it', async () => {
    const provider = model({});
    runner = LoopRunner.create(options(provider), 'l', 'an impossible goal', defaultSettings());
    expect(await runner.run()).toBe('stalled');
    expect(readState(workspace, 'l')).toMatchObject({ status: 'stalled', iteration: 3 });
    expect(readState(workspace, 'l').reasons[0]).toContain('did not change for 3 iterations');
    // The person writes the stop word themselves, then resumes: one more iteration, complete.
    writeFileSync(loopPaths(workspace, 'l').progress, 'DONE by hand\n');
    expect(await runner.resume()).toBe('complete');
    expect(readState(workspace, 'l').iteration).toBe(4);
  });

  it('appends an error seen 3 times to the guardrails, and the next iteration reads it', async () => {
    const failing: ScriptedTurn = { blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'definitely-not-a-command-xyz --flag' } }] };
    const provider = model({
      1: [failing, writeProgress('tried 1\n')],
      2: [failing, writeProgress('tried 2\n')],
      3: [failing, writeProgress('tried 3\n')],
      4: [writeProgress('DONE\n')],
    });
    runner = LoopRunner.create(options(provider), 'l', 'goal', defaultSettings());
    expect(await runner.run()).toBe('complete');
    const guardrails = readFileSync(loopPaths(workspace, 'l').guardrails, 'utf8');
    expect(guardrails).toMatch(/Bash: .*definitely-not-a-command-xyz/);
    const fourth = provider.requests.find((r) => r.messages.length === 1 && iterationOf(r) === 4)!;
    expect(promptOf(fourth)).toContain('definitely-not-a-command-xyz');
    const third = provider.requests.find((r) => r.messages.length === 1 && iterationOf(r) === 3)!;
    expect(promptOf(third)).not.toContain('Seen 3 or more times');
    expect(events.some((e) => e.state === 'guardrail')).toBe(true);
  });

  it('continues from its saved state after the process that ran it went away', async () => {
    const hang: ScriptedTurn = { blocks: [{ type: 'text', text: 'thinking slowly…' }], delayMs: 600_000 };
    let hung = true;
    const requested = new Changes();
    const provider = new ScriptedProvider((request) => {
      requested.notify();
      const n = iterationOf(request);
      const step = request.messages.filter((m) => m.role === 'assistant').length;
      if (n === 1) return step === 0 ? writeProgress('first step\n') : say('one done');
      if (n === 2 && hung) return hang;
      return step === 0 ? writeProgress('first step\nDONE\n') : say('all done');
    });
    const opts = options(provider);
    runner = LoopRunner.create(opts, 'l', 'goal', defaultSettings());
    void runner.run();
    await requested.until(() => provider.requests.some((r) => iterationOf(r) === 2), () => 'iteration 2 never started');
    const interruptedTask = readState(workspace, 'l').iterations.at(-1)!.taskId;
    // The window reloads: everything of this process is gone, the files stay.
    runner.dispose();
    runtime.dispose();
    hung = false;
    runner = LoopRunner.open(options(provider), 'l');
    expect(await runner.run()).toBe('complete');
    const state = readState(workspace, 'l');
    expect(state.iteration).toBe(2);
    expect(state.iterations.map((i) => i.n)).toEqual([1, 2]);
    expect(state.iterations[1]!.taskId).not.toBe(interruptedTask);
  });

  it('cancel stops the running iteration and records the loop as cancelled', async () => {
    const requested = new Changes();
    const provider = new ScriptedProvider(() => {
      requested.notify();
      return { blocks: [{ type: 'text', text: 'slow' }], delayMs: 600_000 };
    });
    runner = LoopRunner.create(options(provider), 'l', 'goal', defaultSettings());
    const rest = runner.run();
    await requested.until(() => provider.requests.length > 0, () => 'no request');
    runner.cancel();
    expect(await rest).toBe('cancelled');
    expect(readState(workspace, 'l').status).toBe('cancelled');
    const taskId = readState(workspace, 'l').iterations[0]!.taskId;
    const task = runtime.get(taskId)!;
    const changed = new Changes();
    const stop = task.subscribe(changed.notify);
    await changed.until(() => task.transcript().state === 'aborted', () => `task is ${task.transcript().state}`);
    stop();
  });

  it('refuses a second runner of the same loop, and a taken name', async () => {
    const provider = new ScriptedProvider(() => ({ blocks: [{ type: 'text', text: 'slow' }], delayMs: 600_000 }));
    const opts = options(provider);
    runner = LoopRunner.create(opts, 'l', 'goal', defaultSettings());
    void runner.run();
    expect(() => LoopRunner.create(opts, 'l', 'goal', defaultSettings())).toThrow(/already exists/);
    expect(() => LoopRunner.open(opts, 'l').run()).toThrow(/is being run by test/);
    expect(() => LoopRunner.create(opts, '../x', 'goal', defaultSettings())).toThrow(/not a loop name/);
    expect(existsSync(join(workspace, '.keel', 'x'))).toBe(false);
  });
});
