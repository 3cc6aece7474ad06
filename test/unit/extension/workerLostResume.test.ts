import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskRuntime } from '../../../src/core/runtime/taskRuntime';
import { ChatController } from '../../../src/extension/chatController';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { processAlive } from '../../../src/core/locks/processAlive';
import { fakeWorker } from '../workers/fakeWorker';
import { fakeHost, recordingPort } from './fakes';
import { eventually } from '../helpers/changes';

const provider = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5', apiKey: 'k', baseUrl: 'http://127.0.0.1:9' };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const of = <T extends ToWebviewMessage['type']>(ms: ToWebviewMessage[], type: T) => ms.filter((m): m is Extract<ToWebviewMessage, { type: T }> => m.type === type);

/**
 * The chat shows a task whose worker process dies (the fake worker SIGKILLs itself on "crash"):
 * the chat shows it interrupted with the reason, and Resume in the chat continues it from its log
 * on a fresh worker (before, Resume asked the dead handle to retry, and nothing happened).
 */
/** A chat window whose runtime runs turns on the fake worker (a real process speaking the real protocol). */
async function windowOnWorkers() {
  const storage = mkdtempSync(join(tmpdir(), 'keel-wlr-'));
  const workspace = mkdtempSync(join(tmpdir(), 'keel-wlr-ws-'));
  const runtime = new TaskRuntime({ workspace, storageDir: storage, ownerLabel: 'VS Code window test', workers: { command: fakeWorker(), max: 1, strategy: 'lru' } });
  const h = fakeHost({ provider });
  const controller = new ChatController({ ...h.host, loadRuntime: async () => runtime });
  // Run last to first: the chat let go, the workers stopped, then every close the tasks started
  // (their logs' last writes, meta.json) waited for before their folder is removed — removing it
  // while one still writes fails with ENOTEMPTY (seen once in CI).
  cleanups.push(
    () => rmSync(storage, { recursive: true, force: true }),
    () => rmSync(workspace, { recursive: true, force: true }),
    () => runtime.closed(),
    () => runtime.shutdownWorkers(),
    () => controller.dispose(),
  );
  const view = (id: string) => {
    const port = recordingPort();
    const conn = new ViewConnection(id, 'sidebar', port.post, h.log);
    controller.attach(conn);
    const fromPage = async (data: unknown) => {
      const m = conn.receive(data);
      if (m) await controller.handle(conn, m);
    };
    return { port, fromPage };
  };
  const first = view('v1');
  await first.fromPage({ type: 'ready' });
  return { storage, runtime, controller, view, ...first };
}

/** No deadline: the test's timeout bounds it. */
const until = (cond: () => boolean, what: string) => eventually(cond, () => what);

describe('chat header: the worker the shown task runs on', () => {
  it('busy on a live worker pid while it runs, idle after; a view that attaches later gets it in its snapshot', async () => {
    const { controller, port, fromPage, view } = await windowOnWorkers();
    await fromPage({ type: 'prompt', text: 'hang' });
    const task = controller.shownTask()!;
    await until(() => of(port.posted, 'taskWorker').some((m) => m.worker?.state === 'busy'), 'the worker busy with the task');
    const busy = of(port.posted, 'taskWorker').find((m) => m.worker?.state === 'busy')!;
    expect(busy.taskId).toBe(task.id);
    expect(processAlive(busy.worker!.pid!)).toBe(true);

    const late = view('v2');
    await late.fromPage({ type: 'ready' });
    expect(of(late.port.posted, 'snapshot').at(-1)!.worker).toEqual(busy.worker);

    await fromPage({ type: 'cancel' });
    await task.settled();
    await until(() => of(port.posted, 'taskWorker').at(-1)?.worker?.state === 'ready', 'the worker idle again');
    expect(of(port.posted, 'taskWorker').at(-1)!.worker!.pid).toBe(busy.worker!.pid);
    // Never the same state twice in a row.
    const states = of(port.posted, 'taskWorker').map((m) => `${m.worker?.id}:${m.worker?.state}`);
    expect(states.filter((x, i) => x === states[i - 1])).toEqual([]);

    // Another task shown (none): its snapshot has no worker, and the old task's changes are not sent.
    await fromPage({ type: 'newTask' });
    expect(of(port.posted, 'snapshot').at(-1)!.worker).toBeUndefined();
  });
});

describe('chat: Resume of a task whose worker died', () => {
  it('the shown task ends interrupted (worker_lost); Resume continues it, recorded, on a new worker', async () => {
    const { storage, runtime, controller, port, fromPage } = await windowOnWorkers();
    await fromPage({ type: 'prompt', text: 'crash' });
    const lost = controller.shownTask()!;
    expect((await lost.settled()).status).toBe('interrupted');
    expect(lost.transcript().items.find((i) => i.kind === 'error')).toMatchObject({ code: 'worker_lost' });
    // The header's worker goes away with the process.
    await until(() => of(port.posted, 'taskWorker').at(-1)?.worker === null, 'the worker gone from the header');

    await fromPage({ type: 'resume' });
    const resumed = controller.shownTask()!;
    expect(resumed.id).toBe(lost.id);
    expect(resumed).not.toBe(lost);
    expect((await resumed.settled()).status).toBe('completed');
    await resumed.recorded?.();
    expect(of(port.posted, 'notice').map((n) => n.message)).toEqual([]);
    expect(of(port.posted, 'snapshot').at(-1)!.transcript?.taskId).toBe(lost.id);
    expect(readFileSync(join(storage, 'tasks', lost.id, 'meta.json'), 'utf8')).toContain('"status": "completed"');
    expect(runtime.workerPool()!.status().stats).toMatchObject({ spawned: 2, crashed: 1 });
  });

  it('a task whose worker died, no longer shown, opens again from its log (interrupted, with Resume)', async () => {
    const { controller, port, fromPage } = await windowOnWorkers();
    await fromPage({ type: 'prompt', text: 'crash' });
    const lost = controller.shownTask()!;
    expect((await lost.settled()).status).toBe('interrupted');
    await fromPage({ type: 'newTask' });
    expect(controller.showTask(lost.id)).toBe(false);
    expect(await controller.openTask(lost.id)).toBe(true);
    const snap = of(port.posted, 'snapshot').at(-1)!;
    expect(snap.transcript?.taskId).toBe(lost.id);
    expect(snap.stored).toEqual({ status: 'interrupted', resumable: true });
    expect(await controller.openTask('no-such-task')).toBe(false);
  });

  it('a message typed into the chat of a task whose worker died resumes it with that message', async () => {
    const { controller, port, fromPage } = await windowOnWorkers();
    await fromPage({ type: 'prompt', text: 'crash' });
    const lost = controller.shownTask()!;
    expect((await lost.settled()).status).toBe('interrupted');
    await fromPage({ type: 'prompt', text: 'please go on' });
    const resumed = controller.shownTask()!;
    expect(resumed).not.toBe(lost);
    expect(resumed.id).toBe(lost.id);
    expect((await resumed.settled()).status).toBe('completed');
    expect(JSON.stringify(resumed.transcript().items.at(-1))).toContain('please go on');
    expect(of(port.posted, 'error')).toEqual([]);
  });
});
