import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Faults of worker runs found by injecting them (issue 26, items 2, 3, 4 and 16's killed worker),
 * through the built CLI with the real Anthropic provider against the fake model server.
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test-worker-faults', KEEL_MEMORY: 'off' };
const provider = (url: string) => ['--provider', 'anthropic', '--base-url', url, '--model', 'claude-test', '--workspace', workspace];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-worker-faults-'));
});
afterEach(async () => {
  await server.close();
});

type Block = { type: string; text?: string };
function lastUserText(body: unknown): string {
  const messages = (body as { messages: { role: string; content: string | Block[] }[] }).messages;
  const last = messages.at(-1)!;
  return typeof last.content === 'string' ? last.content : last.content.map((b) => b.text ?? '').join('');
}

describe('keel with workers, faults injected', () => {
  it('keel batch runs more tasks than workers on the same worker processes', async () => {
    server.enqueue(...['one', 'two', 'three', 'four', 'five'].map((n) => ({ blocks: [{ type: 'text' as const, text: `Task ${n} done.` }] })));
    const file = join(workspace, 'tasks.txt');
    writeFileSync(file, 'first\nsecond\nthird\nfourth\nfifth\n');
    const run = await runCli(['batch', file, ...provider(server.url), '--workers', '2'], KEY);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'done').map((d) => d.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
    const workers = ofType(run.events, 'worker');
    expect(workers).toHaveLength(5);
    // Two processes served all five: idle ones were reused, none was stopped for a fresh one.
    expect(new Set(workers.map((w) => w.pid)).size).toBe(2);
    expect(new Set(workers.map((w) => w.workerId))).toEqual(new Set(['w1', 'w2']));
  });

  it('a killed worker: the message names the task and how to resume; resume hears how far the answer got', async () => {
    const partial = 'The answer so far reaches exactly this far before its worker dies';
    server.enqueue({ blocks: [{ type: 'text', text: `${partial} and never gets further.` }], chunkSize: partial.length, fault: { kind: 'stall', afterEvents: 4 } });
    const run = await runCli(['run', 'explain it', ...provider(server.url), '--output-format', 'stream-json', '--workers', '1'], KEY);
    await waitUntil(() => ofType(run.events, 'text').length > 0 && ofType(run.events, 'worker').length + ofType(run.events, 'phase').length > 0, () => `streamed text (stderr: ${run.stderr()})`, 60_000);
    const taskId = String(ofType(run.events, 'text')[0]!.taskId);
    const pid = await workerPid(run.storage);
    process.kill(pid, 'SIGKILL');
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(1);
    const lost = ofType(run.events, 'error').find((e) => e.code === 'worker_lost')!;
    expect(lost.message).toContain(`task ${taskId}`);
    expect(lost.message).toContain(`keel run --resume ${taskId}`);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'interrupted' });

    server.enqueue({ blocks: [{ type: 'text', text: 'Picking up where I stopped.' }] });
    const resumed = await runCli(['run', '--resume', taskId, ...provider(server.url), '--output-format', 'stream-json', '--workers', '1'], KEY, run.storage);
    expect((await resumed.exit).code, resumed.stderr()).toBe(0);
    const note = lastUserText(server.requests.at(-1)!.body);
    expect(note).toContain(`cut off after ${partial.length} characters`);
    expect(note).not.toMatch(/nothing was in progress/i);
  });

  it('a 50 MB answer completes on a worker, and the task goes on from it on a worker', async () => {
    const big = 'x'.repeat(1023) + '\n';
    const answer = big.repeat(50 * 1024);
    server.enqueue(
      { blocks: [{ type: 'text', text: answer }], chunkSize: 256 * 1024 },
      // The next run's conversation is far over the context limit: the worker's turn summarises it first.
      { blocks: [{ type: 'text', text: 'Summary: a long answer of x lines.' }] },
      { blocks: [{ type: 'text', text: 'A short follow-up answer.' }] },
    );
    const run = await runCli(['run', 'write a lot', ...provider(server.url), '--output-format', 'stream-json', '--workers', '1'], KEY);
    const { code } = await run.exit;
    expect(code, run.stderr().slice(-2000)).toBe(0);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
    expect(ofType(run.events, 'text').reduce((n, e) => n + String(e.delta).length, 0)).toBe(answer.length);
    expect(run.stderr()).not.toMatch(/worker|health/i);
    const taskId = String(run.events.at(-1)!.taskId);
    // The next run's query carries the 50 MB conversation down to a worker (its summary request shows it).
    const next = await runCli(['run', '--resume', taskId, 'and now briefly', ...provider(server.url), '--workers', '1'], KEY, run.storage);
    expect((await next.exit).code, next.stderr().slice(-2000)).toBe(0);
    expect(next.stdout()).toContain('A short follow-up answer.');
    const sent = JSON.stringify(server.requests[1]!.body);
    expect(sent.length).toBeGreaterThan(answer.length);
  }, 240_000);
});

/** The pid of the worker of the only running `keel run` (its status socket, as `keel workers` reads it). */
async function workerPid(storage: string): Promise<number> {
  const r = await runCli(['workers', '--json'], {}, storage);
  await r.exit;
  const pools = (JSON.parse(r.stdout()) as { pools: { workers: { pid: number | null; state: string }[] }[] }).pools;
  const w = pools.flatMap((p) => p.workers).find((x) => x.pid !== null && x.state === 'busy');
  if (!w) throw new Error(`no busy worker in ${r.stdout()}`);
  return w.pid!;
}
