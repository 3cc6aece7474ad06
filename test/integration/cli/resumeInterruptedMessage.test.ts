import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { waitUntil } from '../../unit/model-based/system';
import { cliBundle, ofType, runCli, type CliRun, endedWithin } from './cliHarness';

/**
 * `keel run --resume ID "<follow-up>"` of an INTERRUPTED task: the follow-up ends the resume note,
 * and the note is a user message like any other — its images go to the model (first, before the
 * text), a `/command`'s allowed-tools narrow the run answering it, and what was typed is shown.
 * Each task is recorded by a real `keel run` against the fake model server and stopped for real
 * (SIGTERM while its answer streams).
 */
let server: FakeModelServer;
let dir: string;
let ws: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const GONE_WITHIN_MS = 30_000;
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });
const common = () => ['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', ws, '--output-format', 'stream-json', '--no-memory', '--workers', '0'];

beforeAll(async () => {
  await cliBundle();
  server = await startFakeModelServer();
  dir = mkdtempSync(join(tmpdir(), 'keel-resmsg-'));
}, 120_000);
beforeEach((ctx) => {
  ws = join(dir, `${ctx.task.id}-ws`);
  storage = join(dir, `${ctx.task.id}-home`);
  mkdirSync(ws, { recursive: true });
  mkdirSync(storage, { recursive: true });
  writeFileSync(join(ws, 'shot.png'), Buffer.from(PNG, 'base64'));
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts a task whose answer stalls, stops it with SIGTERM once it streams, and returns its id. */
async function interruptedTask(): Promise<string> {
  server.enqueue({ blocks: [{ type: 'text', text: 'The answer begins and then nothing more comes for a long time.' }], fault: { kind: 'stall', afterEvents: 4 } });
  const run = await runCli(['run', 'answer slowly', ...common()], KEY, storage);
  await waitUntil(() => ofType(run.events, 'text').length > 0, () => `no text yet; stderr: ${run.stderr()}`, 60_000);
  run.child.kill('SIGTERM');
  await ended(run);
  expect(run.events.at(-1)).toMatchObject({ type: 'task', state: 'interrupted' });
  return String(run.events[0]!.taskId);
}

const ended = (run: CliRun) => endedWithin(run, GONE_WITHIN_MS);

type Body = { messages: { role: string; content: string | Record<string, unknown>[] }[] };
const lastUser = (i: number) => (server.requests[i]!.body as Body).messages.filter((m) => m.role === 'user').at(-1)!;

describe('a follow-up resuming an interrupted task carries what any message carries', () => {
  it('its image goes to the model before the note, the view names it, and keel tasks replay plays it back', async () => {
    const id = await interruptedTask();
    const before = server.requests.length;
    server.enqueue(say('A single pixel.'));
    const next = await runCli(['run', '--resume', id, 'what is this?', '--image', join(ws, 'shot.png'), ...common()], KEY, storage);
    expect((await next.exit).code, next.stderr()).toBe(0);
    const content = lastUser(before).content as Record<string, unknown>[];
    expect(content[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
    expect(content[1]).toMatchObject({ type: 'text', text: expect.stringMatching(/^\[Keel: this task was interrupted [\s\S]*\n\nwhat is this\?$/) });
    expect(ofType(next.events, 'user_message').at(-1)).toMatchObject({ images: [{ name: 'shot.png', mediaType: 'image/png' }] });
    const replay = await runCli(['tasks', 'replay', id], KEY, storage);
    expect((await replay.exit).code, replay.stdout() + replay.stderr()).toBe(0);
    expect(replay.stdout()).toMatch(/came out the same, in the same order/);
  }, 120_000);

  it("a /command's allowed-tools narrow the run answering it: a Bash call it does not name is denied, and the view shows what was typed", async () => {
    mkdirSync(join(storage, '.claude', 'commands'), { recursive: true });
    writeFileSync(join(storage, '.claude', 'commands', 'look.md'), '---\nallowed-tools: Read\n---\nLook around and say what you see');
    const id = await interruptedTask();
    const before = server.requests.length;
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'touch made-by-model.txt' } }] }, say('done'));
    const next = await runCli(['run', '--resume', id, '/look', ...common(), '--mode', 'bypassPermissions'], KEY, storage);
    expect((await next.exit).code, next.stderr()).toBe(0);
    expect(JSON.stringify(lastUser(before).content)).toContain('Look around and say what you see');
    expect(existsSync(join(ws, 'made-by-model.txt'))).toBe(false);
    expect(ofType(next.events, 'permission')[0]).toMatchObject({ toolCallId: 'toolu_1', decision: 'deny', reason: expect.stringContaining('/look allows only Read') });
    expect(ofType(next.events, 'user_message').at(-1)).toMatchObject({ typed: '/look' });
  }, 120_000);
});
