/**
 * The composer in a real VS Code (code-server) with the packaged .vsix and the fake model server:
 *  1. `@problems`, picked from the `@` list with the keyboard, carries the TypeScript error VS Code
 *     reports for an open file to the model (its request holds the diagnostic), and shows as a
 *     chip; a message typed while the answer streams is shown as queued and sent after the turn,
 *     as the next request (never two at once).
 *  2. An image pasted into the composer shows as a thumbnail and reaches the model as an image
 *     block of the message; a `review.md` command with `$ARGUMENTS` (the workspace's own,
 *     .claude/commands, approved with Keel: Review Workspace Trust) runs from the `/` list with its text expanded (what the model
 *     gets) while the chat shows it as typed, its expansion behind a disclosure; the todo checklist
 *     updates live as the model rewrites it.
 * Screenshots go to test-results/composer-*.png.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const BROKEN = 'src/broken.ts';
const TS_ERROR = "Type 'string' is not assignable to type 'number'.";
const QUEUED = 'Also add a test for it.';
/** A 1×1 PNG. */
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** The bodies of the model requests so far, as JSON text. */
function requests(server: FakeModelServer): string[] {
  return server.requests.filter((q) => q.path === '/v1/messages').map((r) => JSON.stringify(r.body));
}

async function waitForRequests(server: FakeModelServer, n: number): Promise<void> {
  await expect.poll(() => requests(server).length, { timeout: 60_000 }).toBeGreaterThanOrEqual(n);
}

