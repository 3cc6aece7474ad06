/**
 * The full flow a person sees, in a real VS Code (code-server) with the packaged .vsix, in a light
 * and a dark theme, on the demo model's tour (no key): a prompt; the model thinks (folded
 * "Thought for N s"); a Read card; an Edit tool card with its inline diff and a permission card
 * (same request id as the host's prompt) while VS Code's diff editor shows the change; Allow once
 * writes the file; a Bash card, allowed, runs and shows its output; the Markdown answer (with a
 * highlighted code block) streams in. Screenshots go to test-results/; the permission moment goes
 * to test-results/docs/ as the README's pictures, and `npm run screenshots` copies them over docs/
 * (a test run never changes docs/).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureKeelVsix, RESULTS_DIR, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const PROMPT = 'What can Keel do?';
const GREET = 'src/greet.ts';

async function flow(theme: 'light' | 'dark'): Promise<void> {
  let vs: VsCodeSession | undefined;
  try {
    vs = await startVsCode({
      vsixPath: ensureKeelVsix(),
      colorTheme: theme === 'light' ? 'Default Light Modern' : 'Default Dark Modern',
      settings: { 'keel.provider': 'demo', 'keel.permissions.defaultMode': 'default' },
    });
    await vs.runCommand('Keel: Focus on Chat View');
    const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
    expect(await chat.locator('[data-testid="mode-select"]').inputValue()).toBe('default');
    const original = readFileSync(join(vs.workspace, GREET), 'utf8');

    const input = chat.locator('[data-testid="prompt-input"]');
    await input.fill(PROMPT);
    await input.press('Enter');
    await chat.locator('[data-testid="message-user"]', { hasText: PROMPT }).waitFor();

    // Thinking streams, then folds into "Thought for N s"; the Read card follows, done without asking.
    const thinking = chat.locator('[data-testid="thinking"] summary').first();
    await thinking.waitFor({ timeout: 60_000 });
    await expect.poll(() => thinking.textContent(), { timeout: 30_000 }).toMatch(/Thought for \d+ s/);
    const read = chat.locator('[data-testid="tool-card"][data-tool="Read"]');
    await expect.poll(() => read.getAttribute('data-status'), { timeout: 60_000 }).toBe('done');

    // The Edit tool card shows its diff and waits for the permission card; VS Code's diff editor shows it too.
    const card = chat.locator('[data-testid="tool-card"][data-tool="Edit"]');
    await card.waitFor({ timeout: 60_000 });
    const permission = chat.locator('[data-testid="permission-card"]');
    await permission.waitFor({ timeout: 30_000 });
    expect(await permission.getAttribute('data-tool')).toBe('Edit');
    expect(await permission.getAttribute('data-request-id')).toBeTruthy();
    expect(await permission.locator('[data-testid="diff"]').textContent()).toContain('name = name.trim();');
    expect(await card.getAttribute('data-status')).toBe('awaiting');
    await vs.page.locator('.tabs-container .tab', { hasText: 'proposed by Keel' }).waitFor({ timeout: 20_000 });
    // The diff editor has drawn the proposed lines (not just its frame).
    await vs.page.locator('.monaco-diff-editor .view-lines', { hasText: 'name.trim()' }).first().waitFor({ timeout: 30_000 });
    expect(readFileSync(join(vs.workspace, GREET), 'utf8')).toBe(original);
    // The README's screenshot: the tour's tool cards, the diff, the permission card, the diff editor.
    const permissionShot = await vs.screenshot(`ui-${theme}-1-permission`);

    // "Open diff" on the card brings VS Code's diff editor back.
    await permission.locator('[data-testid="permission-open-diff"]').click();
    await vs.page.locator('.monaco-diff-editor').first().waitFor({ timeout: 20_000 });
    await vs.screenshot(`ui-${theme}-2-diff`);

    // Allow once: the file is written, the card goes, the tool is done.
    await permission.locator('[data-testid="permission-allow"]').click();
    await expect.poll(() => readFileSync(join(vs!.workspace, GREET), 'utf8'), { timeout: 30_000 }).toContain('name = name.trim();');
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000 }).toBe('done');

    // The command asks too; allowed, it runs and its card shows the output and exit code.
    const bashCard = chat.locator('[data-testid="permission-card"][data-tool="Bash"]');
    await bashCard.waitFor({ timeout: 60_000 });
    await bashCard.locator('[data-testid="permission-allow"]').click();
    const bash = chat.locator('[data-testid="tool-card"][data-tool="Bash"]');
    await expect.poll(() => bash.getAttribute('data-status'), { timeout: 30_000 }).toBe('done');
    expect(await bash.locator('[data-testid="bash-output"]').textContent()).toMatch(/v\d+\./);
    expect(await bash.locator('[data-testid="exit-code"]').textContent()).toBe('exit 0');

    // The answer streams in: what happened, as Markdown, with the edited lines highlighted.
    const answer = chat.locator('[data-testid="message-assistant"]').last();
    await expect.poll(() => answer.textContent(), { timeout: 60_000 }).toContain("That's the tour.");
    await expect.poll(() => answer.getAttribute('data-streaming'), { timeout: 60_000 }).toBe('false');
    expect(await answer.textContent()).toMatch(/The command ran and printed v\d+/);
    expect(await chat.locator('.keel-code .tok-kw').count()).toBeGreaterThan(0);
    expect(await chat.locator('[data-testid="copy-code"]').count()).toBeGreaterThan(0);
    await expect.poll(() => chat.locator('[data-testid="task-state"]').getAttribute('data-state'), { timeout: 30_000 }).toBe('completed');
    expect(await chat.locator('[data-testid="usage"]').textContent()).toMatch(/\$/);
    expect(await chat.locator('[data-testid="context-meter"]').getAttribute('aria-valuemax')).toBe('200000');
    await vs.screenshot(`ui-${theme}-3-answer`);
    mkdirSync(join(RESULTS_DIR, 'docs'), { recursive: true });
    copyFileSync(permissionShot, join(RESULTS_DIR, 'docs', theme === 'dark' ? 'screenshot-chat.png' : 'screenshot-chat-light.png'));

    // History (the view's title bar) lists the task. The editor tab is a chat of its own: it
    // opens empty (the sidebar keeps its task), has New Task and History in its own title bar, and
    // its History opens the same task, which both chats then show.
    await vs.page.locator('.part.sidebar .composite.title .action-label[aria-label^="Show History"]').click();
    await chat.locator('[data-testid="history-item"]').first().waitFor();
    expect(await chat.locator('[data-testid="history-item"]').count()).toBe(1);
    await chat.locator('[data-testid="nav-chat"]').click();
    await vs.runCommand('Keel: Open Chat in Editor Tab');
    const tab = await vs.webviewFrame(READY, { exclude: [chat], timeoutMs: 60_000 });
    await tab.locator('[data-testid="empty-state"]').waitFor({ timeout: 30_000 });
    expect(await chat.locator('[data-testid="tool-card"][data-tool="Edit"]').count()).toBe(1);
    await vs.page.locator('.editor-actions .action-label[aria-label^="New Task"]').waitFor({ timeout: 20_000 });
    const tabHistory = vs.page.locator('.editor-actions .action-label[aria-label^="Show History"]');
    expect(await tabHistory.count()).toBe(1);
    await tabHistory.click();
    await tab.locator('[data-testid="history-item"] [data-testid="history-open"]').first().click();
    await tab.locator('[data-testid="message-assistant"]').last().waitFor();
    expect(await tab.locator('[data-testid="tool-card"][data-tool="Edit"]').count()).toBe(1);
    expect(await chat.locator('[data-testid="tool-card"][data-tool="Edit"]').count()).toBe(1);
    await vs.screenshot(`ui-${theme}-4-both-surfaces`);
  } catch (e) {
    await vs?.screenshot(`ui-${theme}-failure`).catch(() => undefined);
    throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
  } finally {
    await vs?.close();
  }
}

describe('ui: the demo tour — thinking, Read, Edit with diff and permission card, accept, a command, the answer', () => {
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
