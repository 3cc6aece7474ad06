/**
 * The worker pool in a real VS Code (code-server) with the packaged .vsix, `keel.workers.max` 2,
 * against the fake model server:
 *
 * 1. Task A is started in the sidebar chat, then task B in the chat's editor tab; both model
 *    streams are open at the same time (the server holds each after its first words), each task on
 *    its own worker process — found the way a person would, with `keel workers --json` (the
 *    window's status socket), and seen in "Keel: Show Workers" from the palette.
 *    The chat header shows the worker's pid; picking A's worker in Show Workers opens A's chat.
 * 2. `kill -9` of task A's worker pid while both stream: A ends `interrupted` with a message that
 *    says its worker stopped, and Resume (its lost query is not sent again by itself); Resume
 *    continues A on a fresh worker, to completion, while B is still held; B, released, completes
 *    on its own worker.
 *
 * The chat's two surfaces show one task at a time (the window's chat follows the task last
 * shown; docs/workers.md), so both show B once it starts, then A once its worker is picked.
 * Screenshots go to test-results/workers-*.png.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer, type RecordedRequest } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, REPO_ROOT, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const PROMPT_A = 'Task A: explain the sample workspace at length.';
const PROMPT_B = 'Task B: summarise the sample workspace.';
const ANSWER_A = 'Task A begins a long explanation that its worker will never finish, because the test kills it.';
const ANSWER_B = 'Task B answers in full: the sample workspace holds a small library and its tests.';
const RESUMED_A = 'Task A resumed on a fresh worker and finished the explanation.';
const collapse = (s: string): string => s.replace(/\s+/g, ' ').trim();

interface WorkerJson {
  id: string;
  state: string;
  pid: number | null;
  taskId: string | null;
}
interface PoolJson {
  owner: string;
  ownerPid: number;
  max: number;
  workers: WorkerJson[];
}

/** `keel workers --json` as a person would run it, against the window's Keel home. */
async function keelWorkers(keelHome: string): Promise<PoolJson[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'dist', 'cli.js'), 'workers', '--json', '--storage', keelHome], { timeout: 30_000 });
  return (JSON.parse(stdout) as { pools: PoolJson[] }).pools;
}

async function sendPrompt(chat: Frame, text: string): Promise<void> {
  const input = chat.locator('[data-testid="prompt-input"]');
  await input.waitFor({ state: 'visible' });
  await input.fill(text);
  await input.press('Enter');
}

/** The last assistant message's text and streaming flag (undefined while the frame is reloading). */
async function lastAnswer(chat: Frame): Promise<{ text: string; streaming: string | null } | undefined> {
  return chat
    .locator('[data-testid="message-assistant"]')
    .last()
    .evaluate((el) => ({ text: el.querySelector('.keel-msg-body')?.textContent ?? '', streaming: el.getAttribute('data-streaming') }), undefined, { timeout: 1_000 })
    .then((s) => ({ ...s, text: collapse(s.text) }))
    .catch(() => undefined);
}

const stateOf = (chat: Frame) => chat.locator('[data-testid="task-state"]').getAttribute('data-state', { timeout: 2_000 }).catch(() => null);

/** The request of the fake model server whose body contains `text` (the n-th one, default the first). */
function requestWith(model: FakeModelServer, text: string, n = 0): RecordedRequest | undefined {
  return model.requests.filter((r) => JSON.stringify(r.body).includes(text))[n];
}

