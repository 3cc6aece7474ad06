/**
 * "Rewind to here" in a real VS Code (code-server) with the packaged .vsix and the fake model
 * server (issue 23): a scripted task edits two files and runs a command that changes a third;
 * "Rewind to here" on its first tool card shows the preview (the card lists the three files, the
 * first one's diff opens in VS Code's diff editor) before anything is written, the rewind puts all
 * three back, the header shows the task's checkpoint storage, and the model's next request carries
 * the rewound conversation (the prompt, not the calls that came after). Then per-hunk review: an
 * Edit with two changes, the second left out on the chat card with the keyboard; the file holds
 * exactly the first, and the model is told which change did not land; the same in VS Code's diff
 * editor, where "Keel: Leave Out This Change" at the cursor shows the proposal without that change
 * and Accept writes it. Screenshots go to
 * test-results/rewind-*.png.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type FakeTurn } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const GREET = 'src/greet.ts';
const README = 'README.md';
const THIRD = 'notes.txt';
const PROMPT = 'Shorten the greeting, rewrite the readme and update the notes.';
const AGAIN = 'Try a different way this time.';

const tool = (id: string, name: string, input: Record<string, unknown>): FakeTurn => ({ blocks: [{ type: 'tool_use', id, name, input }], chunkSize: 40 });

/** The messages the model was sent in request `n` (0-based), as JSON text. */
function requestText(server: FakeModelServer, n: number): string {
  const r = server.requests.filter((q) => q.path === '/v1/messages')[n];
  return r ? JSON.stringify(r.body) : '';
}

