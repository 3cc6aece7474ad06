/**
 * Tasks that survive navigation and a window reload, in a real VS Code (code-server) with the
 * packaged .vsix, against the fake model server (through a loopback proxy that records whether
 * each model stream was delivered to its end or cut off).
 *
 * 1. A long streaming answer keeps running while the view is hidden (another view container,
 *    then the side bar toggled off) and while another task is opened; back through History the
 *    answer is whole and its one stream completed.
 * 2. "Developer: Reload Window" in the middle of another long answer: after the reload the chat
 *    shows the task interrupted, Resume continues it, and the resume request carries the earlier
 *    messages (the prompt and the cut-off answer).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';
import { sendPrompt } from './support/workbench';

const READY = 'body[data-keel-ready="true"]';
const sentence = (n: number) => `Sentence ${n} of the long answer keeps the stream open for a while.`;
/** About 1,400 characters: 4 per delta, 30 ms apart, so about ten seconds of streaming. */
const LONG_A = Array.from({ length: 20 }, (_, i) => sentence(i + 1)).join(' ');
const SHORT_B = 'A short answer to the second task.';
const LONG_C = Array.from({ length: 20 }, (_, i) => `Reload part ${i + 1} is streamed slowly on purpose.`).join(' ');
const RESUMED = 'Resumed after the reload and finished the answer.';
const collapse = (s: string): string => s.replace(/\s+/g, ' ').trim();

interface ProxiedStream {
  taskId: string | null;
  body: unknown;
  /** true: every byte of the model's response reached the extension; false: cut off; undefined: in flight. */
  completed: boolean | undefined;
}

/** A loopback proxy in front of the fake model server that records how each response ended. */
async function startStreamProxy(upstream: string): Promise<{ url: string; streams: ProxiedStream[]; close(): Promise<void> }> {
  const streams: ProxiedStream[] = [];
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = raw.toString('utf8');
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        /* recorded as text */
      }
      const record: ProxiedStream = { taskId: (req.headers['x-keel-task-id'] as string | undefined) ?? null, body, completed: undefined };
      streams.push(record);
      const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        res.on('finish', () => (record.completed ??= true));
      });
      res.on('close', () => {
        if (!res.writableFinished) {
          record.completed = false;
          up.destroy();
        }
      });
      up.on('error', () => res.destroy());
      up.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The last assistant message's text and streaming flag (undefined while the frame is reloading). */
async function lastAnswer(chat: Frame): Promise<{ text: string; streaming: string | null } | undefined> {
  return chat
    .locator('[data-testid="message-assistant"]')
    .last()
    .evaluate((el) => ({ text: el.textContent ?? '', streaming: el.getAttribute('data-streaming') }), undefined, { timeout: 1_000 })
    .then((s) => ({ ...s, text: collapse(s.text) }))
    .catch(() => undefined);
}

async function openChat(vs: VsCodeSession): Promise<Frame> {
  await vs.runCommand('Keel: Focus on Chat View');
  return vs.webviewFrame(READY, { timeoutMs: 60_000 });
}

