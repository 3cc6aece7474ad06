import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { PermissionAsker } from '../../../src/core/permissions/gate';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { ModelProvider, ProviderEvent, ProviderRequest } from '../../../src/core/providers/types';
import { ListProvider, start, textBlock, textTurn, toolTurn, type Step } from '../helpers/scriptedEvents';

function runtimeWith(storageDir: string, workspace: string, steps: Step[], asker: PermissionAsker) {
  const provider = new ListProvider(steps);
  const runtime = new TaskRuntime({ workspace, storageDir, providerFactory: () => provider, limits: { retryBaseMs: 1 }, asker, ownerLabel: 'test' });
  return { provider, runtime };
}

const anthropic = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5' };

describe('TaskRuntime with a store: interrupted tasks resume from their log', () => {
  it('never re-runs a tool whose result was not recorded; asking again goes through permissions', async () => {
    const storage = mkdtempSync(join(tmpdir(), 'keel-rs-'));
    const workspace = mkdtempSync(join(tmpdir(), 'keel-ws-'));
    const marker = join(workspace, 'ran.txt');
    const command = `echo ran >> ${marker}; sleep 20`;
    const asks: string[] = [];
    const asker: PermissionAsker = { ask: async (r) => (asks.push(r.toolCallId), { decision: 'allow' }) };

    // First host: the command starts, then the host goes away in the middle of it.
    const first = runtimeWith(storage, workspace, [toolTurn('b1', 'Bash', { command })], asker);
    const task = first.runtime.startTask({ prompt: 'run it', provider: anthropic });
    const started = new Promise<void>((resolve) => task.subscribe((e) => e.type === 'turn' && e.state === 'executingTool' && resolve()));
    await started;
    for (let i = 0; i < 100 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 20));
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');
    first.runtime.dispose();
    await first.runtime.closed();

    // Second host: the task shows as interrupted and resumes.
    const second = runtimeWith(storage, workspace, [toolTurn('b2', 'Bash', { command: `echo again >> ${marker}` }), textTurn('All done.')], asker);
    const listed = await second.runtime.listStored();
    expect(listed.tasks.map((t) => [t.id, t.status])).toEqual([[task.id, 'interrupted']]);
    const inspected = await second.runtime.inspect(task.id);
    expect(inspected.kind === 'stored' && inspected.summary.status).toBe('interrupted');

    const resumed = await second.runtime.resume(task.id, { provider: anthropic, followUp: 'please check' });
    const events: TaskEvent[] = [];
    resumed.subscribe((e) => events.push(e));
    const done = await resumed.settled();
    expect(done.status).toBe('completed');
    expect(events.filter((e) => e.type === 'task').map((e) => (e as { state: string }).state).slice(0, 4)).toEqual(['interrupted', 'reconstructing', 'initializing', 'running']);

    const sent = second.provider.requests[0]!.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']); // the unconfirmed result and the note, merged
    const result = sent[2]!.content.find((b) => b.type === 'tool_result');
    expect(result).toMatchObject({ tool_use_id: 'b1', is_error: true });
    expect(JSON.stringify(result)).toContain('not confirmed to have run');
    expect(JSON.stringify(sent.at(-1))).toContain('please check');
    expect(JSON.stringify(sent.at(-1))).toMatch(/interrupted \d+ seconds? ago/);
    // b1 was never run again; the model's new call b2 was asked about and ran once.
    expect(asks).toEqual(['b1', 'b2']);
    expect(readFileSync(marker, 'utf8')).toBe('ran\nagain\n');
    second.runtime.dispose();
    await second.runtime.closed();

    // A third host replays the whole log, repairs and note included, to the same conversation.
    const third = runtimeWith(storage, workspace, [textTurn('ok')], asker);
    const again = await third.runtime.resume(task.id, { provider: anthropic, followUp: 'and now?' });
    await again.settled();
    const replayed = third.provider.requests[0]!.messages;
    expect(replayed.slice(0, sent.length)).toEqual(sent);
    third.runtime.dispose();
  });

  it('keeps a cut-off answer visible, marked interrupted, and sends it back as the assistant turn', async () => {
    const storage = mkdtempSync(join(tmpdir(), 'keel-rs-'));
    const workspace = mkdtempSync(join(tmpdir(), 'keel-ws-'));
    const asker: PermissionAsker = { ask: async () => ({ decision: 'deny' }) };
    // A stream that stops sending mid-answer (until aborted): the host goes away during it.
    const hanging: ModelProvider = {
      id: 'scripted',
      label: 'hangs mid-answer',
      async *stream(_req: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
        yield start();
        yield* textBlock(0, 'The first half', 4).slice(0, -1);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      },
    };
    const first = new TaskRuntime({ workspace, storageDir: storage, providerFactory: () => hanging, asker });
    const handle = first.startTask({ prompt: 'explain', provider: anthropic });
    let streamed = '';
    await new Promise<void>((resolve) =>
      handle.subscribe((e) => {
        if (e.type === 'text') streamed += e.delta;
        if (streamed === 'The first half') resolve();
      }),
    );
    first.dispose();
    await first.closed();

    const second = runtimeWith(storage, workspace, [textTurn('...and the second half.')], asker);
    const inspected = await second.runtime.inspect(handle.id);
    if (inspected.kind !== 'stored') throw new Error('expected a stored task');
    const items = inspected.task.replay.transcript.items;
    expect(items.at(-1)).toMatchObject({ kind: 'assistant', text: 'The first half', interrupted: true, streaming: false });
    const resumed = await second.runtime.resume(handle.id, { provider: anthropic });
    await resumed.settled();
    const sent = second.provider.requests[0]!.messages;
    expect(sent[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'The first half' }] });
    expect(JSON.stringify(sent[2])).toContain('cut off after 14 characters');
    expect(JSON.stringify(sent[2])).toContain('Continue from where you stopped.');
    expect(resumed.transcript().items.find((i) => i.kind === 'assistant' && i.interrupted)).toBeTruthy();
    second.runtime.dispose();
  });
});
