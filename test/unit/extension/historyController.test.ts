import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import type { TaskHandle } from '../../../src/core/runtime/types';
import { NOTHING_APPROVED } from '../../../src/core/commands/projectGate';
import { ChatController } from '../../../src/extension/chatController';
import type { ChatCommands } from '../../../src/extension/slashChat';
import type { HistoryServices } from '../../../src/extension/history/taskHistory';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { ExportFormat } from '../../../src/shared/protocol/chatMessages';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { ListProvider, textTurn, toolTurn, type Step } from '../helpers/scriptedEvents';
import { fakeHost, recordingPort } from './fakes';
import { eventually } from '../helpers/changes';

const anthropic = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5' };
const LONG = 'This answer is long enough to be cut off in the middle by a window reload, and then continued.';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** History services in memory: confirmations answered by `confirm`, saved files recorded. */
function memoryServices(workspace: string, confirm = true) {
  let last: string | undefined;
  const saved: Array<{ name: string; content: string; format: ExportFormat }> = [];
  const confirms: string[] = [];
  const services: HistoryServices = {
    workspace: () => workspace,
    saveFile: async (name, content, format) => (saved.push({ name, content, format }), join(workspace, name)),
    confirm: async (message) => (confirms.push(message), confirm),
    lastTask: { get: () => last, set: (id) => void (last = id) },
  };
  return { services, saved, confirms, setConfirm: (v: boolean) => (confirm = v), last: () => last };
}

/** One "window": a real TaskRuntime on a real store folder, with a scripted provider, behind a ChatController. */
function windowOn(storage: string, workspace: string, steps: Step[], services: HistoryServices, delayMs = 0, commands?: ChatCommands) {
  const provider = new ListProvider(steps, delayMs);
  const runtime = new TaskRuntime({ workspace, storageDir: storage, providerFactory: () => provider, ownerLabel: 'VS Code window test', limits: { retryBaseMs: 1 } });
  const h = fakeHost({ provider: anthropic });
  const controller = new ChatController({ ...h.host, loadRuntime: async () => runtime, history: services, ...(commands ? { commands } : {}) });
  cleanups.push(() => controller.dispose());
  const port = recordingPort();
  const conn = new ViewConnection('v', 'sidebar', port.post, h.log);
  controller.attach(conn);
  const fromPage = async (data: unknown) => {
    const m = conn.receive(data);
    if (m) await controller.handle(conn, m);
  };
  // The page says ready (a view that is not ready gets nothing but buffered messages).
  void fromPage({ type: 'ready' });
  return { provider, runtime, controller, port, fromPage, log: h.log };
}

const of = <T extends ToWebviewMessage['type']>(ms: ToWebviewMessage[], type: T) => ms.filter((m): m is Extract<ToWebviewMessage, { type: T }> => m.type === type);
/** No deadline: the test's timeout bounds it. */
const until = (cond: () => boolean, what: string) => eventually(cond, () => what);

/**
 * A task started in a first window, which goes away in the middle of the answer: closed (a
 * reload: the window records the task interrupted) or, with `crash`, killed (its record still
 * says running, as another window that runs it would leave it).
 */
async function interruptedTask(storage: string, workspace: string, crash = false): Promise<string> {
  const first = windowOn(storage, workspace, [textTurn(LONG)], memoryServices(workspace).services, 5);
  await first.fromPage({ type: 'prompt', text: 'explain the reload' });
  const task = first.controller.shownTask()!;
  await until(() => (task.transcript().items.at(-1) as { text?: string } | undefined)?.text?.length !== undefined && task.transcript().items.some((i) => i.kind === 'assistant' && i.text.length > 8), 'the answer to start');
  if (crash) first.runtime.dispose();
  else first.controller.dispose(); // the host goes away: the task is recorded interrupted, its lock released
  // Those last writes and the lock's release run off the event loop: a closing window waits for them.
  await first.runtime.closed();
  return task.id;
}

function dirs() {
  const storage = mkdtempSync(join(tmpdir(), 'keel-hist-'));
  const workspace = mkdtempSync(join(tmpdir(), 'keel-hist-ws-'));
  return { storage, workspace };
}

