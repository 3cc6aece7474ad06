/**
 * Two VS Code windows on one folder (two browser pages of one code-server: each has its own
 * extension host), the packaged .vsix and the fake model server (issue 26 item 15): window 1
 * runs a task whose answer streams slowly; window 2 opens it from History. Window 2 shows it as
 * running in another window — not "Done" — names that window in words a person knows (not
 * "VS Code window 12186 (pid 12186 on vm)"), and its composer is off for that task.
 * Screenshots go to test-results/two-windows-*.png.
 */
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { join } from 'node:path';
import { ensureKeelVsix, RESULTS_DIR, startVsCode, type VsCodeSession } from './harness';
import { runCommand, sendPrompt, webviewFrame } from './support/workbench';

const READY = 'body[data-keel-ready="true"]';
const PROMPT = 'Explain the sample workspace, slowly.';
// Streamed slowly (about two minutes): window 1 still runs it while window 2 looks.
const ANSWER = `The sample workspace holds a small library. ${'Each function is small and has a test. '.repeat(70)}`.trim();

describe('two windows: a task one window runs, seen from the other', () => {
  it('window 2 shows it running in another VS Code window, read-only, with its composer off', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({ turns: [{ blocks: [{ type: 'text', text: ANSWER }], chunkSize: 4, delayMs: 150 }] });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5' },
        env: { ANTHROPIC_API_KEY: 'test-key' },
      });
      // Window 1 starts the task; its answer streams.
      await vs.runCommand('Keel: Focus on Chat View');
      const one: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      await sendPrompt(one, PROMPT);
      await expect
        .poll(() => one.locator('[data-testid="message-assistant"]').last().textContent({ timeout: 1_000 }).catch(() => ''), { timeout: 90_000 })
        .toContain('The sample workspace');

      // Window 2: the same folder in another page of the same code-server.
      const page2 = await vs.browser.contexts()[0]!.newPage();
      await page2.goto(`${vs.baseUrl}/?folder=${encodeURIComponent(vs.workspace)}`, { waitUntil: 'domcontentloaded' });
      await page2.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
      await page2.locator('.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
      await runCommand(page2, 'Keel: Focus on Chat View');
      const two: Frame = await webviewFrame(page2, READY, { timeoutMs: 60_000 });
      await page2.locator('.part.sidebar .composite.title .action-label[aria-label^="Show History"]').click();
      const row = two.locator('[data-testid="history-item"]').first();
      await row.waitFor({ timeout: 30_000 });
      expect(await row.locator('[data-testid="history-status"]').textContent()).toBe('Running in another window');
      const rowText = (await row.textContent()) ?? '';
      expect(rowText).toContain('another VS Code window');
      expect(rowText).not.toMatch(/pid|VS Code window \d/);

      // Opened: running elsewhere, not "Done"; that window in words; the composer off.
      await row.locator('[data-testid="history-open"]').click();
      const banner = two.locator('[data-testid="stored-banner"]');
      await banner.waitFor({ timeout: 30_000 });
      expect(await two.locator('[data-testid="task-state"]').textContent()).toBe('Running in another window');
      const said = (await banner.textContent()) ?? '';
      expect(said).toMatch(/^\s*Running in another VS Code window \(since [^)]+\)\./);
      expect(said).not.toMatch(/pid|VS Code window \d/);
      expect(await two.locator('[data-testid="prompt-input"]').isDisabled()).toBe(true);
      expect(await two.locator('[data-testid="prompt-input"]').getAttribute('placeholder')).toMatch(/another VS Code window runs this task/i);
      expect(await two.locator('[data-testid="send"]').isDisabled()).toBe(true);
      // Window 1 still runs it.
      expect(await one.locator('[data-testid="task-state"]').getAttribute('data-state')).toBe('running');
      expect(server.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(1);
      await page2.screenshot({ path: join(RESULTS_DIR, 'two-windows-2.png') });
      await vs.screenshot('two-windows-1');
      await page2.close();
    } catch (e) {
      await vs?.screenshot('two-windows-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });
});
