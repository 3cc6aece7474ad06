/**
 * The demo model's tour in a real VS Code (code-server) with the packaged .vsix and no key: a
 * newcomer's first prompt. The tour reads src/greet.ts (a Read card), proposes an Edit (its
 * permission card with the diff, and VS Code's diff editor), Allow writes the file, runs a
 * command (a Bash permission card), and Deny is in its last words. On the way, in a sidebar about
 * 300 px wide: Cancel sits on the composer's one row while the task works, the header says
 * "demo model", and New Task and History are in the view's title bar only.
 * Screenshots go to test-results/demo-*.png.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const GREET = 'src/greet.ts';
/** The width a sidebar has by default on a laptop-sized window. */
const SIDEBAR_PX = 300;

/** Drags the sidebar's edge until the chat webview is about `width` px wide. */
async function sidebarWidth(page: Page, chat: Frame, width: number): Promise<number> {
  const current = () => chat.evaluate(() => document.body.clientWidth);
  const sidebar = await page.locator('.part.sidebar').boundingBox();
  if (!sidebar) throw new Error('no sidebar');
  const edge = sidebar.x + sidebar.width;
  const target = edge + (width - (await current()));
  await page.mouse.move(edge - 1, sidebar.y + sidebar.height / 2);
  await page.mouse.down();
  await page.mouse.move(target - 1, sidebar.y + sidebar.height / 2, { steps: 8 });
  await page.mouse.up();
  await expect.poll(current, { timeout: 10_000 }).toBeLessThanOrEqual(width + 8);
  return current();
}

/** Whether the transcript shows its end (what the open permission card is about is in view). */
const atEnd = (chat: Frame) => () => chat.locator('.keel-transcript').evaluate((el) => el.scrollHeight - el.clientHeight - el.scrollTop <= 4);

