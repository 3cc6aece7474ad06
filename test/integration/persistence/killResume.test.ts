import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/shared/domain/events';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { buildCli, runCli, startCli } from './cliHelpers';

interface SentMessage {
  role: string;
  content: string | { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown }[];
}

const LONG_ANSWER = Array.from({ length: 400 }, (_, i) => `Sentence ${i} of a long answer about the notes. `).join('');

describe('kill -9 of keel run in the middle of a streamed answer, then resume', () => {
  let dir: string;
  let cli: string;
  let server: FakeModelServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-kill-'));
    cli = await buildCli(dir);
    server = await startFakeModelServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the prompt, the tool round and the cut-off text, and continues with a note', async () => {
    const ws = join(dir, 'ws');
    const storage = join(dir, 'store');
    mkdirSync(ws);
    mkdirSync(storage); // a --storage folder must exist
    writeFileSync(join(ws, 'notes.txt'), 'The launch is on Tuesday. Bring the blue folder.\n');
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_read1', name: 'Read', input: { file_path: 'notes.txt' } }] },
      // Slow: ~20,000 characters in 8-character deltas, 20 ms apart (over a minute if not killed).
      { blocks: [{ type: 'text', text: LONG_ANSWER }], chunkSize: 8, delayMs: 20 },
    );
    const env = { ANTHROPIC_API_KEY: 'test-key', HOME: dir };
    const common = ['--provider', 'anthropic', '--base-url', server.url, '--storage', storage];
    const run = startCli(cli, ['run', 'Summarize notes.txt', '--mode', 'default', '--workspace', ws, '--output-format', 'stream-json', ...common], env);

    // The tool round completed, then some of the answer was streamed.
    await run.waitForLine((_l, all) => {
      const events = all.map((l) => JSON.parse(l) as TaskEvent);
      const resultAt = events.findIndex((e) => e.type === 'tool_result');
      return resultAt >= 0 && events.slice(resultAt).filter((e) => e.type === 'text').length >= 30;
    });
    const streamedText = () =>
      run.lines
        .map((l) => JSON.parse(l) as TaskEvent)
        .filter((e): e is Extract<TaskEvent, { type: 'text' }> => e.type === 'text')
        .map((e) => e.delta)
        .join('');
    // What was streamed more than a second before the kill must survive it (the checkpoint
    // interval is 250 ms); what came in the last second may be lost.
    const streamedASecondBefore = streamedText();
    await new Promise((r) => setTimeout(r, 1100));
    const taskId = (JSON.parse(run.lines[0]!) as TaskEvent).taskId;
    const streamedBeforeKill = streamedText();
    run.child.kill('SIGKILL');
    expect(await run.exited).toBe('SIGKILL');
    expect(streamedBeforeKill.length).toBeGreaterThan(0);
    expect(streamedBeforeKill.length).toBeLessThan(LONG_ANSWER.length);

    const listed = await runCli(cli, ['tasks', 'list', '--json', '--storage', storage], env);
    expect(listed.code).toBe(0);
    const tasks = JSON.parse(listed.stdout) as { id: string; status: string; title: string; tokens: number; createdAt: string; updatedAt: string; cost: number }[];
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ id: taskId, status: 'interrupted', title: 'Summarize notes.txt' });
    expect(Object.keys(tasks[0]!)).toEqual(expect.arrayContaining(['id', 'title', 'status', 'createdAt', 'updatedAt', 'tokens', 'cost']));

    const shown = await runCli(cli, ['tasks', 'show', taskId.slice(0, 8), '--storage', storage], env);
    expect(shown.stdout).toContain('status:    interrupted');
    expect(shown.stdout).toContain('(interrupted: the answer was cut off)');

    server.enqueue({ blocks: [{ type: 'text', text: 'Picking up: the launch is on Tuesday.' }] });
    const before = server.requests.length;
    const resumed = await runCli(cli, ['run', '--resume', taskId, 'go on', '--output-format', 'stream-json', ...common], env);
    expect(resumed.stderr).not.toContain('keel');
    expect(resumed.code).toBe(0);
    const resumedEvents = resumed.stdout.split('\n').map((l) => JSON.parse(l) as TaskEvent);
    expect(resumedEvents.filter((e) => e.type === 'task').map((e) => (e as { state: string }).state)).toEqual(['interrupted', 'reconstructing', 'initializing', 'running', 'completed']);

    // What the model got: the earlier prompt, tool call and result intact, the cut-off answer, then the note.
    // The resumed run's one request, then the gatekeeper's lesson call (docs/memory.md).
    expect(server.requests.length).toBe(before + 2);
    const messages = (server.requests[before]!.body as { messages: SentMessage[] }).messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(messages[0])).toContain('Summarize notes.txt');
    const toolUse = (messages[1]!.content as { type: string; id?: string; name?: string; input?: unknown }[]).find((b) => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ id: 'toolu_read1', name: 'Read', input: { file_path: 'notes.txt' } });
    const toolResult = (messages[2]!.content as { type: string; tool_use_id?: string; content?: unknown }[])[0]!;
    expect(toolResult).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_read1' });
    expect(JSON.stringify(toolResult.content)).toContain('The launch is on Tuesday.');
    const partial = (messages[3]!.content as { type: string; text?: string }[])[0]!.text ?? '';
    expect(partial.length).toBeGreaterThan(0);
    // Nothing streamed more than a second before the kill was lost; nothing was invented.
    expect(LONG_ANSWER.startsWith(partial)).toBe(true);
    expect(partial.length).toBeGreaterThanOrEqual(streamedASecondBefore.trimEnd().length);
    expect(partial.length).toBeLessThan(LONG_ANSWER.length);
    const note = JSON.stringify(messages[4]);
    expect(note).toMatch(/interrupted \d+ seconds? ago/);
    expect(note).toContain('cut off after');
    expect(note).toContain('go on');

    const after = JSON.parse((await runCli(cli, ['tasks', 'list', '--json', '--storage', storage], env)).stdout) as { status: string }[];
    expect(after[0]!.status).toBe('completed');
    // The log still holds every event of the first run, in order, once.
    const log = readFileSync(join(storage, 'tasks', taskId, 'events.jsonl'), 'utf8').trim().split('\n');
    expect(log.filter((l) => l.includes('"type":"tool_call"'))).toHaveLength(1);
  });
});
