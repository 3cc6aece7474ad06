/**
 * The composer in a real VS Code (code-server) with the packaged .vsix and the fake model server:
 *  1. `@problems`, picked from the `@` list with the keyboard, carries the TypeScript error VS Code
 *     reports for an open file to the model (its request holds the diagnostic), and shows as a
 *     chip; a message typed while the answer streams is shown as queued and sent after the turn,
 *     as the next request (never two at once).
 *  2. An image pasted into the composer shows as a thumbnail and reaches the model as an image
 *     block of the message.
 * Screenshots go to test-results/composer-*.png.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const BROKEN = 'src/broken.ts';
const TS_ERROR = "Type 'string' is not assignable to type 'number'.";
const QUEUED = 'Also add a test for it.';

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
});