function settings(server: FakeModelServer): Record<string, unknown> {
  return { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5' };
}

async function openChat(vs: VsCodeSession): Promise<Frame> {
  await vs.runCommand('Keel: Focus on Chat View');
  return vs.webviewFrame(READY, { timeoutMs: 60_000 });
}

describe('the composer in VS Code', () => {
  it('@problems carries the open file’s TypeScript error to the model; a message typed mid-stream is queued and sent after the turn', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    try {
      server = await startFakeModelServer({
        turns: [
          // The first answer stalls mid-stream until the test has queued its message.
          { blocks: [{ type: 'text', text: 'Looking at the error in broken.ts now, one moment.' }], chunkSize: 6, fault: { kind: 'stall', afterEvents: 5, until: released } },
          { blocks: [{ type: 'text', text: 'Added the test as well.' }] },
        ],
      });
      vs = await startVsCode({ vsixPath: ensureKeelVsix(), settings: settings(server), env: { ANTHROPIC_API_KEY: 'test-key' } });
      const page = vs.page;
      writeFileSync(join(vs.workspace, BROKEN), "export const count: number = 'three';\n");
      // Open the file so that VS Code's TypeScript reports its error (a squiggle in the editor).
      await page.keyboard.press('Control+P');
      await page.keyboard.type('broken.ts');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'broken.ts' }).first().waitFor({ timeout: 30_000 });
      await page.keyboard.press('Enter');
      await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 120_000 });

      const chat = await openChat(vs);
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.click();
      await input.pressSequentially('Fix @probl');
      // The @ list, from the keyboard: the first item is the workspace's problems.
      const option = chat.locator('[data-testid="mention-option"][data-kind="problems"]').first();
      await option.waitFor({ timeout: 30_000 });
      expect(await chat.locator('[data-testid="mention-option"]').first().getAttribute('aria-selected')).toBe('true');
      await input.press('Tab');
      expect(await input.inputValue()).toBe('Fix @problems ');
      const chip = chat.locator('[data-testid="mention-chip"]');
      await chip.waitFor({ timeout: 10_000 });
      expect(await chip.textContent()).toBe('problems');
      await input.pressSequentially('please.');
      await input.press('Enter');

      // The first request carries the diagnostic; the answer streams, then stalls.
      await waitForRequests(server, 1);
      const first = requests(server)[0]!;
      expect(first).toContain(TS_ERROR);
      expect(first).toContain('broken.ts');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Looking' }).waitFor({ timeout: 30_000 });
      await chat.locator('[data-testid="message-user"] [data-testid="attachment"][data-kind="problems"]').waitFor({ timeout: 10_000 });

      // Typed mid-stream: queued (shown as pending), not sent.
      await input.fill(QUEUED);
      await input.press('Enter');
      const pending = chat.locator('[data-testid="queued-message"]');
      await pending.waitFor({ timeout: 30_000 });
      expect(await pending.textContent()).toContain(QUEUED);
      await vs.screenshot('composer-1-queued');
      expect(requests(server)).toHaveLength(1);

      // The turn ends: the queued message is the next request, after the first ended.
      release();
      await waitForRequests(server, 2);
      const second = requests(server)[1]!;
      expect(second).toContain(QUEUED);
      expect(second).toContain('Looking at the error in broken.ts now, one moment.');
      expect(server.maxConcurrent()).toBe(1);
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Added the test as well.' }).waitFor({ timeout: 30_000 });
      expect(await pending.count()).toBe(0);
      await vs.screenshot('composer-2-sent');
    } catch (e) {
      await vs?.screenshot('composer-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      release();
      await vs?.close();
      await server?.close();
    }
  });
  it('a pasted image reaches the model as an image block; /review runs from the / list expanded; the todo checklist updates live', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const todo = (status: string, second: string) => ({
      todos: [
        { content: 'Read greet.ts', status, activeForm: 'Reading greet.ts' },
        { content: 'Write the review', status: second, activeForm: 'Writing the review' },
      ],
    });
    try {
      server = await startFakeModelServer({
        turns: [
          { blocks: [{ type: 'text', text: 'A tiny red square.' }] },
          { blocks: [{ type: 'tool_use', id: 'toolu_todo_1', name: 'TodoWrite', input: todo('in_progress', 'pending') }] },
          // The list's update waits until the test saw the first one.
          { blocks: [{ type: 'tool_use', id: 'toolu_todo_2', name: 'TodoWrite', input: todo('completed', 'completed') }], fault: { kind: 'stall', afterEvents: 1, until: released } },
          { blocks: [{ type: 'text', text: 'Review done: greet.ts is fine.' }] },
        ],
      });
      // A home of its own: no command of this machine's person is offered.
      const home = mkdtempSync(join(tmpdir(), 'keel-e2e-home-'));
      vs = await startVsCode({ vsixPath: ensureKeelVsix(), settings: settings(server), env: { ANTHROPIC_API_KEY: 'test-key', HOME: home } });
      const chat = await openChat(vs);
      const input = chat.locator('[data-testid="prompt-input"]');

      // 1. Paste an image (a real paste event with the image on its clipboard data).
      await input.click();
      await input.evaluate((el, b64) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'square.png', { type: 'image/png' }));
        el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
      }, PNG_B64);
      const thumb = chat.locator('[data-testid="composer-image"]');
      await thumb.waitFor({ timeout: 30_000 });
      await chat.locator('[data-testid="composer-image"][data-thumbnail="true"]').waitFor({ timeout: 30_000 });
      expect(await thumb.locator('img').getAttribute('alt')).toBe('square.png');
      await input.pressSequentially('What is in this image?');
      await input.press('Enter');
      await waitForRequests(server, 1);
      const body = server.requests.filter((q) => q.path === '/v1/messages')[0]!.body as { messages: { role: string; content: unknown }[] };
      // The image first (as the Messages API recommends), then the text.
      const content = body.messages[0]!.content as { type: string; text?: string }[];
      expect(content[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } });
      expect(content[1]).toMatchObject({ type: 'text', text: 'What is in this image?' });
      await chat.locator('[data-testid="message-user"] [data-testid="message-image"] img').waitFor({ timeout: 30_000 });
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'A tiny red square.' }).waitFor({ timeout: 30_000 });
      await vs.screenshot('composer-3-image');

      // 2. The workspace's own .claude/commands/review.md: repository content, offered once the
      // person approved it (Keel: Review Workspace Trust shows it with everything else), then
      // /review from the / list, with the keyboard; its $ARGUMENTS filled.
      mkdirSync(join(vs.workspace, '.claude', 'commands'), { recursive: true });
      writeFileSync(join(vs.workspace, '.claude', 'commands', 'review.md'), '---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS carefully and list what is wrong.\n');
      await vs.runCommand('Keel: Review Workspace Trust');
      const dialog = vs.page.locator('.monaco-dialog-box', { hasText: 'Approve what this workspace provides?' });
      await dialog.waitFor({ timeout: 60_000 });
      expect((await dialog.textContent()) ?? '').toContain('command /review');
      await dialog.locator('.monaco-button', { hasText: /^Approve all$/ }).click();
      await expect.poll(() => vs!.readKeelLog(), { timeout: 30_000 }).toMatch(/approved \d+ item\(s\) of this workspace/);
      await input.click();
      await input.pressSequentially('/revi');
      const command = chat.locator('[data-testid="command-option"]', { hasText: '/review' });
      await command.waitFor({ timeout: 30_000 });
      await input.press('Enter');
      expect(await input.inputValue()).toBe('/review ');
      await input.pressSequentially('src/greet.ts');
      await input.press('Enter');
      await waitForRequests(server, 2);
      // The last user message of the request, whole (a failure shows what was sent, not a cut body).
      const sent = JSON.parse(requests(server)[1]!) as { messages: { role: string; content: unknown }[] };
      expect(JSON.stringify(sent.messages.filter((m) => m.role === 'user').at(-1)?.content)).toContain('Review src/greet.ts carefully and list what is wrong.');
      expect(JSON.stringify(sent.messages)).not.toContain('/review');
      // The chat shows the message as typed; its disclosure, pressed from the keyboard, shows what /review sent.
      const mine = chat.locator('[data-testid="message-user"]').last();
      await expect.poll(async () => (await mine.locator('[data-testid="message-user-text"]').textContent())?.trim(), { timeout: 30_000 }).toBe('/review src/greet.ts');
      expect(await mine.locator('[data-testid="message-user-sent"]').count()).toBe(0);
      const disclosure = mine.locator('[data-testid="message-user-sent-toggle"]');
      expect((await disclosure.textContent())?.trim()).toBe('Show what /review sent');
      await disclosure.focus();
      await disclosure.press('Enter');
      expect(await disclosure.getAttribute('aria-expanded')).toBe('true');
      expect((await mine.locator('[data-testid="message-user-sent"]').textContent())?.trim()).toBe('Review src/greet.ts carefully and list what is wrong.');
      await vs.screenshot('composer-4-typed-command');

      // 3. The checklist, live: first 0/2 with the current item, then 2/2.
      const count = chat.locator('[data-testid="todos-count"]');
      await expect.poll(async () => (await count.textContent())?.trim(), { timeout: 30_000 }).toBe('Todos 0/2');
      expect(await chat.locator('[data-testid="todos-current"]').textContent()).toContain('Reading greet.ts');
      await vs.screenshot('composer-5-todos');
      release();
      await expect.poll(async () => (await count.textContent())?.trim(), { timeout: 30_000 }).toBe('Todos 2/2');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Review done' }).waitFor({ timeout: 30_000 });
    } catch (e) {
      await vs?.screenshot('composer-failure-2').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      release();
      await vs?.close();
      await server?.close();
    }
  });
});
