/**
 * The waits on a slow model server, set as a person sets them — in VS Code's user settings — in a
 * real VS Code (code-server) with the packaged .vsix, the fake model server and the default worker
 * pool (so the figures travel to a worker process with the query):
 *  1. `keel.timeouts.stallSeconds` 2: an answer that falls silent for 6 s is given up as stalled
 *     and retried, and the chat says so with the figure set ("no part of the answer for 2 s");
 *     the retry's answer completes the task. (The default, 30 s, would have waited the 6 s out.)
 *     During the silence a line under the conversation says that Keel waits, and how long it still
 *     will (the stall clock's first quiet look, at a quarter of the 2 s); it is gone once the
 *     attempt is given up. The abandoned attempt reads "Abandoned — retried below", with no
 *     Resume (nothing is left to resume: the retry's answer follows it).
 *  2. `keel.timeouts.responseSeconds` 0, which cannot be used: a warning names the setting and
 *     the default that applies, rather than the run silently taking the default.
 * Screenshots: test-results/timeouts-waiting.png (the silence), timeouts-retried.png (after).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';
import { sendPrompt } from './support/workbench';

const READY = 'body[data-keel-ready="true"]';
const PROMPT = 'Tell me about the sample workspace.';
const RETRIED = 'Answered on the retry, after the stalled attempt.';
const collapse = (s: string | null): string => (s ?? '').replace(/\s+/g, ' ').trim();

describe('timeouts: keel.timeouts.* in a real VS Code', () => {
  let server: FakeModelServer | undefined;
  let vs: VsCodeSession | undefined;

  beforeAll(async () => {
    const vsixPath = ensureKeelVsix();
    server = await startFakeModelServer({
      turns: [
        { blocks: [{ type: 'text', text: 'The first words, then a long silence.' }], chunkSize: 10, fault: { kind: 'stall', afterEvents: 4, ms: 6_000 } },
        { blocks: [{ type: 'text', text: RETRIED }] },
      ],
    });
    vs = await startVsCode({
      vsixPath,
      settings: {
        'keel.provider': 'anthropic',
        'keel.anthropic.baseUrl': server.url,
        'keel.model': 'claude-sonnet-5-5',
        'keel.timeouts.stallSeconds': 2,
        'keel.timeouts.responseSeconds': 0,
      },
      env: { ANTHROPIC_API_KEY: 'test-key' },
    });
  });

  afterAll(async () => {
    await vs?.close();
    await server?.close();
  });

  it('a 6 s silence is retried under a 2 s stall timeout set in the user settings; a setting that cannot be used is said', async () => {
    if (!vs || !server) throw new Error('setup failed');
    await vs.runCommand('Keel: Focus on Chat View');
    const chat = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
    await sendPrompt(chat, PROMPT);

    // The answer falls silent after its first words: the chat says Keel waits, in the CLI's words.
    // (One check, text included: the line lasts about a second and a half, until the stall.)
    const waiting = chat.locator('[data-testid="waiting"]');
    await chat
      .locator('[data-testid="waiting"]', { hasText: 'No part of the answer for 0.5 s; Keel waits up to 2 s of silence, then gives this attempt up as stalled and tries again.' })
      .waitFor({ state: 'visible', timeout: 60_000 });
    await vs.screenshot('timeouts-waiting');

    await chat.locator('.keel-note', { hasText: 'Anthropic sent no part of the answer for 2 s; the answer was abandoned. Retrying in 1 s (retry 1).' }).waitFor({ state: 'visible', timeout: 60_000 });
    // Given up: the wait is over, and the line is gone (it was never an item of the chat).
    await waiting.waitFor({ state: 'detached', timeout: 30_000 });
    await chat.locator('[data-testid="message-assistant"]', { hasText: RETRIED }).waitFor({ state: 'visible', timeout: 60_000 });
    await expect.poll(() => chat.locator('[data-testid="task-state"]').getAttribute('data-state'), { timeout: 30_000 }).toBe('completed');
    expect(server.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(2);

    // The abandoned attempt: kept, marked as retried, with nothing to resume — not "Interrupted".
    const abandoned = chat.locator('[data-testid="message-assistant"][data-cut-off="retried"]');
    expect(await abandoned.count()).toBe(1);
    expect(collapse(await abandoned.locator('[data-testid="retried"]').textContent())).toBe('Abandoned — retried below');
    expect(await chat.locator('[data-testid="interrupted"]').count()).toBe(0);
    expect(await chat.locator('[data-testid="resume"]').count()).toBe(0);
    expect(await waiting.count()).toBe(0);

    await vs.page
      .locator('.notification-toast', { hasText: 'keel.timeouts.responseSeconds 0 is not a number of seconds from 1 to 3600; Keel waits the default, 30 s, until you correct it' })
      .waitFor({ state: 'visible', timeout: 30_000 });
    await vs.screenshot('timeouts-retried');
  });
});
