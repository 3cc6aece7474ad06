/**
 * The foundation, end to end: the packaged Keel .vsix in a real VS Code (code-server), driven by
 * Playwright in Chromium, talking to the fake model server over real HTTP/SSE.
 *
 * A user opens the Keel view, sends a prompt, watches the answer stream in, starts a new task,
 * opens the chat in an editor tab; and a wrong API key shows an error in the chat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Frame } from 'playwright-core';
import { startFakeModelServer, type FakeModelServer, type RecordedRequest } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';
import { sendPrompt } from './support/workbench';

const READY = 'body[data-keel-ready="true"]';
const PROMPT = 'Say hello to the e2e test, please.';
// Plain sentences (no Markdown syntax), so the rendered text is the streamed text.
const ANSWER =
  'Hello from the fake model. This answer arrives a few characters at a time, so the chat view ' +
  'has to show it growing while the stream is still open, and then show all of it once the ' +
  'message is complete. That is what this end to end test watches for.';

/** The key a request carried: `x-api-key`, or `Authorization: Bearer` (what SDK 1.x sends for `apiKey`). */
function apiKeyOf(request: RecordedRequest): string | undefined {
  return request.headers['x-api-key'] ?? request.headers['authorization']?.replace(/^Bearer\s+/i, '');
}

const collapse = (s: string): string => s.replace(/\s+/g, ' ').trim();

function keelSettings(server: FakeModelServer): Record<string, unknown> {
  return {
    'keel.provider': 'anthropic',
    'keel.anthropic.baseUrl': server.url,
    'keel.model': 'claude-sonnet-5-5',
  };
}

/** Opens the Keel sidebar view and returns its webview frame once the handshake is done. */
async function openChatView(vs: VsCodeSession): Promise<Frame> {
  await vs.runCommand('Keel: Focus on Chat View');
  return vs.webviewFrame(READY, { timeoutMs: 60_000 });
}

interface Sample {
  text: string;
  streaming: string | null;
}

/**
 * Samples the last assistant message until it is no longer streaming and holds `full`, and
 * returns every distinct state seen. Throws after `timeoutMs` with the last sample.
 */
