import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { PermissionAsker } from '../../../src/core/permissions/gate';
import { ListProvider, end, midStreamError, start, textBlock, textTurn, thinkingBlock, toolBlock, toolTurn, type Step } from '../helpers/scriptedEvents';

function setup(steps: Step[], opts: { asker?: PermissionAsker; delayMs?: number } = {}) {
  const workspace = mkdtempSync(join(tmpdir(), 'keel-rt-'));
  const provider = new ListProvider(steps, opts.delayMs ?? 0);
  const runtime = new TaskRuntime({
    workspace,
    providerFactory: () => provider,
    limits: { retryBaseMs: 1 },
    ...(opts.asker ? { asker: opts.asker } : {}),
  });
  return { workspace, provider, runtime };
}

function collect(handle: { subscribe(l: (e: TaskEvent) => void): () => void }): TaskEvent[] {
  const events: TaskEvent[] = [];
  handle.subscribe((e) => events.push(e));
  return events;
}

describe('task runtime: the agent loop through the real machines', () => {
  it('streams a text answer and completes', async () => {
    const { runtime, provider } = setup([textTurn('Hello there, friend.')]);
    const task = runtime.startTask({ prompt: 'hi', provider: { provider: 'anthropic', model: 'claude-sonnet-4-5' } });
    const events = collect(task);
    const done = await task.settled();
    expect(done.status).toBe('completed');
    expect(events.filter((e) => e.type === 'text').map((e) => (e as { delta: string }).delta).join('')).toBe('Hello there, friend.');
    const items = task.transcript().items;
    expect(items.map((i) => i.kind)).toEqual(['user', 'assistant']);
    expect(provider.requests[0]!.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    expect(provider.requests[0]!.system.join('\n')).toContain('Workspace root');
  });

  it('runs tools across turns and sends all results of a turn in one user message', async () => {
    const steps: Step[] = [
      [start(), ...toolBlock(0, 't1', 'Write', { file_path: 'a.txt', content: 'one' }), ...toolBlock(1, 't2', 'Read', { file_path: 'a.txt' }), ...end('tool_use')],
      textTurn('Done.'),
    ];
    const { runtime, provider, workspace } = setup(steps);
    const task = runtime.startTask({ prompt: 'write then read', provider: { provider: 'anthropic', model: 'm' }, mode: 'acceptEdits' });
    const done = await task.settled();
    expect(done.status).toBe('completed');
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('one');
    const second = provider.requests[1]!.messages;
    const last = second[second.length - 1]!;
    expect(last.role).toBe('user');
    expect(last.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type))).toEqual(['t1', 't2']);
    expect(JSON.stringify(last.content[1])).toContain('one');
  });

  it('denies a command headless in default mode and tells the model why', async () => {
    const { runtime, provider } = setup([toolTurn('b1', 'Bash', { command: 'npm install left-pad' }), textTurn('ok')]);
    const task = runtime.startTask({ prompt: 'run', provider: { provider: 'anthropic', model: 'm' } });
    const events = collect(task);
    await task.settled();
    const results = provider.requests[1]!.messages.at(-1)!.content;
    expect(results[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'b1', is_error: true });
    expect(events.some((e) => e.type === 'permission' && e.decision === 'deny')).toBe(true);
  });

  it('asks the asker and runs the command when allowed', async () => {
    const asked: string[] = [];
    const asker: PermissionAsker = { ask: async (r) => (asked.push(r.tool), { decision: 'allow' }) };
    const { runtime, provider } = setup([toolTurn('b1', 'Bash', { command: 'echo from-bash > out.txt && cat out.txt' }), textTurn('ok')], { asker });
    const task = runtime.startTask({ prompt: 'run', provider: { provider: 'anthropic', model: 'm' } });
    await task.settled();
    expect(asked).toEqual(['Bash']);
    expect(JSON.stringify(provider.requests[1]!.messages.at(-1))).toContain('from-bash');
  });

  it('retries a mid-stream overload and never sends the partial answer back', async () => {
    const { runtime, provider } = setup([midStreamError(), textTurn('Recovered answer.')]);
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    const events = collect(task);
    const done = await task.settled();
    expect(done.status).toBe('completed');
    expect(events.some((e) => e.type === 'retry' && e.code === 'overloaded')).toBe(true);
    expect(provider.requests).toHaveLength(2);
    expect(JSON.stringify(provider.requests[1]!.messages)).not.toContain('partial');
    const assistants = task.transcript().items.filter((i) => i.kind === 'assistant');
    expect(assistants.at(-1)).toMatchObject({ text: 'Recovered answer.', streaming: false });
    expect(assistants[0]).toMatchObject({ retried: true });
    expect(assistants[0]).not.toHaveProperty('interrupted');
  });

  it('waits with a retryable error after the retry limit, and Retry sends again', async () => {
    const steps: Step[] = [midStreamError(), midStreamError(), midStreamError(), midStreamError(), textTurn('finally')];
    const { runtime, provider } = setup(steps);
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    const first = await task.settled();
    expect(first.status).toBe('failed');
    expect(provider.requests).toHaveLength(4);
    expect(task.transcript().items.at(-1)).toMatchObject({ kind: 'error', code: 'overloaded', retryable: true });
    task.retry();
    await new Promise((r) => setTimeout(r, 0));
    const second = await task.settled();
    expect(second.status).toBe('completed');
  });

  it('never executes a tool input cut off by max_tokens, and continues once', async () => {
    const steps: Step[] = [
      [start(), ...textBlock(0, 'Writing it'), ...toolBlock(1, 'w1', 'Write', { file_path: 'x.txt', content: 'never' }, { stop: false }).slice(0, 3), ...end('max_tokens')],
      textTurn('Continued.'),
    ];
    const { runtime, provider, workspace } = setup(steps);
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' }, mode: 'bypassPermissions' });
    const done = await task.settled();
    expect(done.status).toBe('completed');
    expect(() => readFileSync(join(workspace, 'x.txt'))).toThrow();
    expect(JSON.stringify(provider.requests[1]!.messages.at(-1))).toContain('NOT run');
  });

  it('sends thinking blocks back unchanged, signature included', async () => {
    const steps: Step[] = [[start(), ...thinkingBlock(0, 'Let me think.', 'sig-123'), ...toolBlock(1, 'r1', 'Glob', { pattern: '*.md' }), ...end('tool_use')], textTurn('ok')];
    const { runtime, provider } = setup(steps);
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    await task.settled();
    const assistant = provider.requests[1]!.messages[1]!;
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think.', signature: 'sig-123' });
  });

  it('cancel aborts the stream and the task ends aborted; a follow-up continues the conversation', async () => {
    const { runtime, provider } = setup([textTurn('a very long answer '.repeat(50)), textTurn('second')], { delayMs: 2 });
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    await new Promise((r) => setTimeout(r, 30));
    task.cancel();
    const done = await task.settled();
    expect(done.status).toBe('aborted');
    task.sendUserMessage('again');
    await new Promise((r) => setTimeout(r, 0));
    const next = await task.settled();
    expect(next.status).toBe('completed');
    expect(provider.maxInFlight).toBe(1);
  });

  it('reports a provider that cannot be created (no key) as a visible error', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-rt-'));
    const runtime = new TaskRuntime({ workspace, providerFactory: () => ({ code: 'no_api_key', message: 'No API key set.', retryable: true }) });
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    const done = await task.settled();
    expect(done.status).toBe('failed');
    expect(task.transcript().items.at(-1)).toMatchObject({ kind: 'error', code: 'no_api_key' });
  });

  it('appends the host’s advice to an error the person can fix, in the event, the log and the transcript', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-rt-'));
    const asked: unknown[] = [];
    const runtime = new TaskRuntime({
      workspace,
      providerFactory: () => ({ code: 'no_api_key', message: 'No API key set.', retryable: false }),
      advise: (failure) => {
        asked.push(failure);
        return failure.code === 'no_api_key' ? 'Do the host thing.' : undefined;
      },
    });
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'openai-compatible', model: 'm' } });
    const events = collect(task);
    await task.settled();
    expect(events.filter((e) => e.type === 'error')).toEqual([expect.objectContaining({ code: 'no_api_key', message: 'No API key set. Do the host thing.' })]);
    expect(task.transcript().items.at(-1)).toMatchObject({ kind: 'error', message: 'No API key set. Do the host thing.' });
    expect(asked).toEqual([{ code: 'no_api_key', provider: 'openai-compatible', taskId: task.id }]);
  });

  it('leaves an error without advice as core wrote it', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'keel-rt-'));
    const runtime = new TaskRuntime({ workspace, providerFactory: () => ({ code: 'internal', message: 'Broken.', retryable: false }), advise: () => undefined });
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    const events = collect(task);
    await task.settled();
    expect(events.filter((e) => e.type === 'error').map((e) => e.type === 'error' && e.message)).toEqual(['Broken.']);
  });

  it('runs a subtask: the parent waits, the child result comes back as the tool result', async () => {
    const steps: Step[] = [toolTurn('k1', 'Task', { description: 'count', prompt: 'count files' }), textTurn('child answer: 3 files'), textTurn('parent done')];
    const { runtime, provider } = setup(steps);
    const task = runtime.startTask({ prompt: 'delegate', provider: { provider: 'anthropic', model: 'm' } });
    const events = collect(task);
    const done = await task.settled();
    expect(done.status).toBe('completed');
    expect(events.some((e) => e.type === 'task' && e.state === 'waitingForSubtask')).toBe(true);
    const parentSecond = provider.requests[2]!.messages.at(-1)!.content[0];
    expect(parentSecond).toMatchObject({ type: 'tool_result', tool_use_id: 'k1', content: 'child answer: 3 files' });
  });

  it('an unknown tool or invalid input becomes an error result, not a crash', async () => {
    writeFileSync(join(mkdtempSync(join(tmpdir(), 'x')), 'f'), '');
    const steps: Step[] = [[start(), ...toolBlock(0, 'u1', 'Nope', {}), ...toolBlock(1, 'u2', 'Read', { wrong: 1 }), ...end('tool_use')], textTurn('ok')];
    const { runtime, provider } = setup(steps);
    const task = runtime.startTask({ prompt: 'q', provider: { provider: 'anthropic', model: 'm' } });
    expect((await task.settled()).status).toBe('completed');
    const results = provider.requests[1]!.messages.at(-1)!.content;
    expect(results[0]).toMatchObject({ tool_use_id: 'u1', is_error: true });
    expect(JSON.stringify(results[0])).toContain('unknown tool');
    expect(results[1]).toMatchObject({ tool_use_id: 'u2', is_error: true });
  });

  it('a mode change reaches the running turn: the next call is decided under the new mode', async () => {
    const { runtime, provider, workspace } = setup([toolTurn('w1', 'Write', { file_path: 'm.txt', content: 'x' }), textTurn('ok')], { delayMs: 5 });
    const task = runtime.startTask({ prompt: 'write', provider: { provider: 'anthropic', model: 'm' }, mode: 'default' });
    task.setMode('acceptEdits');
    expect((await task.settled()).status).toBe('completed');
    expect(readFileSync(join(workspace, 'm.txt'), 'utf8')).toBe('x');
    expect(provider.requests).toHaveLength(2);
  });

  it('finds the subtask a parent started for a Task call', async () => {
    const steps: Step[] = [toolTurn('k9', 'Task', { description: 'd', prompt: 'p' }), textTurn('child says hi'), textTurn('parent done')];
    const { runtime } = setup(steps);
    const task = runtime.startTask({ prompt: 'delegate', provider: { provider: 'anthropic', model: 'm' } });
    await task.settled();
    const child = runtime.subtaskFor(task.id, 'k9');
    expect(child?.transcript().items.find((i) => i.kind === 'assistant')).toMatchObject({ text: 'child says hi' });
    expect(runtime.subtaskFor(task.id, 'nope')).toBeUndefined();
  });
});
