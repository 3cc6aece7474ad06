/**
 * What a person reads in the sidebar, in a real VS Code (code-server) with the packaged .vsix, the
 * fake model server and the default worker pool (issue 26 items 14 and 15):
 *  1. the empty chat names the provider and model, not "mode default" beside "Ask before edits";
 *  2. a task whose command waits for permission: the header is two short lines of words ("Needs
 *     your approval", no machine names such as runnerRunning, no "worker pid N": the worker and
 *     its pid are in an icon's tooltip), at most 64 px of the view; the activity bar's Keel icon
 *     has the "waiting for permission" badge;
 *  3. the command denied on its card: the card says so once; the task completes; the transcript
 *     has most of the view, and the badge is gone;
 *  4. "Keel: Show Workers" is titled "1 worker, idle" and names the task by its title;
 *  5. History has only its title and Back: no task header, no composer.
 * Screenshots go to test-results/header-*.png.
 */
import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';
import { sendPrompt } from './support/workbench';

const READY = 'body[data-keel-ready="true"]';
const PROMPT = 'Clean the build folder, then tell me what happened.';
/** A machine's raw name: camelCase ("runnerRunning", "awaitingUser", "atCapacity"). */
const RAW = /\b[a-z]+[A-Z][A-Za-z]*\b/;

const turns = (): FakeTurn[] => [
  { blocks: [{ type: 'tool_use', id: 'toolu_bash_1', name: 'Bash', input: { command: 'rm -rf build' } }], chunkSize: 40 },
  { blocks: [{ type: 'text', text: 'You denied the command, so **nothing** was removed.' }] },
];

/** The activity bar's Keel item: its badge's number ('' when none is drawn) and its label. */
async function keelBadge(page: Page): Promise<{ shown: boolean; text: string; label: string }> {
  return page.evaluate(() => {
    const item = [...document.querySelectorAll<HTMLElement>('.activitybar .action-item')].find((li) => (li.getAttribute('aria-label') ?? li.querySelector('a')?.getAttribute('aria-label') ?? '').startsWith('Keel'));
    const badge = item?.querySelector<HTMLElement>('.badge');
    const label = item?.getAttribute('aria-label') ?? item?.querySelector('a')?.getAttribute('aria-label') ?? '';
    return { shown: !!badge && getComputedStyle(badge).display !== 'none' && (badge.textContent ?? '').trim() !== '', text: (badge?.textContent ?? '').trim(), label };
  });
}

/** The header's and the transcript's heights, the view's, and the header's words (each text node apart). */
async function layout(chat: Frame): Promise<{ view: number; header: number; transcript: number; words: string }> {
  return chat.evaluate(() => {
    const h = (sel: string) => document.querySelector(sel)?.getBoundingClientRect().height ?? 0;
    const header = document.querySelector('.keel-header');
    const words: string[] = [];
    if (header) {
      const walk = document.createTreeWalker(header, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) if (n.textContent?.trim()) words.push(n.textContent.trim());
    }
    return { view: document.body.getBoundingClientRect().height, header: h('.keel-header'), transcript: h('.keel-transcript'), words: words.join(' | ') };
  });
}

