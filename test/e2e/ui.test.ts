/**
 * The full flow a person sees, in a real VS Code (code-server) with the packaged .vsix, in a light
 * and a dark theme: a prompt; the model thinks (folded "Thought for N s"); a Write tool card with
 * its inline diff; a permission card (same request id as the host's prompt); "Open diff" opens
 * VS Code's diff editor; Allow once writes the file; the Markdown answer (with a highlighted code
 * block) streams in. Screenshots go to test-results/; the README's pictures go to
 * test-results/docs/, and `npm run screenshots` copies them over docs/ (a test run never changes docs/).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, RESULTS_DIR, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const PROMPT = 'Add a farewell function next to greet, please.';
const FILE = 'src/farewell.ts';
const CONTENT = "/** Says goodbye. */\nexport function farewell(name: string): string {\n  return `Goodbye, ${name}!`;\n}\n";
const ANSWER =
  'Done: I created `src/farewell.ts` with a **farewell** function.\n\n' +
  'Use it like this:\n\n```ts\nimport { farewell } from "./farewell";\n\nconsole.log(farewell("Ada")); // Goodbye, Ada!\n```\n\n' +
  '- It mirrors `greet`\n- It has no dependencies\n';

function turns() {
  return [
    {
      blocks: [
        { type: 'thinking' as const, thinking: 'The user wants a farewell function. greet.ts exports greet(name); a sibling file keeps it small. I will write src/farewell.ts.' },
        { type: 'text' as const, text: "I'll add the function in a new file." },
        { type: 'tool_use' as const, id: 'toolu_write_1', name: 'Write', input: { file_path: FILE, content: CONTENT } },
      ],
      chunkSize: 6,
      delayMs: 35,
      usage: { input_tokens: 2100, output_tokens: 180, cache_read_input_tokens: 1500 },
    },
    { blocks: [{ type: 'text' as const, text: ANSWER }], chunkSize: 5, delayMs: 25, usage: { input_tokens: 2400, output_tokens: 120 } },
  ];
}

async function flow(theme: 'light' | 'dark'): Promise<void> {
  let server: FakeModelServer | undefined;
  let vs: VsCodeSession | undefined;
  try {
    server = await startFakeModelServer({ turns: turns() });
    vs = await startVsCode({
      vsixPath: ensureKeelVsix(),
      colorTheme: theme === 'light' ? 'Default Light Modern' : 'Default Dark Modern',
      settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'default' },
      env: { ANTHROPIC_API_KEY: 'test-key' },
    });
    await vs.runCommand('Keel: Focus on Chat View');
    const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
    expect(await chat.locator('[data-testid="mode-select"]').inputValue()).toBe('default');

    const input = chat.locator('[data-testid="prompt-input"]');
    await input.fill(PROMPT);
    await input.press('Enter');
    await chat.locator('[data-testid="message-user"]', { hasText: PROMPT }).waitFor();

    // Thinking streams, then folds into "Thought for N s".
    const thinking = chat.locator('[data-testid="thinking"] summary').first();
    await thinking.waitFor({ timeout: 60_000 });
    await expect.poll(() => thinking.textContent(), { timeout: 30_000 }).toMatch(/Thought for \d+ s/);

    // The Write tool card shows its diff and waits for the permission card.
    const card = chat.locator('[data-testid="tool-card"][data-tool="Write"]');
    await card.waitFor({ timeout: 30_000 });
    const permission = chat.locator('[data-testid="permission-card"]');
    await permission.waitFor({ timeout: 30_000 });
    expect(await permission.getAttribute('data-tool')).toBe('Write');
    expect(await permission.getAttribute('data-request-id')).toBeTruthy();
    expect(await permission.locator('[data-testid="diff"]').textContent()).toContain('Goodbye');
    expect(await card.getAttribute('data-status')).toBe('awaiting');
    expect(existsSync(join(vs.workspace, FILE))).toBe(false);
    await vs.screenshot(`ui-${theme}-1-permission`);

    // "Open diff" opens VS Code's diff editor with the proposed file.
    await permission.locator('[data-testid="permission-open-diff"]').click();
    await vs.page.locator('.tabs-container .tab', { hasText: 'proposed by Keel' }).waitFor({ timeout: 20_000 });
    await vs.page.locator('.monaco-diff-editor').first().waitFor({ timeout: 20_000 });
    await vs.screenshot(`ui-${theme}-2-diff`);

    // Allow once: the file is written, the card goes, the tool is done, the answer streams.
    await permission.locator('[data-testid="permission-allow"]').click();
    // Polled on the content: the file exists a moment before the write has finished.
    await expect.poll(() => (existsSync(join(vs!.workspace, FILE)) ? readFileSync(join(vs!.workspace, FILE), 'utf8') : null), { timeout: 30_000 }).toBe(CONTENT);
    await permission.waitFor({ state: 'detached', timeout: 10_000 });
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000 }).toBe('done');

    const answer = chat.locator('[data-testid="message-assistant"]').last();
    await expect.poll(() => answer.getAttribute('data-streaming'), { timeout: 60_000 }).toBe('false');
    await expect.poll(() => answer.textContent(), { timeout: 30_000 }).toContain('Goodbye, Ada!');
    expect(await answer.locator('.keel-code .tok-kw').count()).toBeGreaterThan(0);
    expect(await answer.locator('[data-testid="copy-code"]').count()).toBe(1);
    await expect.poll(() => chat.locator('[data-testid="task-state"]').textContent(), { timeout: 30_000 }).not.toBe('running');
    expect(await chat.locator('[data-testid="usage"]').textContent()).toMatch(/\$/);
    expect(await chat.locator('[data-testid="context-meter"]').getAttribute('aria-valuemax')).toBe('200000');

    // The model got the tool result of the allowed Write.
    const bodies = server.requests.filter((r) => r.path === '/v1/messages').map((r) => JSON.stringify(r.body));
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toContain('toolu_write_1');
    const shot = await vs.screenshot(`ui-${theme}-3-answer`);
    mkdirSync(join(RESULTS_DIR, 'docs'), { recursive: true });
    copyFileSync(shot, join(RESULTS_DIR, 'docs', theme === 'dark' ? 'screenshot-chat.png' : 'screenshot-chat-light.png'));

    // History lists the task; the editor tab watches the same task at once.
    await chat.locator('[data-testid="nav-history"]').click();
    await chat.locator('[data-testid="history-item"]').first().waitFor();
    expect(await chat.locator('[data-testid="history-item"]').count()).toBe(1);
    await chat.locator('[data-testid="nav-chat"]').click();
    await vs.runCommand('Keel: Open Chat in Editor Tab');
    const tab = await vs.webviewFrame(READY, { exclude: [chat], timeoutMs: 60_000 });
    await tab.locator('[data-testid="message-assistant"]').last().waitFor();
    expect(await tab.locator('[data-testid="tool-card"][data-tool="Write"]').count()).toBe(1);
    await vs.screenshot(`ui-${theme}-4-both-surfaces`);
  } catch (e) {
    await vs?.screenshot(`ui-${theme}-failure`).catch(() => undefined);
    throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
  } finally {
    await vs?.close();
    await server?.close();
  }
}

describe('ui: prompt → thinking → tool card → permission card → diff → accept → answer', () => {
  beforeAll(() => {
    ensureKeelVsix();
  });
  afterAll(() => undefined);

  it('in a dark theme', async () => {
    await flow('dark');
  });

  it('in a light theme', async () => {
    await flow('light');
  });
});