describe('persistence: tasks survive navigation and a window reload', () => {
  let model: FakeModelServer | undefined;
  let proxy: Awaited<ReturnType<typeof startStreamProxy>> | undefined;
  let vs: VsCodeSession | undefined;

  beforeAll(async () => {
    const vsixPath = ensureKeelVsix();
    model = await startFakeModelServer({
      turns: [
        // The long answers stream for about 40 s (330 chunks, 120 ms apart): on a loaded machine the
        // palette commands between "still streaming" checks have taken over 10 s.
        { blocks: [{ type: 'text', text: LONG_A }], chunkSize: 4, delayMs: 120 },
        { blocks: [{ type: 'text', text: SHORT_B }], chunkSize: 8, delayMs: 5 },
        { blocks: [{ type: 'text', text: LONG_C }], chunkSize: 4, delayMs: 120 },
        { blocks: [{ type: 'text', text: RESUMED }], chunkSize: 6, delayMs: 10 },
      ],
    });
    proxy = await startStreamProxy(model.url);
    vs = await startVsCode({
      vsixPath,
      settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': proxy.url, 'keel.model': 'claude-sonnet-4-5' },
      env: { ANTHROPIC_API_KEY: 'test-key' },
    });
  });

  afterAll(async () => {
    await vs?.close();
    await proxy?.close();
    await model?.close();
  });

  it('a streaming task keeps running while the view is hidden and while another task is open', async () => {
    if (!vs || !proxy) throw new Error('setup failed');
    let chat = await openChat(vs);
    await sendPrompt(chat, 'Task A: write the long answer.');
    await expect.poll(async () => (await lastAnswer(chat))?.text.length ?? 0, { timeout: 60_000 }).toBeGreaterThan(40);
    const streamA = proxy.streams[0]!;
    expect(streamA.taskId).toBeTruthy();

    // Hide the view: another view container takes the side bar, then the side bar goes away.
    await vs.runCommand('View: Show Explorer');
    await vs.page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ timeout: 20_000 });
    await vs.runCommand('View: Toggle Primary Side Bar Visibility');
    await vs.screenshot('persistence-1-view-hidden');
    expect(streamA.completed, 'the stream of task A was still open while its view was hidden').toBeUndefined();
    await vs.runCommand('View: Toggle Primary Side Bar Visibility');

    // Back in the chat (a reloaded page: snapshot, then deltas); then another task while A streams.
    chat = await openChat(vs);
    const back = await lastAnswer(chat);
    expect(back?.streaming, `task A after the view came back: ${JSON.stringify(back)}`).toBe('true');
    expect(collapse(LONG_A).startsWith(back!.text)).toBe(true);
    await vs.runCommand('Keel: New Task');
    await chat.locator('[data-testid="empty-state"]').waitFor();
    await sendPrompt(chat, 'Task B: a short one.');
    await expect.poll(async () => (await lastAnswer(chat))?.text ?? '', { timeout: 60_000 }).toContain(SHORT_B);
    expect(streamA.completed, 'task A was still streaming while task B ran').toBeUndefined();
    await vs.screenshot('persistence-2-other-task');

    // Back to A through History: the answer is whole and its one stream was delivered to the end.
    await vs.runCommand('Keel: Show History');
    const rowA = chat.locator(`[data-testid="history-item"][data-task-id="${streamA.taskId}"]`);
    await rowA.waitFor({ timeout: 20_000 });
    expect(await chat.locator('[data-testid="history-item"]').count()).toBe(2);
    await vs.screenshot('persistence-3-history');
    await rowA.locator('[data-testid="history-open"]').click();
    await expect
      .poll(async () => {
        const a = await lastAnswer(chat);
        return a?.streaming === 'false' ? a.text : '';
      }, { timeout: 120_000 })
      .toBe(collapse(LONG_A));
    expect(streamA.completed).toBe(true);
    expect(proxy.streams.filter((s) => s.taskId === streamA.taskId)).toHaveLength(1);
    await expect.poll(() => chat.locator('[data-testid="task-state"]').getAttribute('data-state'), { timeout: 20_000 }).toBe('completed');
    await vs.screenshot('persistence-4-task-a-complete');
  });

  it('after "Developer: Reload Window" mid-stream the task is interrupted, and Resume continues it', async () => {
    if (!vs || !proxy) throw new Error('setup failed');
    try {
      await reloadAndResume(vs, proxy);
    } catch (e) {
      // Both extension hosts' logs (before and after the reload) say what the host did with Resume.
      await vs.screenshot('persistence-failure').catch(() => undefined);
      const streams = proxy.streams.map((s) => ({ taskId: s.taskId, completed: s.completed }));
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- model requests ---\n${JSON.stringify(streams)}\n--- Keel log ---\n${vs.readKeelLog().slice(-10_000)}`);
    }
  });
});

async function reloadAndResume(vs: VsCodeSession, proxy: Awaited<ReturnType<typeof startStreamProxy>>): Promise<void> {
  let chat = await openChat(vs);
  await vs.runCommand('Keel: New Task');
  await chat.locator('[data-testid="empty-state"]').waitFor();
  const PROMPT_C = 'Task C: stream slowly, I am about to reload.';
  // The model requests this test makes come after the first test's (it also runs alone).
  const base = proxy.streams.length;
  await sendPrompt(chat, PROMPT_C);
  await expect.poll(async () => (await lastAnswer(chat))?.text.length ?? 0, { timeout: 60_000 }).toBeGreaterThan(60);
  const streamC = proxy.streams[base]!;
  expect(streamC.completed).toBeUndefined();
  const before = (await lastAnswer(chat))!.text;

  await vs.runCommand('Developer: Reload Window');
  await vs.page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
  await vs.page.locator('.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
  // The old extension host is gone: its stream was cut off, not delivered.
  await expect.poll(() => streamC.completed, { timeout: 30_000 }).toBe(false);

  // The chat comes back showing the task, interrupted, with its cut-off answer and Resume.
  chat = await openChat(vs);
  await expect.poll(() => chat.locator('[data-testid="task-state"]').getAttribute('data-state'), { timeout: 60_000 }).toBe('interrupted');
  await chat.locator('[data-testid="stored-banner"]').waitFor();
  const cut = await lastAnswer(chat);
  expect(cut?.streaming).toBe('false');
  expect(cut!.text.length).toBeGreaterThanOrEqual(before.length);
  expect(collapse(LONG_C).startsWith(cut!.text.replace(/ ?Interrupted ?Resume$/, ''))).toBe(true);
  await chat.locator('[data-testid="interrupted"]').first().waitFor();
  await vs.screenshot('persistence-5-interrupted-after-reload');

  // History lists it interrupted too.
  await vs.runCommand('Keel: Show History');
  const rowC = chat.locator(`[data-testid="history-item"][data-task-id="${streamC.taskId}"]`);
  await rowC.waitFor({ timeout: 20_000 });
  expect(await rowC.getAttribute('data-status')).toBe('interrupted');
  await rowC.locator('[data-testid="history-open"]').click();

  await chat.locator('[data-testid="banner-resume"]').click();
  await expect.poll(() => proxy.streams.length, { timeout: 60_000 }).toBe(base + 2);
  const resumed = proxy.streams[base + 1]!;
  expect(resumed.taskId).toBe(streamC.taskId);
  const messages = (resumed.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  expect(JSON.stringify(messages[0])).toContain(PROMPT_C);
  expect(JSON.stringify(messages[1])).toContain(LONG_C.slice(0, 40));
  expect(JSON.stringify(messages[2])).toMatch(/interrupted/i);

  await expect
    .poll(async () => {
      const a = await lastAnswer(chat);
      return a?.streaming === 'false' ? a.text : '';
    }, { timeout: 60_000 })
    .toContain(RESUMED);
  await expect.poll(() => resumed.completed, { timeout: 20_000 }).toBe(true);
  await expect.poll(() => chat.locator('[data-testid="task-state"]').getAttribute('data-state'), { timeout: 20_000 }).toBe('completed');
  expect(await chat.locator('[data-testid="stored-banner"]').count()).toBe(0);
  await vs.screenshot('persistence-6-resumed');
}
