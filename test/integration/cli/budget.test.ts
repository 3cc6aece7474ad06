import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * `--max-budget-usd`: the task pauses before the request that would take it over its cap — the
 * scripted server never sees that request — and goes on once the cap is raised. The model is a
 * priced one (claude-sonnet: $3 per million input tokens, $15 output), the usage the server reports.
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
const done = { blocks: [{ type: 'text' as const, text: 'All read.' }], usage: { input_tokens: 100_100, output_tokens: 10 } };

describe('budget caps', () => {
  for (const workers of ['0', '1']) {
    it(`pauses before the request that would exceed the cap, then continues once it is raised (workers ${workers})`, async () => {
      server.enqueue(bigRead, done);
      const r = await runCli(['run', 'read the notes', '--workspace', workspace, ...args('--max-budget-usd', '0.5', '--workers', workers)], KEY, storage);
      expect((await r.exit).code, r.stderr()).toBe(1);
      // The second request (about 100,000 input tokens: $0.30 more) would go past $0.50: never sent.
      expect(server.requests).toHaveLength(1);
      const error = ofType(r.events, 'error')[0]!;
      expect(error).toMatchObject({ code: 'budget_exceeded', retryable: true });
      expect(String(error.message)).toMatch(/this task has spent \$0\.3150, and the request would add about \$0\.30\d\d for its input, over the budget of \$0\.50/);
      expect(ofType(r.events, 'budget')[0]).toMatchObject({ capUsd: 0.5, spentUsd: 0 });
      expect(ofType(r.events, 'done').at(-1)).toMatchObject({ status: 'failed' });
      const id = String(ofType(r.events, 'task')[0]!.taskId);

      // A higher cap, no new message: the task goes on where it paused.
      const next = await runCli(['run', '--resume', id, ...args('--max-budget-usd', '2', '--workers', workers)], KEY, storage);
      expect((await next.exit).code, next.stderr()).toBe(0);
      expect(server.requests).toHaveLength(2);
      expect(JSON.stringify((server.requests[1]!.body as { messages: unknown }).messages)).toContain('toolu_r');
      expect(ofType(next.events, 'budget')[0]).toMatchObject({ capUsd: 2 });
    });
  }

  it('without a raised cap, the paused task needs a follow-up like any failed one', async () => {
    server.enqueue(bigRead);
    const r = await runCli(['run', 'read the notes', '--workspace', workspace, ...args('--max-budget-usd', '0.5')], KEY, storage);
    expect((await r.exit).code).toBe(1);
    const id = String(ofType(r.events, 'task')[0]!.taskId);
    const again = await runCli(['run', '--resume', id, ...args()], KEY, storage);
    expect((await again.exit).code).toBe(2);
    expect(again.stderr()).toMatch(/give a follow-up message to continue it/);
    expect(server.requests).toHaveLength(1);
  });

  it("the person's maxBudgetUsd in ~/.keel/settings.json applies; a bad --max-budget-usd is a usage error", async () => {
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify({ maxBudgetUsd: 0.5 }));
    server.enqueue(bigRead, done);
    const r = await runCli(['run', 'read the notes', '--workspace', workspace, ...args()], KEY, storage);
    expect((await r.exit).code, r.stderr()).toBe(1);
    expect(server.requests).toHaveLength(1);
    const bad = await runCli(['run', 'x', '--workspace', workspace, ...args('--max-budget-usd', 'lots')], KEY, storage);
    expect((await bad.exit).code).toBe(2);
    expect(bad.stderr()).toMatch(/--max-budget-usd must be a positive number of US dollars \(got "lots"\)/);
  });
});