describe('the sidebar in words: header, badge, Show Workers', () => {
  it('says what happens in words, in a header that leaves the transcript the sidebar, and clears the badge', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({ turns: turns() });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'default', 'keel.workers.max': 4 },
        env: { ANTHROPIC_API_KEY: 'test-key' },
      });
      const page = vs.page;
      await vs.runCommand('Keel: Focus on Chat View');
      const chat = await vs.webviewFrame(READY, { timeoutMs: 60_000 });

      // 1. The empty chat: provider and model; the mode is the selector's words, not "mode default".
      const empty = chat.locator('[data-testid="empty-state"]');
      await empty.waitFor({ timeout: 30_000 });
      expect(await empty.textContent()).toContain('Anthropic · claude-sonnet-5-5');
      expect(await empty.textContent()).not.toMatch(/mode \w/i);
      expect(await chat.locator('[data-testid="mode-select"] option:checked').textContent()).toBe('Ask before edits');

      // 2. The command waits for permission: the header in words, short; the badge says so.
      await sendPrompt(chat, PROMPT);
      const card = chat.locator('[data-testid="permission-card"][data-tool="Bash"]');
      await card.waitFor({ timeout: 90_000 });
      const worker = chat.locator('[data-testid="task-worker"]');
      await expect.poll(() => worker.getAttribute('data-pid', { timeout: 2_000 }).catch(() => null), { timeout: 30_000 }).toMatch(/^\d+$/);
      const pid = (await worker.getAttribute('data-pid'))!;
      expect(await worker.getAttribute('title')).toContain(`pid ${pid}`);
      const waiting = await layout(chat);
      expect(await chat.locator('[data-testid="task-state"]').textContent()).toBe('Needs your approval');
      expect(waiting.words).not.toMatch(RAW);
      expect(waiting.words).not.toMatch(/\bpid\b|worker/i);
      expect(waiting.header, JSON.stringify(waiting)).toBeLessThanOrEqual(64);
      expect(await chat.locator('.keel-header > div').count()).toBe(2);
      await expect.poll(() => keelBadge(page), { timeout: 30_000 }).toMatchObject({ shown: true, text: '1' });
      expect((await keelBadge(page)).label).toContain('waiting for permission');
      await vs.screenshot('header-1-waiting');

      // 3. Denied on its card: said once; the task completes; the transcript has most of the view; no badge.
      await card.locator('[data-testid="permission-deny"]').click();
      const bash = chat.locator('[data-testid="tool-card"][data-tool="Bash"]');
      await expect.poll(() => bash.getAttribute('data-status'), { timeout: 30_000 }).toBe('denied');
      await expect.poll(() => chat.locator('[data-testid="task-state"]').getAttribute('data-state'), { timeout: 60_000 }).toBe('completed');
      expect((await bash.textContent())!.match(/denied/gi)).toHaveLength(1);
      expect(await chat.locator('[data-testid="task-state"]').textContent()).toBe('Done');
      await expect.poll(async () => (await chat.locator('[data-testid="message-assistant"] strong').allTextContents()).includes('nothing'), { timeout: 30_000 }).toBe(true);
      const done = await layout(chat);
      expect(done.words).not.toMatch(RAW);
      expect(done.header, JSON.stringify(done)).toBeLessThanOrEqual(64);
      expect(done.transcript / done.view, JSON.stringify(done)).toBeGreaterThan(0.6);
      await expect.poll(() => keelBadge(page), { timeout: 30_000 }).toMatchObject({ shown: false });
      expect((await keelBadge(page)).label).not.toContain('waiting for permission');
      await vs.screenshot('header-2-done');

      // 4. Show Workers: what a person needs in its title, the task by its title.
      const picker = page.locator('.quick-input-widget');
      const title = picker.locator('.quick-input-title', { hasText: 'Keel workers' });
      await vs.runCommand('Keel: Show Workers').catch(async (e: unknown) => {
        if (!(await title.isVisible())) throw e;
      });
      await title.waitFor({ timeout: 30_000 });
      expect(await title.textContent()).toBe('Keel workers — 1 worker, idle');
      const rows = picker.locator('.quick-input-list .monaco-list-row');
      await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(1);
      const row = (await rows.first().textContent()) ?? '';
      expect(row).toContain('Idle');
      expect(row).toContain(`pid ${pid}`);
      expect(row).toContain(`last ran “${PROMPT}”`);
      expect(row).not.toMatch(/\b(ready|busy|atCapacity)\b/);
      await vs.screenshot('header-3-show-workers');
      await page.keyboard.press('Escape');
      await title.waitFor({ state: 'hidden', timeout: 10_000 });

      // 5. History: its title and Back only.
      await page.locator('.part.sidebar .composite.title .action-label[aria-label^="Show History"]').click();
      await chat.locator('[data-testid="history-item"]').first().waitFor({ timeout: 30_000 });
      expect(await chat.locator('.keel-title').textContent()).toBe('History');
      expect(await chat.locator('.keel-header-meta').count()).toBe(0);
      expect(await chat.locator('[data-testid="task-state"]').count()).toBe(0);
      expect(await chat.locator('[data-testid="prompt-input"]').count()).toBe(0);
      await vs.screenshot('header-4-history');
      await chat.locator('[data-testid="nav-chat"]').click();
      await chat.locator('[data-testid="prompt-input"]').waitFor({ timeout: 10_000 });
    } catch (e) {
      await vs?.screenshot('header-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });
});