describe('history in the chat, on a real task store', () => {
  it('after a reload the task is listed interrupted; opening shows it read-only; Resume continues it with the earlier messages', async () => {
    const { storage, workspace } = dirs();
    const id = await interruptedTask(storage, workspace);
    // The closing window recorded it so (not only inferred later from a stale lock).
    expect(readFileSync(join(storage, 'tasks', id, 'meta.json'), 'utf8')).toContain('"status": "interrupted"');

    const second = windowOn(storage, workspace, [textTurn('Continued and finished.')], memoryServices(workspace).services);
    await second.fromPage({ type: 'listTasks' });
    const rows = of(second.port.posted, 'taskList').at(-1)!.tasks;
    expect(rows.map((r) => [r.taskId, r.status, r.resumable, r.live])).toEqual([[id, 'interrupted', true, false]]);
    expect(rows[0]!.title).toBe('explain the reload');

    await second.fromPage({ type: 'openTask', taskId: id });
    const snap = of(second.port.posted, 'snapshot').at(-1)!;
    expect(snap.stored).toEqual({ status: 'interrupted', resumable: true });
    expect(snap.transcript?.state).toBe('interrupted');
    const cut = snap.transcript?.items.find((i) => i.kind === 'assistant');
    expect(cut).toMatchObject({ interrupted: true, streaming: false });
    expect(second.provider.requests).toHaveLength(0); // opening never runs anything

    await second.fromPage({ type: 'resume' });
    const live = second.controller.shownTask()!;
    expect(live.id).toBe(id);
    expect(of(second.port.posted, 'snapshot').at(-1)!.stored).toBeUndefined();
    await live.settled();
    const sent = second.provider.requests[0]!.messages;
    expect(JSON.stringify(sent[0])).toContain('explain the reload');
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent[1])).toContain(LONG.slice(0, 8));
    // Deltas of the resumed task reached the view after its snapshot.
    expect(of(second.port.posted, 'event').some((m) => m.event.type === 'text')).toBe(true);
    expect(live.transcript().items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Continued and finished.' });
  });

  it('a reloaded view shows the last task again (interrupted, with Resume) without being asked', async () => {
    const { storage, workspace } = dirs();
    const id = await interruptedTask(storage, workspace);
    const mem = memoryServices(workspace);
    mem.services.lastTask.set(id);
    const second = windowOn(storage, workspace, [], mem.services);
    await until(() => of(second.port.posted, 'snapshot').length >= 2, 'the restored snapshot');
    const snap = of(second.port.posted, 'snapshot').at(-1)!;
    expect(snap.transcript?.taskId).toBe(id);
    expect(snap.stored?.status).toBe('interrupted');
    // New Task forgets it: the next reload starts empty.
    await second.fromPage({ type: 'newTask' });
    expect(mem.last()).toBeUndefined();
  });

  it('Resume clicked while the History page\'s "open" of the same task is still on its way continues it, and the chat shows it live', async () => {
    // The page switches to the chat at once on "open" and still shows the restored task's banner:
    // a quick click sends `resume` before the host has answered `openTask`.
    const { storage, workspace } = dirs();
    const id = await interruptedTask(storage, workspace);
    const mem = memoryServices(workspace);
    mem.services.lastTask.set(id);
    const second = windowOn(storage, workspace, [textTurn('Continued after the race.')], mem.services);
    await until(() => of(second.port.posted, 'snapshot').some((m) => m.stored?.status === 'interrupted'), 'the restored snapshot');
    await Promise.all([second.fromPage({ type: 'resume' }), second.fromPage({ type: 'openTask', taskId: id })]);
    await until(() => second.provider.requests.length > 0, 'the resumed request');
    const live = second.controller.shownTask()!;
    expect(live.id).toBe(id);
    expect(of(second.port.posted, 'snapshot').at(-1)!.stored).toBeUndefined();
    await live.settled();
    expect(live.transcript().items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Continued after the race.' });
    expect(of(second.port.posted, 'notice')).toEqual([]);
  });

  it('a follow-up typed on a stored completed task continues it', async () => {
    const { storage, workspace } = dirs();
    const first = windowOn(storage, workspace, [textTurn('First answer.')], memoryServices(workspace).services);
    await first.fromPage({ type: 'prompt', text: 'first question' });
    const id = first.controller.shownTask()!.id;
    await first.controller.shownTask()!.settled();
    first.controller.dispose();

    const second = windowOn(storage, workspace, [textTurn('Second answer.')], memoryServices(workspace).services);
    await second.fromPage({ type: 'openTask', taskId: id });
    expect(of(second.port.posted, 'snapshot').at(-1)!.stored).toEqual({ status: 'completed', resumable: false });
    await second.fromPage({ type: 'prompt', text: 'and another thing' });
    const live = second.controller.shownTask()!;
    await until(() => live.transcript().items.some((i) => i.kind === 'assistant' && i.text === 'Second answer.' && !i.streaming), 'the second answer');
    expect(second.provider.requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(second.provider.requests[0]!.messages[2])).toContain('and another thing');
  });

  it('a command typed as the follow-up of a stored task is sent expanded, with its allowed-tools, and shown as typed', async () => {
    const { storage, workspace } = dirs();
    const home = mkdtempSync(join(tmpdir(), 'keel-hist-home-'));
    mkdirSync(join(home, '.claude', 'commands'), { recursive: true });
    writeFileSync(join(home, '.claude', 'commands', 'review.md'), '---\nallowed-tools: Read\n---\nReview $ARGUMENTS carefully.');
    const commands: ChatCommands = { workspace: () => workspace, home, gate: NOTHING_APPROVED, approveHint: 'approve it' };
    const first = windowOn(storage, workspace, [textTurn('First answer.')], memoryServices(workspace).services, 0, commands);
    await first.fromPage({ type: 'prompt', text: 'first question' });
    const id = first.controller.shownTask()!.id;
    await first.controller.shownTask()!.settled();
    first.controller.dispose();

    const steps = [toolTurn('toolu_b', 'Bash', { command: 'touch made.txt' }), textTurn('Reviewed.')];
    const second = windowOn(storage, workspace, steps, memoryServices(workspace).services, 0, commands);
    await second.fromPage({ type: 'openTask', taskId: id });
    await second.fromPage({ type: 'prompt', text: '/review notes.md' });
    const live = second.controller.shownTask()!;
    await until(() => live.transcript().items.some((i) => i.kind === 'assistant' && i.text === 'Reviewed.' && !i.streaming), 'the review');
    expect(JSON.stringify(second.provider.requests[0]!.messages[2])).toContain('Review notes.md carefully.');
    expect(JSON.stringify(second.provider.requests[0]!.messages[2])).not.toContain('/review');
    expect(live.transcript().items.filter((i) => i.kind === 'user').at(-1)).toMatchObject({ text: 'Review notes.md carefully.', typed: '/review notes.md' });
    // The command's allowed-tools hold on this follow-up too: its Bash call is denied.
    expect(live.transcript().items.find((i) => i.kind === 'tool')).toMatchObject({ permission: { decision: 'deny' } });
    expect(existsSync(join(workspace, 'made.txt'))).toBe(false);
  });

  it('delete asks first, removes the task folder, and refuses a task still running here', async () => {
    const { storage, workspace } = dirs();
    const mem = memoryServices(workspace, false);
    const w = windowOn(storage, workspace, [textTurn('Done.'), textTurn(LONG)], mem.services, 3);
    await w.fromPage({ type: 'prompt', text: 'to be deleted' });
    const done = w.controller.shownTask()!;
    await done.settled();
    await w.fromPage({ type: 'deleteTask', taskId: done.id });
    expect(mem.confirms).toEqual(['Delete the task "to be deleted"?']);
    expect(existsSync(join(storage, 'tasks', done.id))).toBe(true);

    mem.setConfirm(true);
    await w.fromPage({ type: 'deleteTask', taskId: done.id });
    expect(existsSync(join(storage, 'tasks', done.id))).toBe(false);
    expect(of(w.port.posted, 'taskList').at(-1)!.tasks.map((t) => t.taskId)).not.toContain(done.id);
    expect(of(w.port.posted, 'snapshot').at(-1)!.transcript).toBeNull();

    await w.fromPage({ type: 'prompt', text: 'still running' });
    const running = w.controller.shownTask()!;
    await w.fromPage({ type: 'deleteTask', taskId: running.id });
    expect(of(w.port.posted, 'notice').at(-1)!.message).toMatch(/still running; cancel it/);
    expect(existsSync(join(storage, 'tasks', running.id))).toBe(true);
    await running.settled();
  });

  it('export writes Markdown and JSON of the task through the save dialog', async () => {
    const { storage, workspace } = dirs();
    const mem = memoryServices(workspace);
    const w = windowOn(storage, workspace, [textTurn('The answer.')], mem.services);
    await w.fromPage({ type: 'prompt', text: 'Export me: please' });
    const task = w.controller.shownTask()!;
    await task.settled();
    await w.fromPage({ type: 'exportTask', taskId: task.id, format: 'markdown' });
    await w.fromPage({ type: 'exportTask', taskId: task.id, format: 'json' });
    expect(mem.saved.map((s) => s.name)).toEqual([`keel-export-me-please-${task.id.slice(0, 8)}.md`, `keel-export-me-please-${task.id.slice(0, 8)}.json`]);
    expect(mem.saved[0]!.content).toMatch(/^# Export me: please\n/);
    expect(mem.saved[0]!.content).toContain('The answer.');
    const json = JSON.parse(mem.saved[1]!.content) as { format: string; meta: { id: string }; conversation: unknown[] };
    expect(json).toMatchObject({ format: 'keel.task-export', meta: { id: task.id } });
    expect(json.conversation).toHaveLength(2);
    expect(of(w.port.posted, 'notice').at(-1)!.message).toContain('Exported to');
  });

  it('a task held by another live window opens read-only; Take over is refused until that window is gone', async () => {
    const { storage, workspace } = dirs();
    const id = await interruptedTask(storage, workspace, true);
    // Another window (a live process on this host) holds the task's lock.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    cleanups.push(() => other.kill('SIGKILL'));
    const dir = join(storage, 'tasks', id);
    mkdirSync(join(dir, 'lock'));
    writeFileSync(join(dir, 'lock.owner.json'), JSON.stringify({ pid: other.pid, host: hostname(), since: Date.now(), label: 'VS Code window other' }));

    const w = windowOn(storage, workspace, [textTurn('Taken over.')], memoryServices(workspace).services);
    await w.fromPage({ type: 'listTasks' });
    const row = of(w.port.posted, 'taskList').at(-1)!.tasks[0]!;
    expect(row).toMatchObject({ taskId: id, status: 'running', resumable: false, heldElsewhere: expect.stringMatching(/^another VS Code window \(since /) });
    await w.fromPage({ type: 'openTask', taskId: id });
    expect(of(w.port.posted, 'snapshot').at(-1)!.stored).toMatchObject({ status: 'running', resumable: true, heldElsewhere: expect.stringMatching(/^another VS Code window \(since /) });

    await w.fromPage({ type: 'resume' });
    expect(of(w.port.posted, 'notice').at(-1)!.message).toMatch(/running in another window or process/);
    expect(w.provider.requests).toHaveLength(0);

    // That window goes away: its lock is stale and Take over succeeds.
    other.kill('SIGKILL');
    await new Promise<void>((r) => other.once('exit', () => r()));
    utimesSync(join(dir, 'lock'), new Date(), new Date());
    await w.fromPage({ type: 'resume' });
    const live: TaskHandle = w.controller.shownTask()!;
    await live.settled();
    await live.recorded?.();
    expect(w.provider.requests).toHaveLength(1);
    expect(readFileSync(join(dir, 'meta.json'), 'utf8')).toContain('"status": "completed"');
  });
});
