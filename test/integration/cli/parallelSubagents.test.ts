import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn, type RecordedRequest } from '../../fixtures/fake-model-server';
import { changesOf, eventually } from '../../unit/helpers/changes';
import { cliBundle, runCli } from './cliHarness';

/**
 * Parallel sub-agents as a person runs them: `keel run` (in process, and with `--workers 3`)
 * against the fake model server, whose parent turn makes three Task calls. Each child's answer
 * is routed by its prompt (`when`), so which child arrives first does not matter; the children's
 * answers are held until all three requests are in flight, and the server's log of arrivals and
 * finishes shows whether they overlapped.
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test-parallel' };
// No project memory: its lesson call after each run is a model request of its own, not part of the agent loop here.
const provider = (baseUrl: string) => ['--provider', 'anthropic', '--base-url', baseUrl, '--model', 'claude-test', '--workspace', workspace, '--no-memory'];
const CHILDREN = ['alpha', 'bravo', 'charlie'] as const;

const taskCall = (name: string): FakeTurn['blocks'][number] => ({ type: 'tool_use', id: `toolu_${name}`, name: 'Task', input: { description: `count ${name}`, prompt: `child-${name}: count the ${name} files` } });

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-parallel-ws-'));
});
afterEach(async () => {
  await server.close();
});

/** The tool results of a request's last message, as [tool_use_id, text, is_error]. */
function lastResults(r: RecordedRequest): [string, string, boolean][] {
  const last = (r.body as { messages: { content: unknown }[] }).messages.at(-1)!;
  const blocks = Array.isArray(last.content) ? (last.content as { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }[]) : [];
  return blocks.filter((b) => b.type === 'tool_result').map((b) => [b.tool_use_id!, JSON.stringify(b.content), b.is_error === true]);
}

/** Every task the run recorded (parent and children), with their status. */
function recordedStatuses(storage: string): Map<string, string> {
  const dir = join(storage, 'tasks');
  return new Map(readdirSync(dir).map((id) => [id, (JSON.parse(readFileSync(join(dir, id, 'meta.json'), 'utf8')) as { status: string }).status]));
}

describe.each([
  ['in process', [] as string[]],
  ['on workers', ['--workers', '3']],
])('keel run: a turn with three Task calls (%s)', (_label, workers) => {
  it('runs the three sub-agents at once, and the parent sends one next request with the three results in call order', async () => {
    server.enqueue(
      { blocks: CHILDREN.map(taskCall) },
      // Enqueued in the reverse of the call order: each child still gets its own answer.
      ...[...CHILDREN].reverse().map((name): FakeTurn => ({ when: `child-${name}`, holdUntilInFlight: 3, blocks: [{ type: 'text', text: `There are 7 ${name} files.` }] })),
      { blocks: [{ type: 'text', text: 'All three counted.' }] },
    );
    const run = await runCli(['run', 'count everything', ...provider(server.url), '--mode', 'bypassPermissions', '--output-format', 'stream-json', ...workers], KEY);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });

    const parent = server.requests[0]!.taskId;
    const children = server.requests.filter((r) => r.taskId !== parent);
    expect(children).toHaveLength(3);
    expect(new Set(children.map((r) => r.taskId)).size).toBe(3);
    // Overlap: every child's request arrived before any child's answer finished.
    const lastArrival = Math.max(...children.map((r) => r.receivedSeq));
    const firstFinish = Math.min(...children.map((r) => r.finishedSeq ?? Number.POSITIVE_INFINITY));
    expect(lastArrival, `a child request arrived only after another child had its answer: ${JSON.stringify(server.requests.map((r) => [r.taskId, r.receivedSeq, r.finishedSeq]))}`).toBeLessThan(firstFinish);

    // The parent resumed exactly once, with every result, in the order of its calls.
    const parentRequests = server.requests.filter((r) => r.taskId === parent);
    expect(parentRequests).toHaveLength(2);
    const results = lastResults(parentRequests[1]!);
    expect(results.map(([id]) => id)).toEqual(CHILDREN.map((n) => `toolu_${n}`));
    results.forEach(([, text, isError], i) => {
      expect(text).toContain(`There are 7 ${CHILDREN[i]} files.`);
      expect(isError).toBe(false);
    });
    expect([...recordedStatuses(run.storage).values()].sort()).toEqual(['completed', 'completed', 'completed', 'completed']);
  });

  it("one child's failure is that child's result; the others still complete", async () => {
    server.enqueue(
      { blocks: CHILDREN.map(taskCall) },
      { when: 'child-alpha', blocks: [{ type: 'text', text: 'There are 7 alpha files.' }] },
      { when: 'child-bravo', blocks: [], fault: { kind: 'http', status: 400, errorType: 'invalid_request_error', message: 'bravo cannot be counted' } },
      { when: 'child-charlie', blocks: [{ type: 'text', text: 'There are 7 charlie files.' }] },
      { blocks: [{ type: 'text', text: 'Two of three counted.' }] },
    );
    const run = await runCli(['run', 'count everything', ...provider(server.url), '--mode', 'bypassPermissions', '--output-format', 'stream-json', ...workers], KEY);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    const parent = server.requests[0]!.taskId;
    const parentRequests = server.requests.filter((r) => r.taskId === parent);
    expect(parentRequests).toHaveLength(2);
    const results = lastResults(parentRequests[1]!);
    expect(results.map(([id, , isError]) => [id, isError])).toEqual([
      ['toolu_alpha', false],
      ['toolu_bravo', true],
      ['toolu_charlie', false],
    ]);
    expect(results[1]![1]).toMatch(/The subtask ended failed/);
    expect(results[2]![1]).toContain('There are 7 charlie files.');
  });

  it('cancelling the parent (Ctrl+C) cancels all three children', async () => {
    server.enqueue(
      { blocks: CHILDREN.map(taskCall) },
      // The children's answers never come: they wait until cancelled.
      ...CHILDREN.map((name): FakeTurn => ({ when: `child-${name}`, blocks: [{ type: 'text', text: 'never' }], fault: { kind: 'stall', afterEvents: 1 } })),
    );
    const run = await runCli(['run', 'count everything', ...provider(server.url), '--mode', 'bypassPermissions', '--output-format', 'stream-json', ...workers], KEY);
    const parent = () => server.requests[0]?.taskId;
    await eventually(() => server.requests.filter((r) => r.taskId !== parent()).length === 3, () => `three child requests (got ${server.requests.length}; stderr: ${run.stderr()})`, changesOf(server));
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(1);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'aborted' });
    // Every child's request was abandoned (its socket closed), and no one sent another.
    const children = server.requests.filter((r) => r.taskId !== parent());
    expect(children).toHaveLength(3);
    await eventually(() => children.every((r) => r.finishedSeq !== null), () => 'the children\'s requests closed', changesOf(server));
    expect(server.requests).toHaveLength(4);
    const statuses = recordedStatuses(run.storage);
    expect(statuses.get(parent()!)).toBe('aborted');
    expect([...statuses.entries()].filter(([id]) => id !== parent()).map(([, s]) => s)).toEqual(['aborted', 'aborted', 'aborted']);
  });
});
