/**
 * The transcript keeps its end in view while the person reads it, and leaves them alone when they
 * scrolled up: the real dist/webview.js in Chromium (real layout, real scroll and resize events),
 * fed the host's messages as a streaming task sends them. What the demo e2e caught once under CI's
 * load: a permission card docking under the transcript right after streamed text and a new card
 * left the card it asks about below the fold.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/codeServer';
import { openWebviewPage, type WebviewPage } from './support/webviewPage';
import { launchChromium } from './support/workbench';

const config = { provider: 'demo', providerLabel: 'Demo', model: 'demo model', mode: 'default' };
const TASK = 't1';
const PARAGRAPH = 'The transcript holds many messages like this one, each a few lines long, so the chat scrolls. ';

function history(n: number) {
  const items = [];
  for (let i = 0; i < n; i++) {
    items.push({ kind: 'user', id: `u${i}`, text: `Question ${i}` });
    items.push({ kind: 'assistant', id: `a${i}`, model: 'demo model', text: `${PARAGRAPH.repeat(3)}\n\n- point ${i}`, thinking: '', streaming: false });
  }
  return items;
}

interface Geometry {
  top: number;
  fromEnd: number;
}

describe('the transcript follows its end, and leaves a reader alone (Chromium)', () => {
  let browser: Browser | undefined;
  let view: WebviewPage | undefined;
  let seq = 1;

  beforeAll(async () => {
    if (!existsSync(join(REPO_ROOT, 'dist/webview.js'))) execFileSync('node', ['scripts/build.mjs'], { cwd: REPO_ROOT, stdio: 'inherit' });
    browser = await launchChromium();
    view = await openWebviewPage(browser, { viewport: { width: 360, height: 700 } });
    // A page four times slower, as on CI's loaded cores: the frames in which a scroll is reported
    // late are what made the dock hide its card (the first test failed 4 runs out of 4 at this
    // rate with the old distance-only check, and passed unthrottled).
    const cdp = await view.page.context().newCDPSession(view.page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  });

  afterAll(async () => {
    await view?.close();
    await browser?.close();
  });

  const geometry = (): Promise<Geometry> =>
    view!.page.locator('.keel-transcript').evaluate((el) => ({ top: el.scrollTop, fromEnd: el.scrollHeight - el.clientHeight - el.scrollTop }));
  const atEnd = async () => (await geometry()).fromEnd <= 4;
  const event = (e: Record<string, unknown>) => ({ type: 'event', seq: seq++, event: { taskId: TASK, ...e } });
  /** Text streamed in small pieces, as a provider's deltas arrive. */
  const streamed = (messageId: string, chunks: number) => [
    event({ type: 'assistant_start', messageId, model: 'demo model' }),
    ...Array.from({ length: chunks }, (_, i) => event({ type: 'text', delta: i % 6 === 5 ? 'line.\n\n' : 'more words ' })),
  ];
  /** Posts the messages from inside the page, `gapMs` apart (0: all in one task). */
  const play = (messages: unknown[], gapMs: number) =>
    view!.page.evaluate(
      async ({ messages, gapMs }) => {
        for (const m of messages) {
          window.postMessage(m, '*');
          if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        }
      },
      { messages, gapMs },
    );
  const bashCall = (id: string, requestId: string) => [
    event({ type: 'tool_call', id, name: 'Bash', input: { command: 'node -p process.version', description: "Print Node's version" } }),
    {
      type: 'permissionRequest',
      seq: seq++,
      request: { requestId, taskId: TASK, toolCallId: id, tool: 'Bash', input: { command: 'node -p process.version' }, summary: 'node -p process.version', reason: 'running a command no rule allows' },
    },
  ];

  it('opens a long task at its end, follows a streamed answer, and a card docking right after it stays in view', async () => {
    const v = view!;
    await v.send({
      type: 'snapshot',
      seq: seq++,
      transcript: { taskId: TASK, title: 'Scroll', state: 'running', tags: ['running'], turnState: 'streaming', turn: 3, streamMode: null, model: 'demo model', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 }, items: history(25), done: false },
      config,
    });
    await v.page.locator('[data-testid="message-assistant"]').first().waitFor();
    await expect.poll(atEnd, { timeout: 10_000 }).toBe(true);

    // An answer streams in, then — in the same task, as the host sends them — a Bash card and its
    // permission prompt, which docks under the transcript and makes it shorter.
    await play(streamed('s1', 120), 2);
    await play([...streamed('s2', 40), ...bashCall('c1', 'r1')], 0);
    await v.page.locator('[data-testid="permission-card"][data-tool="Bash"]').waitFor();
    await expect.poll(atEnd, { timeout: 10_000 }).toBe(true);
    expect(await v.page.locator('[data-testid="tool-card"][data-tool="Bash"]').isVisible()).toBe(true);
  });

  it('a person who scrolled up to read is not pulled down by streamed text or a docking card', async () => {
    const v = view!;
    await v.send({ type: 'permissionResolved', seq: seq++, requestId: 'r1', decision: 'deny', source: 'card' });
    await v.send(event({ type: 'tool_result', id: 'c1', is_error: true, summary: 'denied' }));
    await expect.poll(atEnd, { timeout: 10_000 }).toBe(true);

    // Streaming starts; the person turns the wheel up over the transcript while it runs.
    const running = play(streamed('s3', 200), 3);
    await v.page.waitForTimeout(150);
    const box = (await v.page.locator('.keel-transcript').boundingBox())!;
    await v.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await v.page.mouse.wheel(0, -600);
    await expect.poll(async () => (await geometry()).fromEnd, { timeout: 5_000 }).toBeGreaterThan(300);
    const reading = (await geometry()).top;
    await running;
    await play(bashCall('c2', 'r2'), 0);
    await v.page.locator('[data-testid="permission-card"][data-tool="Bash"]').waitFor();
    await v.page.waitForTimeout(300);
    // Where they were reading, still: nothing moved the view.
    expect(Math.abs((await geometry()).top - reading)).toBeLessThanOrEqual(2);
    expect(await atEnd()).toBe(false);
  });

  it('back at the end (the End key), it follows again', async () => {
    const v = view!;
    await v.page.locator('.keel-transcript').focus();
    await v.page.keyboard.press('End');
    await expect.poll(atEnd, { timeout: 5_000 }).toBe(true);
    await v.send({ type: 'permissionResolved', seq: seq++, requestId: 'r2', decision: 'deny', source: 'card' });
    await play([event({ type: 'tool_result', id: 'c2', is_error: true, summary: 'denied' }), ...streamed('s4', 80)], 2);
    await expect.poll(atEnd, { timeout: 10_000 }).toBe(true);
  });

  it('turning the wheel over a command\'s own output box scrolls that box and keeps following', async () => {
    const v = view!;
    const output = Array.from({ length: 80 }, (_, i) => `line ${i} of the build\n`).join('');
    await play([event({ type: 'tool_call', id: 'c3', name: 'Bash', input: { command: 'npm run build' } }), event({ type: 'tool_output', id: 'c3', chunk: output })], 0);
    const box = v.page.locator('[data-tool="Bash"] [data-testid="bash-output"]').last();
    await box.waitFor();
    await expect.poll(atEnd, { timeout: 10_000 }).toBe(true);
    // The output box scrolls on its own (it is shorter than its 80 lines); read its last lines.
    await box.evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await expect.poll(() => box.evaluate((el) => el.scrollTop), { timeout: 5_000 }).toBeGreaterThan(0);
    const boxTop = await box.evaluate((el) => el.scrollTop);
    const inBox = (await box.boundingBox())!;
    await v.page.mouse.move(inBox.x + inBox.width / 2, inBox.y + inBox.height / 2);
    await v.page.mouse.wheel(0, -120);
    // The box took the wheel; the transcript stayed at its end.
    await expect.poll(() => box.evaluate((el) => el.scrollTop), { timeout: 5_000 }).toBeLessThan(boxTop);
    expect(await atEnd()).toBe(true);
    // The command ends and the next one asks: its card docks, and the view still follows its end.
    await play([event({ type: 'tool_result', id: 'c3', is_error: false, summary: 'exit 0' }), ...bashCall('c4', 'r4')], 0);
    await v.page.locator('[data-testid="permission-card"][data-tool="Bash"]').waitFor();
    await expect.poll(atEnd, { timeout: 10_000 }).toBe(true);
  });
});
