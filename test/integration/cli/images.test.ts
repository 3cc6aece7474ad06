import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/** `keel run --image FILE`: image blocks (Anthropic) and image_url parts (OpenAI), checked before any request, kept for a resume. */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });
const anthropic = (...extra: string[]) =>
  runCli(['run', ...extra, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory'], { ANTHROPIC_API_KEY: 'sk-test' }, storage);

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-img-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-img-home-'));
  writeFileSync(join(workspace, 'shot.png'), Buffer.from(PNG, 'base64'));
});
afterEach(async () => {
  await server.close();
});

type Body = { messages: { role: string; content: unknown }[] };
const content = (i: number) => (server.requests[i]!.body as Body).messages[0]!.content as Record<string, unknown>[];

describe('keel run --image', () => {
  // In this process and on a worker (the default): the image crosses to the worker with the conversation.
  it.each([['0'], ['1']])('sends the image as an Anthropic image block before the text, and names it in user_message (workers %s)', async (workers) => {
    server.enqueue(say('A single pixel.'));
    const r = await anthropic('what is in this picture?', '--image', join(workspace, 'shot.png'), '--workers', workers);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(content(0)[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
    expect(content(0)[1]).toMatchObject({ type: 'text', text: 'what is in this picture?' });
    expect(ofType(r.events, 'user_message')[0]).toMatchObject({ images: [{ name: 'shot.png', mediaType: 'image/png', bytes: 70 }] });
  });

  it.each([['0'], ['1']])('a resumed task still has the image (workers %s)', async (workers) => {
    server.enqueue(say('A single pixel.'));
    const first = await anthropic('what is this?', '--image', join(workspace, 'shot.png'), '--workers', workers);
    expect((await first.exit).code, first.stderr()).toBe(0);
    const id = String(ofType(first.events, 'task')[0]!.taskId);
    server.enqueue(say('Red.'));
    const next = await anthropic('--resume', id, 'and its colour?', '--workers', workers);
    expect((await next.exit).code, next.stderr()).toBe(0);
    expect(JSON.stringify((server.requests[1]!.body as Body).messages)).toContain(PNG);
  });

  it('keel tasks replay plays a task with an image back exactly (the image is the log\'s, sent again)', async () => {
    server.enqueue(say('A single pixel.'));
    const first = await anthropic('what is this?', '--image', join(workspace, 'shot.png'), '--workers', '0');
    expect((await first.exit).code, first.stderr()).toBe(0);
    const id = String(ofType(first.events, 'task')[0]!.taskId);
    const replay = await runCli(['tasks', 'replay', id], { ANTHROPIC_API_KEY: 'sk-test' }, storage);
    expect((await replay.exit).code, replay.stdout() + replay.stderr()).toBe(0);
    expect(replay.stdout()).toMatch(/replayed task \S+: the \d+ events/);
  });

  it('sends an OpenAI-compatible server an image_url part with a data: URL', async () => {
    server.enqueue(say('A pixel.'));
    const r = await runCli(
      ['run', 'describe it', '--image', join(workspace, 'shot.png'), '--provider', 'openai-compatible', '--base-url', `${server.url}/v1`, '--model', 'llava', '--workspace', workspace, '--no-memory'],
      { OPENAI_API_KEY: 'sk-test' },
      storage,
    );
    expect((await r.exit).code, r.stderr()).toBe(0);
    const user = (server.requests[0]!.body as Body).messages.find((m) => m.role === 'user')!;
    expect(user.content).toEqual([
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'text', text: 'describe it' },
    ]);
  });

  it('refuses what is not an image, a missing file and one too large, before any request', async () => {
    writeFileSync(join(workspace, 'notes.png'), 'just text');
    writeFileSync(join(workspace, 'huge.png'), Buffer.concat([Buffer.from(PNG, 'base64'), Buffer.alloc(5 * 1024 * 1024)]));
    const cases: [string, RegExp][] = [
      ['notes.png', /notes\.png is not a PNG, JPEG, GIF or WebP image/],
      ['missing.png', /the image .*missing\.png does not exist/],
      ['huge.png', /huge\.png is 5\.0 MB; an image may be at most 5\.0 MB/],
    ];
    for (const [file, message] of cases) {
      const r = await anthropic('look', '--image', join(workspace, file));
      expect((await r.exit).code).toBe(2);
      expect(r.stderr()).toMatch(message);
    }
    expect(server.requests).toHaveLength(0);
  });
});