describe('workers: two tasks on two worker processes in VS Code; kill -9 of one', () => {
  let model: FakeModelServer | undefined;
  let vs: VsCodeSession | undefined;
  let keelHome = '';
  let releaseB: () => void = () => undefined;

  beforeAll(async () => {
    const vsixPath = ensureKeelVsix();
    // A short path: the window's status socket lives in <keel home>/run (a Unix socket path is short).
    keelHome = mkdtempSync(join(tmpdir(), 'keel-e2e-home-'));
    const untilB = new Promise<void>((resolve) => (releaseB = resolve));
    model = await startFakeModelServer({
      turns: [
        // A streams its first words, then is held open for good: its worker is killed mid-stream.
        { when: 'Task A:', blocks: [{ type: 'text', text: ANSWER_A }], chunkSize: 4, delayMs: 20, fault: { kind: 'stall', afterEvents: 10 } },
        // B streams its first words, then is held until A's worker was killed; then it finishes.
        { when: 'Task B:', blocks: [{ type: 'text', text: ANSWER_B }], chunkSize: 4, delayMs: 20, fault: { kind: 'stall', afterEvents: 10, until: untilB } },
        // A, resumed by the person.
        { when: 'Task A:', blocks: [{ type: 'text', text: RESUMED_A }], chunkSize: 8, delayMs: 5 },
      ],
    });
    vs = await startVsCode({
      vsixPath,
      settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': model.url, 'keel.model': 'claude-sonnet-4-5', 'keel.workers.max': 2 },
      env: { ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: keelHome },
    });
  });

  afterAll(async () => {
    releaseB();
    await vs?.close();
    await model?.close();
    if (keelHome) rmSync(keelHome, { recursive: true, force: true });
  });

  it('A (sidebar) and B (editor tab) stream at once on two workers; killing A’s worker interrupts A only', async () => {
    if (!vs || !model) throw new Error('setup failed');
    const m = model;
    try {
      // 1. Task A in the sidebar chat.
      await vs.runCommand('Keel: Focus on Chat View');
      const sidebar = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      await sendPrompt(sidebar, PROMPT_A);
      await expect.poll(async () => (await lastAnswer(sidebar))?.text.length ?? 0, { timeout: 90_000 }).toBeGreaterThan(8);
      const reqA = requestWith(m, PROMPT_A)!;
      const taskA = reqA.taskId!;
      expect(taskA).toBeTruthy();

      // 2. Task B in the editor tab, while A's stream is still open.
      await vs.runCommand('Keel: Open Chat in Editor Tab');
      const tab = await vs.webviewFrame(READY, { exclude: [sidebar], timeoutMs: 60_000 });
      await vs.runCommand('Keel: New Task');
      await tab.locator('[data-testid="empty-state"]').waitFor({ timeout: 30_000 });
      await sendPrompt(tab, PROMPT_B);
      await expect.poll(async () => (await lastAnswer(tab))?.text.length ?? 0, { timeout: 90_000 }).toBeGreaterThan(8);
      const reqB = requestWith(m, PROMPT_B)!;
      const taskB = reqB.taskId!;
      expect(taskB).toBeTruthy();
      expect(taskB).not.toBe(taskA);
      // Both model streams are open together: each task's answer is streaming at the same time.
      expect(reqA.finishedSeq, 'A is still streaming while B streams').toBeNull();
      expect(reqB.finishedSeq).toBeNull();
      expect(m.maxConcurrent()).toBe(2);
      expect((await lastAnswer(tab))?.streaming).toBe('true');
      expect(ANSWER_B.startsWith((await lastAnswer(tab))!.text)).toBe(true);
      await vs.screenshot('workers-1-two-tasks-streaming');

      // 3. Which worker runs which task: `keel workers --json`, as a person would ask.
      const pools = await keelWorkers(keelHome);
      expect(pools, JSON.stringify(pools)).toHaveLength(1);
      const pool = pools[0]!;
      expect(pool.owner).toMatch(/^VS Code window \d+$/);
      expect(pool.max).toBe(2);
      const onA = pool.workers.find((w) => w.taskId === taskA);
      const onB = pool.workers.find((w) => w.taskId === taskB);
      expect(onA?.state, JSON.stringify(pool.workers)).toBe('busy');
      expect(onB?.state, JSON.stringify(pool.workers)).toBe('busy');
      const pidA = onA!.pid!;
      const pidB = onB!.pid!;
      expect(pidA).not.toBe(pidB);
      expect(pidA).not.toBe(pool.ownerPid);
      // Real worker processes: the extension host's own binary running the bundled CLI's `worker`.
      for (const pid of [pidA, pidB]) {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        expect(argv.join(' ')).toMatch(/dist\/cli\.js worker --socket \S+ --worker-id w\d+/);
        expect(realpathSync(`/proc/${pid}/exe`)).toBe(realpathSync(`/proc/${pool.ownerPid}/exe`));
      }

      // The chat header says which worker process runs the shown task (B).
      const workerBadge = (chat: Frame) => chat.locator('[data-testid="task-worker"]');
      await expect.poll(() => workerBadge(tab).getAttribute('data-pid', { timeout: 2_000 }).catch(() => null), { timeout: 30_000 }).toBe(String(pidB));
      expect(await workerBadge(tab).getAttribute('data-state')).toBe('busy');
      expect(collapse((await workerBadge(tab).textContent()) ?? '')).toBe(`worker pid ${pidB}`);

      // 4. "Keel: Show Workers" lists both, busy, with their pids; picking A's opens A's chat.
      await vs.runCommand('Keel: Show Workers');
      const picker = vs.page.locator('.quick-input-widget');
      await picker.locator('.quick-input-title', { hasText: 'Keel workers' }).waitFor({ timeout: 30_000 });
      const rows = picker.locator('.quick-input-list .monaco-list-row');
      await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(2);
      const shown = collapse((await rows.allTextContents()).join(' | '));
      expect(shown).toContain(`pid ${pidA} · task ${taskA.slice(0, 8)}`);
      expect(shown).toContain(`pid ${pidB} · task ${taskB.slice(0, 8)}`);
      expect(shown.match(/· busy/g)).toHaveLength(2);
      expect(collapse((await picker.locator('.quick-input-title').textContent()) ?? '')).toMatch(/VS Code window \d+ \(pid \d+\): \w+, 2 of 2 workers/);
      await vs.screenshot('workers-2-show-workers');
      await rows.filter({ hasText: `pid ${pidA}` }).click();
      await picker.waitFor({ state: 'hidden', timeout: 10_000 });
      await expect.poll(() => workerBadge(sidebar).getAttribute('data-pid', { timeout: 2_000 }).catch(() => null), { timeout: 30_000 }).toBe(String(pidA));
      expect(await sidebar.locator('.keel-title').textContent()).toContain('Task A');
      expect((await lastAnswer(sidebar))?.streaming).toBe('true');
      expect(ANSWER_A.startsWith((await lastAnswer(sidebar))!.text)).toBe(true);

      // 5. kill -9 of A's worker while both still stream: A, shown, ends interrupted with the
      //    reason and Resume (no Retry); B's stream is still open.
      expect(reqB.finishedSeq).toBeNull();
      process.kill(pidA, 'SIGKILL');
      await expect.poll(() => stateOf(sidebar), { timeout: 30_000 }).toBe('interrupted');
      const lost = sidebar.locator('[data-testid="error"][data-code="worker_lost"]');
      await lost.waitFor({ timeout: 30_000 });
      expect(collapse((await lost.textContent()) ?? '')).toMatch(/worker running this task stopped.*SIGKILL.*resume it to continue/i);
      expect(await lost.locator('[data-testid="retry"]').count()).toBe(0);
      await sidebar.locator('[data-testid="interrupted"]').first().waitFor();
      expect(ANSWER_A.startsWith((await lastAnswer(sidebar))!.text)).toBe(true);
      await expect.poll(() => workerBadge(sidebar).count(), { timeout: 30_000 }).toBe(0);
      expect(reqB.finishedSeq, 'B still streams after A’s worker died').toBeNull();
      await expect.poll(async () => (await keelWorkers(keelHome))[0]?.workers.map((w) => w.pid), { timeout: 30_000 }).toEqual([pidB]);
      // The lost query was never sent again by itself.
      expect(m.requests.filter((r) => r.taskId === taskA)).toHaveLength(1);
      await vs.screenshot('workers-3-a-interrupted');

      // 6. Resume, right there: A continues on a fresh worker (its own died) and completes, while B
      //    is still held.
      await sidebar.locator('[data-testid="interrupted"] [data-testid="resume"]').first().click();
      await expect.poll(() => m.requests.filter((r) => r.taskId === taskA).length, { timeout: 60_000 }).toBe(2);
      await expect
        .poll(async () => {
          const a = await lastAnswer(sidebar);
          return a?.streaming === 'false' ? a.text : '';
        }, { timeout: 90_000 })
        .toBe(collapse(RESUMED_A));
      await expect.poll(() => stateOf(sidebar), { timeout: 30_000 }).toBe('completed');
      const resumedOn = (await keelWorkers(keelHome))[0]!.workers.find((w) => w.taskId === taskA);
      expect(resumedOn?.pid).toBeTruthy();
      expect([pidA, pidB]).not.toContain(resumedOn!.pid);
      await expect.poll(() => workerBadge(sidebar).getAttribute('data-pid', { timeout: 2_000 }).catch(() => null), { timeout: 30_000 }).toBe(String(resumedOn!.pid));
      expect(m.maxConcurrentByTask().get(taskA)).toBe(1);
      expect(reqB.finishedSeq).toBeNull();
      await vs.screenshot('workers-4-a-resumed');

      // 7. B is released and completes on its own worker; History shows both tasks completed.
      releaseB();
      await expect.poll(() => reqB.finishedSeq !== null, { timeout: 60_000 }).toBe(true);
      await vs.runCommand('Keel: Show History');
      const rowB = sidebar.locator(`[data-testid="history-item"][data-task-id="${taskB}"]`);
      await rowB.waitFor({ timeout: 30_000 });
      await expect.poll(() => rowB.getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
      expect(await sidebar.locator(`[data-testid="history-item"][data-task-id="${taskA}"]`).getAttribute('data-status')).toBe('completed');
      // Opened in the sidebar (the tab stays on the History page that Show History opened in every chat).
      await rowB.locator('[data-testid="history-open"]').click();
      await expect
        .poll(async () => {
          const b = await lastAnswer(sidebar);
          return b?.streaming === 'false' ? b.text : '';
        }, { timeout: 60_000 })
        .toBe(collapse(ANSWER_B));
      expect(await stateOf(sidebar)).toBe('completed');
      expect(await sidebar.locator('[data-testid="error"]').count()).toBe(0);
      await expect.poll(() => workerBadge(sidebar).getAttribute('data-pid', { timeout: 2_000 }).catch(() => null), { timeout: 30_000 }).toBe(String(pidB));
      expect(await workerBadge(sidebar).getAttribute('data-state')).toBe('ready');
      expect(m.requests.filter((r) => r.taskId === taskB)).toHaveLength(1);
      await vs.screenshot('workers-5-b-completed');
    } catch (e) {
      await vs.screenshot('workers-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs.readKeelLog().slice(-6000)}\n--- code-server ---\n${vs.serverOutput().slice(-3000)}`);
    }
  });
});
