import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../../fixtures/fake-model-server';
import { runCli } from './cliHarness';

/**
 * The replay regression corpus: tasks recorded by real `keel run`s against the fake model server,
 * in several shapes, each replayed with `keel tasks replay` (as a person would) — the same events
 * must come out in the same order. Then a log altered by hand shows its first difference.
 */
const SHAPES: Record<string, FakeTurn[]> = {
  'text only': [{ blocks: [{ type: 'text', text: 'Hello! Nothing to do here, the answer is 42.' }] }],
  'tool calls': [
    { blocks: [{ type: 'text', text: 'Let me read it.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'a.txt' } }] },
    { blocks: [{ type: 'thinking', thinking: 'It says hello.', signature: 'sig-1' }, { type: 'tool_use', name: 'Glob', input: { pattern: '*.txt' } }] },
    { blocks: [{ type: 'text', text: 'a.txt says hello; it is the only text file.' }] },
  ],
  'a denied permission': [
    { blocks: [{ type: 'text', text: 'I will write it.' }, { type: 'tool_use', name: 'Write', input: { file_path: 'b.txt', content: 'new' } }] },
    { blocks: [{ type: 'text', text: 'The write was denied; stopping.' }] },
  ],
  'a sub-agent': [
    { blocks: [{ type: 'tool_use', name: 'Task', input: { description: 'look around', prompt: 'Read the text file.' } }] },
    // The sub-agent: its own tool round (its permission decision comes between its parent's), then its answer.
    { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: 'a.txt' } }] },
    { blocks: [{ type: 'text', text: 'a.txt says hello.' }] },
    { blocks: [{ type: 'text', text: 'The sub-agent found a.txt.' }] },
  ],
  'a retry after a 5xx': [
    { blocks: [], fault: { kind: 'http', status: 529 } },
    { blocks: [], fault: { kind: 'http', status: 500 } },
    { blocks: [{ type: 'text', text: 'Answered on the third attempt.' }] },
  ],
};

describe('keel tasks replay', () => {
  let dir: string;
  let ws: string;
  let server: FakeModelServer;
  const recorded = new Map<string, { storage: string; id: string }>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-replay-'));
    ws = join(dir, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'a.txt'), 'hello\n');
    server = await startFakeModelServer({});
    for (const [shape, turns] of Object.entries(SHAPES)) {
      server.enqueue(...turns);
      const storage = join(dir, shape.replace(/\W+/g, '-'));
      const run = await runCli(['run', `do it: ${shape}`, '--provider', 'anthropic', '--base-url', server.url, '--workspace', ws, '--output-format', 'stream-json'], { ANTHROPIC_API_KEY: 'test-key' }, storage);
      const exit = await run.exit;
      expect(exit.code, run.stderr()).toBe(0);
      const ids = readdirSync(join(storage, 'tasks')).filter((n) => !n.startsWith('.'));
      const root = ids.find((id) => !readFileSync(join(storage, 'tasks', id, 'meta.json'), 'utf8').includes('"parentId"'))!;
      recorded.set(shape, { storage, id: root });
    }
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const shape of Object.keys(SHAPES)) {
    it(`replays a task with ${shape}: the same events in the same order`, async () => {
      const { storage, id } = recorded.get(shape)!;
      const before = readFileSync(join(storage, 'tasks', id, 'events.jsonl'), 'utf8');
      const requests = server.requests.length;
      // The server's URL is passed on purpose: a replay must not use it.
      const run = await runCli(['tasks', 'replay', id], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url }, storage);
      const exit = await run.exit;
      expect(run.stdout() + run.stderr()).toMatch(/came out the same, in the same order/);
      expect(exit.code).toBe(0);
      // A replay never writes the task, nor calls the model.
      expect(readFileSync(join(storage, 'tasks', id, 'events.jsonl'), 'utf8')).toBe(before);
      expect(server.requests.length).toBe(requests);
    }, 60_000);
  }

  it('replays a task of two runs, each followed by the lesson call whose cost the later totals include', async () => {
    const storage = join(dir, 'two-runs');
    const run = (...args: string[]) => runCli(['run', ...args, '--provider', 'anthropic', '--base-url', server.url, '--workspace', ws, '--output-format', 'stream-json'], { ANTHROPIC_API_KEY: 'test-key' }, storage);
    server.enqueue({ blocks: [{ type: 'text', text: 'First answer.' }] });
    const first = await run('first question');
    expect((await first.exit).code, first.stderr()).toBe(0);
    const id = readdirSync(join(storage, 'tasks')).filter((n) => !n.startsWith('.'))[0]!;
    server.enqueue({ blocks: [{ type: 'text', text: 'Second answer.' }] });
    const second = await run('--resume', id, 'second question');
    expect((await second.exit).code, second.stderr()).toBe(0);
    // Two turns and two lesson calls were charged: the second turn's total holds the first lesson's cost.
    const usage = readFileSync(join(storage, 'tasks', id, 'events.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"type":"usage"'));
    expect(usage).toHaveLength(4);
    const replay = await runCli(['tasks', 'replay', id], { ANTHROPIC_API_KEY: 'test-key' }, storage);
    const replayed = await replay.exit;
    expect(replay.stdout() + replay.stderr()).toMatch(/came out the same, in the same order/);
    expect(replayed.code).toBe(0);
  }, 120_000);

  it('shows the first diverging event of a log altered by hand, and exits 1', async () => {
    const { storage, id } = recorded.get('tool calls')!;
    const path = join(storage, 'tasks', id, 'events.jsonl');
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    // What the machines decide, not what is played back: the log now says the cost of the first
    // model call was ten times what its tokens cost.
    const at = lines.findIndex((l) => l.includes('"type":"usage"'));
    lines[at] = lines[at]!.replace(/"costUsd":([0-9.e-]+)/, (_m, c: string) => `"costUsd":${Number(c) * 10}`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    const run = await runCli(['tasks', 'replay', id], {}, storage);
    const exit = await run.exit;
    expect(exit.code).toBe(1);
    const out = run.stdout();
    // The index is the usage line's (line 1 is the header; no deltas were merged before it).
    expect(out).toContain(`first difference at event ${at - 1} `);
    const expectedLine = /expected: (.*)/.exec(out)![1]!;
    const actualLine = /actual: {3}(.*)/.exec(out)![1]!;
    expect(JSON.parse(expectedLine)).toMatchObject({ type: 'usage' });
    expect(JSON.parse(actualLine)).toMatchObject({ type: 'usage' });
    expect((JSON.parse(expectedLine) as { costUsd: number }).costUsd).toBeCloseTo((JSON.parse(actualLine) as { costUsd: number }).costUsd * 10);
  }, 60_000);

  it('compares only the first N events with --until N', async () => {
    const { storage, id } = recorded.get('text only')!;
    const run = await runCli(['tasks', 'replay', id, '--until', '5'], {}, storage);
    expect((await run.exit).code).toBe(0);
    expect(run.stdout()).toMatch(/the 5 events compared came out the same/);
    const bad = await runCli(['tasks', 'replay', id, '--until', 'soon'], {}, storage);
    expect((await bad.exit).code).toBe(2);
    expect(bad.stderr()).toMatch(/--until needs a positive whole number/);
  }, 60_000);
});
