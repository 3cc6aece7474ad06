/**
 * Project memory in a real VS Code (code-server) with the packaged .vsix and the fake model server:
 *  1. a workspace with a CLAUDE.md and two memory files (one whose title, tags and text carry
 *     HTML); a prompt about the unit tests: the request to the model carries the instructions and
 *     both memories, and the chat says so ("Instructions: CLAUDE.md", "Used 2 memories" naming
 *     them, the HTML as text);
 *  2. a memory's title in that note opens its file in an editor;
 *  3. Settings → Memory… lists both memories; Delete asks in VS Code's modal, and once confirmed the
 *     memory is gone from the page and from disk; the HTML never became an element.
 * The harness turns keel.memory.autoSave off (no lesson call takes a scripted turn); this test
 * leaves it so. Screenshots go to test-results/memory-*.png.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">';
const VITEST_TITLE = 'Unit tests run with vitest';
// Close enough to the prompt that a run uses it beside the first (checked with `keel memory search`).
const HOSTILE_TITLE = `Run the unit tests with vitest in watch mode ${HOSTILE}`;

function memory(title: string, tags: string, body: string): string {
  return `---\ntitle: ${title}\ncreated: 2026-01-02T10:00:00.000Z\ntags: [${tags}]\n---\n${body}\n`;
}

describe('project memory in VS Code', () => {
  it('the chat shows CLAUDE.md and the memories a run used; the Memory page lists and deletes one', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({ turns: [{ blocks: [{ type: 'text', text: 'Run npm run test:unit.' }] }] });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5' },
        env: { ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: mkdtempSync(join(tmpdir(), 'keel-e2e-home-')) },
      });
      const ws = vs.workspace;
      // Read at the start of the run, so they may be written now.
      writeFileSync(join(ws, 'CLAUDE.md'), '# Project rules\n\nAlways answer in one sentence (from CLAUDE.md).\n');
      const dir = join(ws, '.keel', 'memory');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'unit-tests.md'), memory(VITEST_TITLE, 'testing, vitest', 'Unit tests: `npm run test:unit` (vitest). The e2e tests need `npm run package` first.'));
      writeFileSync(join(dir, 'vitest-flags.md'), memory(HOSTILE_TITLE, `testing, vitest, ${HOSTILE}`, `To run the unit tests with vitest while editing: npx vitest --project unit (watch mode). ${HOSTILE}`));

      const page = vs.page;
      // A repository's CLAUDE.md and memories are used once the person approved them (docs/permissions.md, "Trust").
      await vs.runCommand('Keel: Review Workspace Trust');
      const review = page.locator('.monaco-dialog-box', { hasText: 'Approve what this workspace provides?' });
      await review.waitFor({ timeout: 60_000 });
      expect(await review.textContent()).toContain('instructions CLAUDE.md');
      await review.locator('.monaco-button', { hasText: /^Approve all$/ }).click();
      await review.waitFor({ state: 'detached', timeout: 30_000 });
      await vs.runCommand('Keel: Focus on Chat View');
      const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('How do I run the unit tests with vitest?');
      await input.press('Enter');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Run npm run test:unit.' }).waitFor({ timeout: 60_000 });

      // 1. The request carried both, and the chat says which were used.
      const request = JSON.stringify(server.requests.filter((r) => r.path === '/v1/messages')[0]?.body ?? {});
      expect(request).toContain('Always answer in one sentence (from CLAUDE.md).');
      expect(request).toContain('npm run package');
      expect(request).toContain('.keel/memory/unit-tests.md');
      const note = chat.locator('[data-testid="context-note"]');
      await note.waitFor({ timeout: 30_000 });
      expect(await note.locator('[data-testid="context-instructions"]').textContent()).toContain('CLAUDE.md');
      expect(await note.locator('[data-testid="context-memories"]').textContent()).toContain('Used 2 memories');
      const used = note.locator('[data-testid="context-memory"]');
      expect((await used.allTextContents()).sort()).toEqual([HOSTILE_TITLE, VITEST_TITLE].sort());
      expect(await note.locator('img').count()).toBe(0);
      await vs.screenshot('memory-1-chat');

      // 2. A memory's title opens its file in an editor.
      await note.locator('[data-testid="context-memory"][data-file="unit-tests.md"]').click();
      await page.locator('.tabs-container .tab', { hasText: 'unit-tests.md' }).waitFor({ timeout: 30_000 });

      // 3. Settings → Memory…: both listed, the HTML as text.
      await chat.locator('[data-testid="nav-settings"]').click();
      await chat.locator('[data-testid="settings-open-memory"]').click();
      const memoryPage = chat.locator('[data-testid="memory-page"]');
      const rows = memoryPage.locator('[data-testid="memory"]');
      await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(2);
      const hostileRow = memoryPage.locator('[data-testid="memory"][data-file="vitest-flags.md"]');
      expect(await hostileRow.locator('[data-testid="memory-title"]').textContent()).toBe(HOSTILE_TITLE);
      expect(await hostileRow.locator('[data-testid="memory-preview"]').textContent()).toContain(HOSTILE);
      expect(await memoryPage.locator('[data-testid="memory-autosave"]').isChecked()).toBe(false);
      expect(await memoryPage.locator('[data-testid="memory-enabled"]').isChecked()).toBe(true);
      await vs.screenshot('memory-2-page');

      // Delete asks in VS Code's modal; confirmed, the memory is gone from the page and the disk.
      await memoryPage.locator('[data-testid="memory"][data-file="unit-tests.md"] [data-testid="memory-delete"]').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      expect(await dialog.textContent()).toContain(`Delete the memory "${VITEST_TITLE}"?`);
      await vs.screenshot('memory-3-confirm');
      await dialog.locator('.monaco-button', { hasText: /^Delete$/ }).click();
      await memoryPage.locator('[data-testid="memory"][data-file="unit-tests.md"]').waitFor({ state: 'detached', timeout: 30_000 });
      expect(existsSync(join(dir, 'unit-tests.md'))).toBe(false);
      expect(existsSync(join(dir, 'vitest-flags.md'))).toBe(true);
      expect(await rows.count()).toBe(1);
      // A file added on disk shows without asking (the folder is watched).
      writeFileSync(join(dir, 'added.md'), memory('Added on disk', 'misc', 'Seen by the watcher.'));
      await memoryPage.locator('[data-testid="memory"][data-file="added.md"]').waitFor({ timeout: 30_000 });
      expect(await chat.locator('[data-testid="memory-page"] img, [data-testid="context-note"] img').count()).toBe(0);
      expect(await chat.evaluate(() => document.body.dataset.pwned ?? null)).toBeNull();
      await vs.screenshot('memory-4-deleted');
    } catch (e) {
      await vs?.screenshot('memory-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });
});
