import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * `--max-budget-usd`: the task pauses before the request that could take it over its cap — the
 * scripted server never sees that request — and goes on once the cap is raised. The model is a
 * priced one (claude-sonnet: $3 per million input tokens, $15 output); a request is priced at its
 * worst, its input plus its 8,192 output tokens at most (about $0.15 here); the usage is what the
 * server reports.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (...extra: string[]) => ['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-sonnet-4-5', '--output-format', 'stream-json', '--no-memory', ...extra];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-budget-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-budget-home-'));
  writeFileSync(join(workspace, 'notes.txt'), 'hello\n');
});
afterEach(async () => {
  await server.close();
});

// 100,000 input tokens ($0.30) and 1,000 output tokens ($0.015): $0.315 for the first answer.
const bigRead = { blocks: [{ type: 'tool_use' as const, id: 'toolu_r', name: 'Read', input: { file_path: 'notes.txt' } }], usage: { input_tokens: 100_000, output_tokens: 1000 } };
const done = { blocks: [{ type: 'text' as const, text: 'All read.' }], usage: { input_tokens: 1000, output_tokens: 10 } };
const cost = (u: { input_tokens: number; output_tokens: number }) => (u.input_tokens * 3 + u.output_tokens * 15) / 1e6;

describe('budget caps', () => {
  for (const workers of ['0', '1']) {
    it(`pauses before the request that could exceed the cap, then continues once it is raised (workers ${workers})`, async () => {
      server.enqueue(bigRead, done);
      const r = await runCli(['run', 'read the notes', '--workspace', workspace, ...args('--max-budget-usd', '0.4', '--workers', workers)], KEY, storage);
      expect((await r.exit).code, r.stderr()).toBe(6);
      // The second request (its worst case about $0.15 more after $0.315) could go past $0.40: never sent.
      expect(server.requests).toHaveLength(1);
      expect(cost(bigRead.usage)).toBeLessThanOrEqual(0.4);
      const error = ofType(r.events, 'error').at(-1)!;
      expect(error).toMatchObject({ code: 'budget_exceeded', retryable: true });
      expect(String(error.message)).toMatch(/the task has spent \$0\.32 of its \$0\.40 budget, and the request could cost up to \$0\.1\d/);
      expect(ofType(r.events, 'task').at(-1)).toMatchObject({ state: 'pausedForBudget', tags: expect.arrayContaining(['budgetReached', 'waitingForPerson']) });
      expect(ofType(r.events, 'budget').at(-1)).toMatchObject({ capUsd: 0.4, spentUsd: 0.315 });
      expect(r.stderr()).toMatch(/paused at its budget \(spent \$0\.32 of \$0\.40\).*keel run --resume \S+ --max-budget-usd N/);
      const id = String(ofType(r.events, 'task')[0]!.taskId);

      // A higher cap, no new message: the task goes on where it paused.
      const next = await runCli(['run', '--resume', id, ...args('--max-budget-usd', '2', '--workers', workers)], KEY, storage);
      expect((await next.exit).code, next.stderr()).toBe(0);
      expect(server.requests).toHaveLength(2);
      expect(JSON.stringify((server.requests[1]!.body as { messages: unknown }).messages)).toContain('toolu_r');
      expect(ofType(next.events, 'budget').at(-1)).toMatchObject({ capUsd: 2 });
      expect(ofType(next.events, 'done').at(-1)).toMatchObject({ status: 'completed' });
    });
  }

  it('a resume without a higher cap pauses again before sending anything', async () => {
    server.enqueue(bigRead, done);
    const r = await runCli(['run', 'read the notes', '--workspace', workspace, ...args('--max-budget-usd', '0.4')], KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(6);
    const id = String(ofType(r.events, 'task')[0]!.taskId);
    const again = await runCli(['run', '--resume', id, ...args()], KEY, storage);
    expect((await again.exit).code, again.stderr()).toBe(6);
    expect(server.requests).toHaveLength(1);
  });

  it("the person's maxBudgetUsd in ~/.keel/settings.json applies; a bad --max-budget-usd is a usage error", async () => {
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify({ maxBudgetUsd: 0.4 }));
    server.enqueue(bigRead, done);
    const r = await runCli(['run', 'read the notes', '--workspace', workspace, ...args()], KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(6);
    expect(server.requests).toHaveLength(1);
    const bad = await runCli(['run', 'x', '--workspace', workspace, ...args('--max-budget-usd', 'lots')], KEY, storage);
    expect((await bad.exit).code).toBe(2);
    expect(bad.stderr()).toMatch(/--max-budget-usd must be a positive number of US dollars, such as 5 or 0\.50 \(got "lots"\)/);
  });

  it('a cap below the first request\'s worst case sends nothing at all', async () => {
    server.enqueue(done);
    const r = await runCli(['run', 'read the notes', '--workspace', workspace, ...args('--max-budget-usd', '0.01')], KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(6);
    expect(server.requests).toHaveLength(0);
  });
});

describe('a loop budget', () => {
  const PROGRESS = '.keel/loop/tests/progress.md';
  const writeProgress = (content: string, usage = { input_tokens: 100_000, output_tokens: 1000 }) => ({ blocks: [{ type: 'tool_use' as const, name: 'Write', input: { file_path: PROGRESS, content } }], usage });
  const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }], usage: { input_tokens: 1000, output_tokens: 10 } });
  const loop = (...extra: string[]) => runCli(['loop', ...extra, '--workspace', workspace, ...args()], KEY, storage);

  it('pauses the whole loop before the request that could exceed it (exit 6); --resume with a higher cap goes on', async () => {
    server.enqueue(writeProgress('# Progress\n- started\n'), say('Started.'), writeProgress('# Progress\nDONE\n', { input_tokens: 1000, output_tokens: 10 }), say('Done.'));
    const r = await loop('make every test pass', '--name', 'tests', '--max-budget-usd', '0.4');
    expect((await r.exit).code, r.stderr()).toBe(6);
    expect(server.requests).toHaveLength(1);
    expect(r.stderr()).toMatch(/"tests" paused at its budget \(spent \$0\.32 of \$0\.40\).*keel loop --resume tests --max-budget-usd N/);

    const next = await loop('--resume', 'tests', '--max-budget-usd', '5');
    expect((await next.exit).code, next.stderr()).toBe(0);
    // The cut-off iteration runs again, within the raised budget.
    expect(server.requests.length).toBeGreaterThan(1);
  });

  it('what the cut-off iteration spent still counts after --resume: a cap it already used up pauses again before any request', async () => {
    server.enqueue(writeProgress('# Progress\n- started\n'), say('Started.'));
    const r = await loop('make every test pass', '--name', 'tests', '--max-budget-usd', '0.4');
    expect((await r.exit).code, r.stderr()).toBe(6);
    expect(server.requests).toHaveLength(1);
    // $0.315 spent; $0.42 leaves ~$0.10, less than a new request's worst case (~$0.12): nothing sent.
    const next = await loop('--resume', 'tests', '--max-budget-usd', '0.42');
    expect((await next.exit).code, next.stderr()).toBe(6);
    expect(server.requests).toHaveLength(1);
    expect(next.stderr()).toMatch(/"tests" paused at its budget \(spent \$0\.32 of \$0\.42\)/);
  });
});
