/**
 * Permission prompts in a real VS Code (code-server) with the packaged .vsix and the fake model
 * server. One task, one prompt per kind of answer:
 *  1. an Edit shows VS Code's diff editor AND the chat card (one request id); "Accept" in the
 *     editor title writes the file and closes the card and the tab;
 *  2. an Edit denied on the card with feedback leaves the file, closes the diff tab, and the model
 *     receives the feedback in its next request;
 *  3. a Write allowed on the card is written (the diff tab closes);
 *  4. "Always allow" on a Bash command shows the rule it will save, saves it to
 *     .keel/settings.local.json, and the next identical command runs without a prompt.
 * While a prompt waits, the status bar says "Keel: waiting for permission".
 * Screenshots go to test-results/permissions-*.png.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const GREET = 'src/greet.ts';
const FEEDBACK = 'Keep the exclamation mark, please.';
const NOTES = 'NOTES.md';
const NOTES_TEXT = '# Notes\n\nGreetings are friendly.\n';

const tool = (id: string, name: string, input: Record<string, unknown>): FakeTurn => ({ blocks: [{ type: 'tool_use', id, name, input }], chunkSize: 40 });

function turns(): FakeTurn[] {
  return [
    tool('toolu_edit_1', 'Edit', { file_path: GREET, old_string: 'return `Hello, ${name}!`;', new_string: 'return `Hi, ${name}!`;' }),
    tool('toolu_edit_2', 'Edit', { file_path: GREET, old_string: 'return `Hi, ${name}!`;', new_string: 'return `Hi, ${name}`;' }),
    tool('toolu_write_3', 'Write', { file_path: NOTES, content: NOTES_TEXT }),
    tool('toolu_bash_4', 'Bash', { command: 'touch made.txt' }),
    tool('toolu_bash_5', 'Bash', { command: 'touch made.txt' }),
    { blocks: [{ type: 'text', text: 'All done.' }] },
  ];
}

/** The messages the model was sent in request `n` (0-based), as JSON text. */
function requestText(server: FakeModelServer, n: number): string {
  const r = server.requests.filter((q) => q.path === '/v1/messages')[n];
  return r ? JSON.stringify(r.body) : '';
}

