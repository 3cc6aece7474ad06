import { describe, expect, it } from 'vitest';
import { taskTool } from '../../../src/core/tools/task';
import type { SubtaskRunner, ToolResult } from '../../../src/core/tools/types';
import { makeContext } from './helpers';

/** A runner that records its calls and answers from a function. */
class RecordingRunner implements SubtaskRunner {
  readonly calls: Array<{ description: string; prompt: string; signal: AbortSignal }> = [];
  constructor(private readonly answer: () => Promise<ToolResult>) {}
  run(description: string, prompt: string, signal: AbortSignal): Promise<ToolResult> {
    this.calls.push({ description, prompt, signal });
    return this.answer();
  }
}

describe('Task', () => {
  it('runs the subtask and returns its answer', async () => {
    const runner = new RecordingRunner(async () => ({ content: 'found 3 callers', isError: false, summary: 'subtask done' }));
    const ctx = makeContext('/tmp', { subtasks: runner });
    const r = await taskTool.invoke({ description: 'find callers', prompt: 'Find every caller of f' }, ctx);
    expect(r).toEqual({ content: 'found 3 callers', isError: false, summary: 'subtask done' });
    expect(runner.calls).toEqual([{ description: 'find callers', prompt: 'Find every caller of f', signal: ctx.signal }]);
  });

  it('is an error result when there is no runner', async () => {
    const r = await taskTool.invoke({ description: 'x', prompt: 'y' }, makeContext('/tmp'));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('not available');
  });

  it('turns a failing runner into an error result', async () => {
    const runner = new RecordingRunner(async () => {
      throw new Error('provider unreachable');
    });
    const r = await taskTool.invoke({ description: 'x', prompt: 'y' }, makeContext('/tmp', { subtasks: runner }));
    expect(r.isError).toBe(true);
    expect(r.content).toContain('provider unreachable');
  });

  it('describes itself as a task subject', () => {
    expect(taskTool.subject({ description: 'find callers', prompt: 'p' }, { workspace: '/tmp' })).toEqual({ kind: 'task', tool: 'Task', summary: 'Subtask: find callers' });
  });
});