describe('rewind: "Rewind to here" on a tool card', () => {
  it('previews in the diff editor, restores two edited files and one a command changed, and rewinds the conversation', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({
        turns: [
          tool('toolu_edit_a', 'Edit', { file_path: GREET, old_string: 'return `Hello, ${name}!`;', new_string: 'return `Hi, ${name}!`;' }),
          tool('toolu_write_b', 'Write', { file_path: README, content: '# Rewritten by the agent\n' }),
          tool('toolu_bash_c', 'Bash', { command: `printf 'changed by a command\\n' > ${THIRD}` }),
          { blocks: [{ type: 'text', text: 'All three changed.' }] },
          { blocks: [{ type: 'text', text: 'Starting again from the rewound point.' }] },
        ],
      });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'bypassPermissions' },
        env: { ANTHROPIC_API_KEY: 'test-key' },
      });
      const ws = vs.workspace;
      const read = (p: string) => readFileSync(join(ws, p), 'utf8');
      writeFileSync(join(ws, THIRD), 'the notes as they were\n');
      const before = { greet: read(GREET), readme: read(README), third: read(THIRD) };

      await vs.runCommand('Keel: Focus on Chat View');
      const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill(PROMPT);
      await input.press('Enter');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'All three changed.' }).waitFor({ timeout: 90_000 });
      expect(read(GREET)).toContain('return `Hi, ${name}!`;');
      expect(read(README)).toBe('# Rewritten by the agent\n');
      expect(read(THIRD)).toBe('changed by a command\n');
      // The header says how much the task's checkpoints hold.
      await expect.poll(() => chat.locator('[data-testid="checkpoint-storage"]').textContent(), { timeout: 30_000 }).toMatch(/\d/);

      // "Rewind to here" on the first tool card: the preview, nothing written yet.
      const first = chat.locator('[data-testid="tool-card"][data-tool-id="toolu_edit_a"]');
      await first.locator('[data-testid="rewind-here"]').click();
      const card = chat.locator('[data-testid="rewind-card"]');
      await card.waitFor({ timeout: 30_000 });
      const rows = card.locator('[data-testid="rewind-file"]');
      await expect.poll(async () => (await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-path')))).sort(), { timeout: 30_000 }).toEqual([README, THIRD, GREET].sort());
      // The first file's diff is open in VS Code's diff editor.
      await vs.page.locator('.tabs-container .tab', { hasText: 'rewound to before step' }).first().waitFor({ timeout: 30_000 });
      await vs.page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
      await vs.screenshot('rewind-1-preview');
      expect(read(README)).toBe('# Rewritten by the agent\n');
      expect(read(THIRD)).toBe('changed by a command\n');

      // Rewind: all three files are back.
      await card.locator('[data-testid="rewind-apply"]').click();
      await expect.poll(() => [read(GREET), read(README), read(THIRD)], { timeout: 30_000 }).toEqual([before.greet, before.readme, before.third]);
      await chat.locator('[data-testid="rewind-marker"]').waitFor({ timeout: 30_000 });
      await vs.screenshot('rewind-2-rewound');

      // The next message continues from the rewound conversation: the prompt, not what came after it.
      const requestsBefore = server.requests.filter((q) => q.path === '/v1/messages').length;
      await input.fill(AGAIN);
      await input.press('Enter');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Starting again from the rewound point.' }).waitFor({ timeout: 60_000 });
      const next = requestText(server, requestsBefore);
      expect(next).toContain(PROMPT);
      expect(next).toContain(AGAIN);
      expect(next).not.toContain('toolu_write_b');
      expect(next).not.toContain('toolu_bash_c');
      expect(next).not.toContain('All three changed.');
    } catch (e) {
      await vs?.screenshot('rewind-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });

  it('an Edit reviewed hunk by hunk on the card writes exactly the accepted change', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    const OLD = "  if (hour < 12) return 'Good morning';\n  if (hour < 18) return 'Good afternoon';\n  return 'Good evening';";
    const NEW = "  if (hour < 11) return 'Good morning';\n  if (hour < 18) return 'Good afternoon';\n  return 'Good night';";
    try {
      server = await startFakeModelServer({
        turns: [tool('toolu_edit_two', 'Edit', { file_path: GREET, old_string: OLD, new_string: NEW }), { blocks: [{ type: 'text', text: 'Reviewed edit done.' }] }],
      });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'default' },
        env: { ANTHROPIC_API_KEY: 'test-key' },
      });
      const ws = vs.workspace;
      const original = readFileSync(join(ws, GREET), 'utf8');
      await vs.runCommand('Keel: Focus on Chat View');
      const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('Change the morning cut-off and the evening greeting.');
      await input.press('Enter');

      const card = chat.locator('[data-testid="permission-card"][data-tool="Edit"]');
      await card.waitFor({ timeout: 60_000 });
      await card.locator('[data-testid="review-hunks"] summary').click();
      const hunks = card.locator('[data-testid="hunk"]');
      await expect.poll(() => hunks.count(), { timeout: 30_000 }).toBe(2);
      // With the keyboard: focus the second change and press R to leave it out.
      await hunks.nth(1).focus();
      await hunks.nth(1).press('r');
      await expect.poll(() => hunks.nth(1).getAttribute('data-choice')).toBe('reject');
      expect(await hunks.nth(0).getAttribute('data-choice')).toBe('accept');
      await vs.screenshot('rewind-3-hunk-review');
      expect(readFileSync(join(ws, GREET), 'utf8')).toBe(original);
      await card.locator('[data-testid="permission-allow"]').click();

      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Reviewed edit done.' }).waitFor({ timeout: 60_000 });
      const expected = original.replace("if (hour < 12) return 'Good morning';", "if (hour < 11) return 'Good morning';");
      expect(readFileSync(join(ws, GREET), 'utf8')).toBe(expected);
      // The model's next request says which change landed and which did not.
      const told = requestText(server, 1);
      expect(told).toContain('1 of 2 applied as you proposed');
      expect(told).toContain('Change 2');
      expect(told).toContain('NOT applied');
      expect(vs.readKeelLog()).toMatch(/\(Edit\): allow via card/);
    } catch (e) {
      await vs?.screenshot('rewind-review-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });

  it('in the diff editor: Leave Out This Change at the cursor, the other change edited by hand, then Accept, writes exactly that', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    const OLD = "  if (hour < 12) return 'Good morning';\n  if (hour < 18) return 'Good afternoon';\n  return 'Good evening';";
    const NEW = "  if (hour < 11) return 'Good morning';\n  if (hour < 18) return 'Good afternoon';\n  return 'Good night';";
    try {
      server = await startFakeModelServer({
        turns: [tool('toolu_edit_two', 'Edit', { file_path: GREET, old_string: OLD, new_string: NEW }), { blocks: [{ type: 'text', text: 'Reviewed in the editor.' }] }],
      });
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'default' },
        env: { ANTHROPIC_API_KEY: 'test-key' },
      });
      const page = vs.page;
      const ws = vs.workspace;
      const original = readFileSync(join(ws, GREET), 'utf8');
      const line = original.split('\n').findIndex((l) => l.includes("return 'Good evening'")) + 1;
      await vs.runCommand('Keel: Focus on Chat View');
      const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('Change the morning cut-off and the evening greeting.');
      await input.press('Enter');

      const modified = page.locator('.monaco-diff-editor .editor.modified');
      await modified.locator('.view-lines', { hasText: 'Good night' }).waitFor({ timeout: 60_000 });
      // The cursor on the second change (the proposed side), from the keyboard: Go to Line.
      await modified.locator('.view-lines').click();
      await page.keyboard.press('Control+G');
      await page.keyboard.type(String(line));
      await page.keyboard.press('Enter');
      await vs.runCommand('Keel: Leave Out This Change');
      // The proposed side now shows what would be written: the old evening line, the new morning one.
      await modified.locator('.view-lines', { hasText: 'Good evening' }).waitFor({ timeout: 30_000 });
      // (The editor renders spaces as no-break spaces.)
      expect((await modified.locator('.view-lines').textContent())?.replace(/\u00a0/g, ' ')).toContain('hour < 11');
      await vs.screenshot('rewind-4-diff-editor-review');
      // The person types into the proposed side: a note at the end of the morning change.
      await modified.locator('.view-line', { hasText: 'Good morning' }).click();
      await page.keyboard.press('End');
      await page.keyboard.type(' // by hand');
      await modified.locator('.view-lines', { hasText: 'by hand' }).waitFor({ timeout: 30_000 });
      await vs.screenshot('rewind-5-diff-editor-edited');
      expect(readFileSync(join(ws, GREET), 'utf8')).toBe(original);
      await page.locator('.editor-actions [aria-label*="Accept Proposed Change"]').click();

      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Reviewed in the editor.' }).waitFor({ timeout: 60_000 });
      // Exactly what the proposed side showed: the morning change as typed, the evening line as it was.
      expect(readFileSync(join(ws, GREET), 'utf8')).toBe(original.replace("if (hour < 12) return 'Good morning';", "if (hour < 11) return 'Good morning'; // by hand"));
      expect(requestText(server, 1)).toContain('NOT applied');
      expect(requestText(server, 1)).toContain('replaced your proposal with their own lines');
      expect(requestText(server, 1)).toContain("return 'Good morning'; // by hand");
      // The diff tab closed without asking to save.
      await page.locator('.monaco-diff-editor').waitFor({ state: 'detached', timeout: 30_000 });
    } catch (e) {
      await vs?.screenshot('rewind-editor-review-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });
});