async function waitForRequests(server: FakeModelServer, n: number): Promise<void> {
  await expect.poll(() => server.requests.filter((q) => q.path === '/v1/messages').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(n);
}

describe('permissions: chat card, diff editor, always allow', () => {
  it('Accept in the diff editor, Deny with feedback on the card, Allow once, Always allow a command', async () => {
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
      const original = readFileSync(join(ws, GREET), 'utf8');
      await vs.runCommand('Keel: Focus on Chat View');
      const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('Make the greeting shorter, write notes, and touch made.txt twice.');
      await input.press('Enter');

      const card = chat.locator('[data-testid="permission-card"]');
      // One file's proposal tab: the next call's diff may open before this one's tab is gone.
      const proposedTab = (file: string) => page.locator(`.tabs-container .tab[data-resource-name="${basename(file)}"]`, { hasText: 'proposed by Keel' });
      const waiting = page.locator('.statusbar-item', { hasText: 'Keel: waiting for permission' });

      // 1. Edit: the diff editor and the card, at once; Accept in the editor title writes the file.
      await card.waitFor({ timeout: 60_000 });
      expect(await card.getAttribute('data-tool')).toBe('Edit');
      const firstCard = chat.locator(`[data-testid="permission-card"][data-request-id="${await card.getAttribute('data-request-id')}"]`);
      await proposedTab(GREET).waitFor({ timeout: 30_000 });
      await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
      await waiting.waitFor({ timeout: 30_000 });
      expect(await card.locator('[data-testid="permission-reason"]').textContent()).toContain('Keel asks because');
      const accept = page.locator('.editor-actions [aria-label*="Accept Proposed Change"]');
      await accept.waitFor({ timeout: 30_000 });
      expect(await page.locator('.editor-actions [aria-label*="Reject Proposed Change"]').count()).toBe(1);
      await vs.screenshot('permissions-1-edit-diff-and-card');
      expect(readFileSync(join(ws, GREET), 'utf8')).toBe(original);
      await accept.click();
      await expect.poll(() => readFileSync(join(ws, GREET), 'utf8'), { timeout: 30_000 }).toContain('return `Hi, ${name}!`;');
      // Answered in the editor, the card closes. (The tab's own closing is checked after the next
      // answers: the next Edit opens a tab for the same file right away.)
      await firstCard.waitFor({ state: 'detached', timeout: 30_000 });
      await waitForRequests(server, 2);
      expect(requestText(server, 1)).toContain('toolu_edit_1');

      // 2. The next Edit: Deny on the card with feedback. The file stays, the tab closes, the model hears why.
      const second = chat.locator('[data-testid="permission-card"][data-tool="Edit"]');
      await second.waitFor({ timeout: 60_000 });
      await proposedTab(GREET).waitFor({ timeout: 30_000 });
      const afterFirst = readFileSync(join(ws, GREET), 'utf8');
      await second.locator('[data-testid="permission-feedback"]').fill(FEEDBACK);
      await second.locator('[data-testid="permission-deny"]').click();
      await waitForRequests(server, 3);
      expect(requestText(server, 2)).toContain(FEEDBACK);
      expect(requestText(server, 2)).toContain('toolu_edit_2');
      expect(readFileSync(join(ws, GREET), 'utf8')).toBe(afterFirst);
      await proposedTab(GREET).waitFor({ state: 'detached', timeout: 30_000 });
      await second.waitFor({ state: 'detached', timeout: 30_000 });

      // 3. A Write allowed once on the card is written.
      const write = chat.locator('[data-testid="permission-card"][data-tool="Write"]');
      await write.waitFor({ timeout: 60_000 });
      await proposedTab(NOTES).waitFor({ timeout: 30_000 });
      await write.locator('[data-testid="permission-allow"]').click();
      await expect.poll(() => existsSync(join(ws, NOTES)) && readFileSync(join(ws, NOTES), 'utf8'), { timeout: 30_000 }).toBe(NOTES_TEXT);
      await proposedTab(NOTES).waitFor({ state: 'detached', timeout: 30_000 });

      // 4. Bash: "Always allow" shows the rule and where, saves it locally; the same command then runs unasked.
      const bash = chat.locator('[data-testid="permission-card"][data-tool="Bash"]');
      await bash.waitFor({ timeout: 60_000 });
      expect(await bash.locator('.keel-terminal').textContent()).toBe('touch made.txt');
      await bash.locator('[data-testid="permission-always"]').click();
      const rule = bash.locator('[data-testid="permission-rule-input"]');
      await rule.waitFor();
      expect(await rule.inputValue()).toBe('Bash(touch:*)');
      expect(await bash.locator('[data-testid="permission-where"]').inputValue()).toBe('local');
      expect(await bash.locator('[data-testid="permission-where-file"]').textContent()).toContain('.keel/settings.local.json');
      await vs.screenshot('permissions-2-always-allow');
      await bash.locator('[data-testid="permission-always-save"]').click();
      await expect.poll(() => existsSync(join(ws, 'made.txt')), { timeout: 30_000 }).toBe(true);
      const local = JSON.parse(readFileSync(join(ws, '.keel', 'settings.local.json'), 'utf8')) as { permissions?: { allow?: string[] } };
      expect(local.permissions?.allow).toEqual(['Bash(touch:*)']);

      // The identical command (turn 5) runs without a prompt; the task finishes.
      const answer = chat.locator('[data-testid="message-assistant"]', { hasText: 'All done.' });
      await answer.waitFor({ timeout: 60_000 });
      expect(requestText(server, 5)).toContain('toolu_bash_5');
      expect(await card.count()).toBe(0);
      await waiting.waitFor({ state: 'hidden', timeout: 30_000 });
      const log = vs.readKeelLog();
      // Four prompts were answered (two edits, the write, the first touch); the second touch never asked.
      expect(log.match(/permission \S+ \((?:Edit|Write|Bash)\): (?:allow|allowAlways|deny) via/g)).toHaveLength(4);
      expect(log).toMatch(/\(Edit\): allow via editor/);
      expect(log).toMatch(/\(Bash\): allowAlways via card/);
      await vs.screenshot('permissions-3-done');
    } catch (e) {
      await vs?.screenshot('permissions-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });
});