async function watchAssistant(chat: Frame, full: string, timeoutMs = 60_000): Promise<Sample[]> {
  const message = chat.locator('[data-testid="message-assistant"]').last();
  const samples: Sample[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sample = await message
      .evaluate((el) => ({ text: el.textContent ?? '', streaming: el.getAttribute('data-streaming') }), undefined, { timeout: 1_000 })
      .catch(() => undefined);
    if (sample) {
      sample.text = collapse(sample.text);
      const last = samples[samples.length - 1];
      if (!last || last.text !== sample.text || last.streaming !== sample.streaming) samples.push(sample);
      if (sample.streaming === 'false' && sample.text.includes(full)) return samples;
    }
    if (Date.now() > deadline) throw new Error(`the answer did not complete; samples: ${JSON.stringify(samples.slice(-3))}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

describe('foundation: Keel in a real VS Code', () => {
  let server: FakeModelServer | undefined;
  let vs: VsCodeSession | undefined;
  let sidebar: Frame | undefined;

  beforeAll(async () => {
    const vsixPath = ensureKeelVsix();
    // A slow turn: 4 characters per delta, 40 ms apart, so the answer takes seconds to arrive.
    server = await startFakeModelServer({ turns: [{ blocks: [{ type: 'text', text: ANSWER }], chunkSize: 4, delayMs: 40 }] });
    vs = await startVsCode({ vsixPath, settings: keelSettings(server), env: { ANTHROPIC_API_KEY: 'test-key' } });
  });

  afterAll(async () => {
    await vs?.close();
    await server?.close();
  });

  it('streams an answer to a prompt into the chat view', async () => {
    if (!vs || !server) throw new Error('setup failed');
    sidebar = await openChatView(vs);
    await vs.screenshot('foundation-1-empty-chat');

    await sendPrompt(sidebar, PROMPT);
    await sidebar.locator('[data-testid="message-user"]', { hasText: PROMPT }).waitFor({ state: 'visible' });
    const samples = await watchAssistant(sidebar, collapse(ANSWER));

    // The text grew while the stream was open: some sample shows a strict, non-empty prefix.
    const full = collapse(ANSWER);
    const partial = samples.filter((s) => s.streaming === 'true' && s.text.length > 0 && s.text.length < full.length);
    expect(partial.length, `samples: ${JSON.stringify(samples)}`).toBeGreaterThan(0);
    console.log(`keel streaming: ${partial.length} partial states seen before the final text`);
    for (const s of partial) expect(full.startsWith(s.text), `partial "${s.text}"`).toBe(true);
    const final = samples[samples.length - 1];
    expect(final?.streaming).toBe('false');
    expect(final?.text).toContain(full);
    await expect.poll(() => sidebar?.locator('[data-testid="task-state"]').getAttribute('data-state')).not.toBe('running');
    await vs.screenshot('foundation-2-streamed-answer');

    // The model server saw the prompt, the model and the key from the environment.
    const messages = server.requests.filter((r) => r.path === '/v1/messages');
    expect(messages).toHaveLength(1);
    const request = messages[0];
    expect(JSON.stringify(request?.body)).toContain(PROMPT);
    expect(request?.body).toMatchObject({ model: 'claude-sonnet-5-5', stream: true });
    expect(request && apiKeyOf(request), JSON.stringify(request?.headers)).toBe('test-key');
  });

  it('"Keel: New Task" shows the empty state', async () => {
    if (!vs || !sidebar) throw new Error('previous step failed');
    await vs.runCommand('Keel: New Task');
    await sidebar.locator('[data-testid="empty-state"]').waitFor({ state: 'visible' });
    expect(await sidebar.locator('[data-testid="message-assistant"]').count()).toBe(0);
    await vs.screenshot('foundation-3-new-task');
  });

  it('"Keel: Open Chat in Editor Tab" opens a second chat that is ready', async () => {
    if (!vs || !sidebar) throw new Error('previous step failed');
    await vs.runCommand('Keel: Open Chat in Editor Tab');
    const tab = await vs.webviewFrame(READY, { exclude: [sidebar], timeoutMs: 60_000 });
    await tab.locator('[data-testid="prompt-input"]').waitFor({ state: 'visible' });
    expect(await vs.page.locator('.tabs-container .tab', { hasText: 'Keel' }).count()).toBeGreaterThan(0);
    await vs.screenshot('foundation-4-editor-tab');
  });

  it('logs how long activate() took', async () => {
    if (!vs) throw new Error('setup failed');
    const pattern = /activate\(\) took ([\d.]+) ms/;
    // The log channel is flushed to its file asynchronously.
    await expect.poll(() => pattern.test(vs?.readKeelLog() ?? ''), { timeout: 15_000 }).toBe(true);
    const ms = Number(vs.readKeelLog().match(pattern)?.[1]);
    console.log(`keel activate() ms: ${ms}`);
    expect(Number.isFinite(ms)).toBe(true);
  });
});

describe('foundation: a rejected API key', () => {
  let server: FakeModelServer | undefined;
  let vs: VsCodeSession | undefined;

  beforeAll(async () => {
    const vsixPath = ensureKeelVsix();
    // The server only accepts another key: every request gets 401 authentication_error.
    server = await startFakeModelServer({ requireApiKey: 'the-right-key' });
    vs = await startVsCode({ vsixPath, settings: keelSettings(server), env: { ANTHROPIC_API_KEY: 'test-key' } });
  });

  afterAll(async () => {
    await vs?.close();
    await server?.close();
  });

  it('shows an authentication error in the chat', async () => {
    if (!vs || !server) throw new Error('setup failed');
    const chat = await openChatView(vs);
    await sendPrompt(chat, PROMPT);
    const error = chat.locator('[data-testid="error"]').first();
    await error.waitFor({ state: 'visible', timeout: 60_000 });
    expect(await error.getAttribute('data-code')).toBe('auth_failed');
    expect(await error.textContent()).toMatch(/401|API key/i);
    expect(server.requests.filter((r) => r.path === '/v1/messages').length).toBeGreaterThan(0);
    expect(server.requests.map(apiKeyOf)).toContain('test-key');
    await vs.screenshot('foundation-5-auth-error');
  });
});
