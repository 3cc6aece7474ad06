/**
 * Loop mode and the Agents view in a real VS Code (code-server) with the packaged .vsix and the
 * fake model server:
 *  1. "Keel: Start Loop" from the palette (goal, max iterations, promise, stop word); the scripted
 *     model writes the progress file in iteration 1 and the stop word in iteration 2;
 *  2. "Show Loop" on the start notification opens the loop page: two iterations, verdicts
 *     continue then complete with their reasons, the progress file's changes (its HTML shown as
 *     text, never run), the loop complete;
 *  3. the Agents view (hidden by default; shown here) lists the loop and its iterations, and a chat
 *     task whose Bash call waits on a permission card shows as "needs you (permission)" until it is
 *     answered;
 *  4. with the chat in Plan mode, Start Loop says why a loop cannot run there and starts nothing.
 * Screenshots go to test-results/loop-*.png.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const GOAL = 'Count to two';
const NAME = 'count-to-two';
const PROGRESS = `.keel/loop/${NAME}/progress.md`;
const HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">';

const tool = (id: string, name: string, input: Record<string, unknown>): FakeTurn => ({ blocks: [{ type: 'tool_use', id, name, input }], chunkSize: 40 });
const say = (text: string): FakeTurn => ({ blocks: [{ type: 'text', text }] });

function turns(): FakeTurn[] {
  return [
    // Iteration 1: progress, no stop word.
    tool('toolu_p1', 'Write', { file_path: PROGRESS, content: `# Progress\n\n- counted one ${HOSTILE}\n` }),
    say('Iteration one finished.'),
    // Iteration 2: the stop word.
    tool('toolu_p2', 'Write', { file_path: PROGRESS, content: `# Progress\n\n- counted one ${HOSTILE}\n- counted two\n\nDONE\n` }),
    say('Iteration two finished.'),
    // A chat task whose command waits for the person.
    tool('toolu_bash', 'Bash', { command: 'touch attention.txt' }),
    say('All done.'),
  ];
}

/**
 * Answers question `step` of "Keel: Start Loop" (its title says "(step/4)"): `value` typed over what
 * it proposes, then Enter; returns once that question has closed. The quick input is one widget
 * whose input element every question reuses, and a question with a check stays open until the
 * extension host has answered the check: without waiting for the title, a busy machine typed the
 * next answer into the previous question and the last question was left open.
 */
async function answerInput(page: Page, step: number, value: string | undefined): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  const title = widget.locator('.quick-input-title', { hasText: `Keel: Start Loop (${step}/4)` });
  await title.waitFor({ state: 'visible', timeout: 30_000 });
  const input = widget.locator('.quick-input-box input');
  if (value !== undefined) await input.fill(value);
  await input.press('Enter');
  await title.waitFor({ state: 'hidden', timeout: 30_000 });
}