describe('demo: the tour a newcomer sees without a key', () => {
  it('Read card, Edit card and diff, Allow writes, Bash card, Deny in the last words', async () => {
    let vs: VsCodeSession | undefined;
    try {
      vs = await startVsCode({ vsixPath: ensureKeelVsix(), settings: { 'keel.provider': 'demo', 'keel.permissions.defaultMode': 'default' } });
      const page = vs.page;
      const original = readFileSync(join(vs.workspace, GREET), 'utf8');
      await vs.runCommand('Keel: Focus on Chat View');
      const chat = await vs.webviewFrame(READY, { timeoutMs: 60_000 });

      // New Task and History once: VS Code actions in the view's title bar, not in the chat's header.
      const titleBar = page.locator('.part.sidebar .composite.title');
      await titleBar.locator('.action-label[aria-label^="New Task"]').waitFor({ timeout: 30_000 });
      expect(await titleBar.locator('.action-label[aria-label^="Show History"]').count()).toBe(1);
      expect(await chat.locator('[data-testid="new-task"], [data-testid="nav-history"]').count()).toBe(0);
      // Before a task starts, the empty state names the provider and model (the header's meta line is a task's).
      expect(await chat.locator('[data-testid="empty-state"]').textContent()).toContain('Demo · demo model');

      const width = await sidebarWidth(page, chat, SIDEBAR_PX);
      expect(width).toBeGreaterThan(SIDEBAR_PX - 40);

      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('What can Keel do?');
      await input.press('Enter');

      // 1. The tour reads the sample file: a Read card, done without asking.
      const read = chat.locator('[data-testid="tool-card"][data-tool="Read"]');
      await read.waitFor({ timeout: 60_000 });
      await expect.poll(() => read.getAttribute('data-status'), { timeout: 30_000 }).toBe('done');
      await chat.locator('[data-testid="thinking"]').first().waitFor();

      // 2. It proposes an Edit: the tool card and the permission card show the diff; VS Code's diff editor opens.
      const edit = chat.locator('[data-testid="tool-card"][data-tool="Edit"]');
      await edit.waitFor({ timeout: 60_000 });
      const card = chat.locator('[data-testid="permission-card"][data-tool="Edit"]');
      await card.waitFor({ timeout: 30_000 });
      expect(await card.locator('[data-testid="diff"]').textContent()).toContain('name = name.trim();');
      expect(await edit.getAttribute('data-status')).toBe('awaiting');
      await page.locator('.tabs-container .tab', { hasText: 'proposed by Keel' }).waitFor({ timeout: 30_000 });
      await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
      expect(readFileSync(join(vs.workspace, GREET), 'utf8')).toBe(original);

      // While the task works, Cancel takes Send's place on the composer's one row (about 300 px wide).
      const cancel = chat.locator('[data-testid="cancel"]');
      await cancel.waitFor();
      expect(await chat.locator('[data-testid="send"]').count()).toBe(0);
      // Every control of the row (mode selector, buttons) on one line, and inside the view.
      const composerRow = await chat.locator('.keel-composer-actions').evaluate((el) => {
        const boxes = [...el.querySelectorAll(':scope > label, :scope > button')].map((c) => c.getBoundingClientRect());
        const centers = boxes.map((b) => b.top + b.height / 2);
        return { controls: boxes.length, spread: Math.max(...centers) - Math.min(...centers), right: Math.max(...boxes.map((b) => b.right)), width: document.documentElement.clientWidth };
      });
      expect(composerRow.controls).toBeGreaterThanOrEqual(2);
      expect(composerRow.spread).toBeLessThan(6);
      expect(composerRow.right).toBeLessThanOrEqual(composerRow.width);
      await vs.screenshot('demo-1-edit-permission');

      // 3. Allow once: the file is written, the tour goes on to a command.
      await card.locator('[data-testid="permission-allow"]').click();
      await expect.poll(() => readFileSync(join(vs!.workspace, GREET), 'utf8'), { timeout: 30_000 }).toContain('name = name.trim();');
      await expect.poll(() => edit.getAttribute('data-status'), { timeout: 30_000 }).toBe('done');

      // 4. The command asks too: a Bash permission card. Deny it.
      const bash = chat.locator('[data-testid="permission-card"][data-tool="Bash"]');
      await bash.waitFor({ timeout: 60_000 });
      expect(await bash.locator('.keel-terminal').textContent()).toBe('node -p process.version');
      // The dock of the card did not push what it is about out of view.
      await expect.poll(atEnd(chat), { timeout: 10_000 }).toBe(true);
      expect(await chat.locator('[data-testid="tool-card"][data-tool="Bash"]').isVisible()).toBe(true);
      await vs.screenshot('demo-2-bash-permission');
      await bash.locator('[data-testid="permission-deny"]').click();
      await expect.poll(() => chat.locator('[data-testid="tool-card"][data-tool="Bash"]').getAttribute('data-status'), { timeout: 30_000 }).toBe('denied');

      // 5. The last words say what happened: the edit allowed, the command denied.
      const last = chat.locator('[data-testid="message-assistant"]').last();
      await expect.poll(() => last.textContent(), { timeout: 60_000 }).toContain('The command was denied, so it did not run.');
      await expect.poll(() => last.getAttribute('data-streaming'), { timeout: 30_000 }).toBe('false');
      expect(await last.textContent()).toContain('allowed, so the file changed');
      await expect.poll(() => chat.locator('[data-testid="task-state"]').getAttribute('data-state'), { timeout: 30_000 }).toBe('completed');
      expect(await chat.locator('[data-testid="task-state"]').textContent()).toBe('Done');
      expect(await chat.locator('[data-testid="send"]').count()).toBe(1);
      await expect.poll(atEnd(chat), { timeout: 10_000 }).toBe(true);
      // The code block quoting the edited lines is highlighted.
      expect(await chat.locator('.keel-code .tok-kw').count()).toBeGreaterThan(0);
      await vs.screenshot('demo-3-done');

      // History (from the title bar) names the model "demo model".
      await titleBar.locator('.action-label[aria-label^="Show History"]').click();
      const row = chat.locator('[data-testid="history-item"]').first();
      await row.waitFor({ timeout: 20_000 });
      expect(await row.locator('[data-testid="history-model"]').textContent()).toBe('demo model');
      expect(await row.locator('[data-testid="history-status"]').textContent()).toBe('Done');
      await titleBar.locator('.action-label[aria-label^="New Task"]').click();
      await chat.locator('[data-testid="empty-state"]').waitFor({ timeout: 20_000 });
    } catch (e) {
      await vs?.screenshot('demo-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
    }
  });
});