describe('loop mode in VS Code', () => {
  it('Start Loop runs two iterations to complete, shown on the loop page; the Agents view shows a task waiting for permission', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({ turns: turns() });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'default' },
        env: { ANTHROPIC_API_KEY: 'test-key' },
      });
      const page = vs.page;
      const ws = vs.workspace;
      await vs.runCommand('Keel: Focus on Chat View');
      const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });

      // 1. Start the loop from the palette.
      await vs.runCommand('Keel: Start Loop');
      await answerInput(page, 1, GOAL);
      await answerInput(page, 2, '5');
      await answerInput(page, 3, '');
      await answerInput(page, 4, undefined);
      const started = page.locator('.notification-toast', { hasText: `Keel loop "${NAME}" started` });
      await started.waitFor({ timeout: 60_000 });

      // 2. Its notification opens the loop page.
      await started.locator('.monaco-button', { hasText: 'Show Loop' }).click();
      const loop = chat.locator(`[data-testid="loop"][data-loop="${NAME}"]`);
      await loop.waitFor({ timeout: 60_000 });
      await expect.poll(() => loop.getAttribute('data-status'), { timeout: 120_000 }).toBe('complete');
      const iterations = loop.locator('[data-testid="loop-iteration"]');
      expect(await iterations.count()).toBe(2);
      // Newest first: iteration 2 complete (the stop word), iteration 1 continue.
      expect(await iterations.nth(0).getAttribute('data-verdict')).toBe('complete');
      expect(await iterations.nth(1).getAttribute('data-verdict')).toBe('continue');
      expect(await iterations.nth(0).locator('[data-testid="loop-iteration-reasons"]').textContent()).toContain('stop word "DONE"');
      expect(await loop.locator('[data-testid="loop-status"]').textContent()).toBe('complete');
      expect(await loop.locator('[data-testid="loop-goal"]').textContent()).toBe(GOAL);
      // The progress file's changes: iteration 2 added "counted two" and the stop word.
      const secondDiff = iterations.nth(0).locator('[data-testid="diff"]');
      expect(await secondDiff.locator('.keel-diff-add').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('counted two'), expect.stringContaining('DONE')]));
      // The model's HTML is text on the page: no element made of it, nothing ran.
      expect(await iterations.nth(1).locator('[data-testid="diff"]').textContent()).toContain(HOSTILE);
      expect(await chat.locator('[data-testid="loop-page"] img').count()).toBe(0);
      expect(await chat.evaluate(() => document.body.dataset.pwned ?? null)).toBeNull();
      expect(readFileSync(join(ws, PROGRESS), 'utf8')).toContain('DONE');
      const state = JSON.parse(readFileSync(join(ws, '.keel', 'loop', NAME, 'state.json'), 'utf8')) as { status: string; iteration: number };
      expect(state).toMatchObject({ status: 'complete', iteration: 2 });
      await page.locator('.notification-toast', { hasText: `Keel loop "${NAME}" complete after 2 iterations` }).waitFor({ timeout: 30_000 });
      await vs.screenshot('loop-1-page-complete');

      // 3. A new chat task (the chat still shows the last iteration's task) waits on a permission
      // card; the Agents view says it needs the person.
      await vs.runCommand('Keel: New Task');
      await chat.locator('[data-testid="empty-state"]').waitFor({ timeout: 30_000 });
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('Touch attention.txt.');
      await input.press('Enter');
      const card = chat.locator('[data-testid="permission-card"][data-tool="Bash"]');
      await card.waitFor({ timeout: 60_000 });
      await vs.runCommand('Keel: Focus on Agents View');
      // The side bar is split now: find the chat's frame again in case its webview was re-created.
      const chatAgain: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      const agents = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Agents' }) });
      const waiting = agents.locator('.monaco-list-row', { hasText: 'needs you (permission)' });
      await waiting.waitFor({ timeout: 30_000 });
      expect(await waiting.textContent()).toContain('Touch attention.txt');
      const loopRow = agents.locator('.monaco-list-row', { hasText: `Loop ${NAME}` });
      await loopRow.waitFor({ timeout: 30_000 });
      // Under the loop, each iteration by its number (the loop's name is on the row above). The
      // tree draws a row's children after the row itself: each is waited for, then counted once.
      for (const n of [2, 1]) {
        const row = agents.locator('.monaco-list-row', { hasText: `Iteration ${n}` });
        await row.first().waitFor({ timeout: 30_000 });
        expect(await row.count()).toBe(1);
      }
      // The loop's figures are its iterations': not "0 tok".
      expect(await loopRow.textContent()).not.toContain(' 0 tok');
      await page.locator('.statusbar-item', { hasText: '1 needs you' }).waitFor({ timeout: 30_000 });
      await vs.screenshot('loop-2-agents-attention');

      // Answered, the task finishes and the row no longer needs the person.
      await chatAgain.locator('[data-testid="permission-card"][data-tool="Bash"] [data-testid="permission-allow"]').click();
      await expect.poll(() => existsSync(join(ws, 'attention.txt')), { timeout: 30_000 }).toBe(true);
      await agents.locator('.monaco-list-row', { hasText: 'needs you' }).waitFor({ state: 'detached', timeout: 30_000 });
      await vs.screenshot('loop-3-done');

      // 4. The loop page in the side bar the Agents view splits: it has the chat view's height
      // (no task header, no composer), not a strip under them.
      await vs.runCommand('Keel: Show Loop');
      const pageFrame: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      await pageFrame.locator(`[data-testid="loop"][data-loop="${NAME}"]`).waitFor({ timeout: 30_000 });
      const share = await pageFrame.evaluate(() => (document.querySelector('[data-testid="loop-page"]')?.getBoundingClientRect().height ?? 0) / document.body.getBoundingClientRect().height);
      expect(share).toBeGreaterThan(0.75);
      expect(await pageFrame.locator('[data-testid="prompt-input"]').count()).toBe(0);
      expect(await pageFrame.locator('[data-testid="loop-page"]').textContent()).not.toContain('**');
      await vs.screenshot('loop-4-page-in-split-sidebar');
    } catch (e) {
      await vs?.screenshot('loop-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });

  it('Start Loop with the chat in Plan mode says why it cannot run, asks nothing and starts nothing', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({ turns: turns() });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'plan' },
        env: { ANTHROPIC_API_KEY: 'test-key' },
      });
      const page = vs.page;
      await vs.runCommand('Keel: Focus on Chat View');
      await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      await vs.runCommand('Keel: Start Loop');
      await page.locator('.notification-toast', { hasText: 'a loop cannot run in Plan (read-only) mode' }).waitFor({ timeout: 60_000 });
      await vs.screenshot('loop-4-plan-refused');
      expect(await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Keel: Start Loop (1/4)' }).isVisible()).toBe(false);
      expect(existsSync(join(vs.workspace, '.keel', 'loop'))).toBe(false);
      expect(server.requests).toHaveLength(0);
    } catch (e) {
      await vs?.screenshot('loop-plan-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });
});
