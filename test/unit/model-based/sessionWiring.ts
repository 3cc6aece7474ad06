import { SimulatedClock, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import { sessionMachine, type SessionContext } from '../../../src/core/machines/session/session.machine';
import { ChatController } from '../../../src/extension/chatController';
import { ViewConnection } from '../../../src/extension/viewConnection';
import type { ToWebviewMessage } from '../../../src/shared/protocol/toWebview';
import { fakeHost, recordingPort, type FakeTask } from '../extension/fakes';
import type { CoverageRecorder } from './coverage';
import { dedupe, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { settled as quiesce } from '../helpers/changes';

/**
 * The session machine's paths, replayed against the extension's real wiring without VS Code: a
 * ChatController (with the contract-checked FakeRuntime behind it) and a ViewConnection whose
 * page is a recording port. Each model event is produced the way the product produces it — the
 * page says ready, the view is hidden, a post fails, the chat shows another task or none, the
 * shown task finishes or gets a follow-up, the view is closed — and the idle timeout runs on
 * xstate's SimulatedClock. Besides the states, every replay checks what a person would notice:
 * no task is ever cancelled by navigation, each page is numbered from a snapshot at 1, a view
 * without a loaded page is posted nothing, and a snapshot shows the task the session shows.
 */
const IDLE_TIMEOUT_MS = 30 * 60_000;
const LOADED = new Set(['active', 'completed', 'inactive']);

export function sessionPaths(): ModelPath[] {
  return transitionPaths(sessionMachine, {
    input: { viewId: 'v1' },
    events: (s) => {
      const c = s.context as SessionContext;
      const evs: ModelEvent[] = [
        { type: 'READY' },
        { type: 'HIDE' },
        { type: 'DETACH' },
        { type: 'DISPOSE' },
        { type: 'ATTACH', taskId: 'a running task', settled: false, tag: 'running' },
        { type: 'ATTACH', taskId: 'a settled task', settled: true, tag: 'settled' },
      ];
      // Only a running task can settle, and only a settled one run again.
      if (c.taskId !== null && !c.taskSettled) evs.push({ type: 'TASK_SETTLED' });
      if (c.taskId !== null && c.taskSettled) evs.push({ type: 'TASK_RESUMED' });
      // A post can only fail on the page that is loaded.
      if (LOADED.has(String(s.value))) evs.push({ type: 'UNDELIVERED', page: c.pages });
      if (s.matches('paused')) evs.push({ type: 'xstate.after.idleTimeout.session.paused' });
      return evs;
    },
    // What decides the guards: whether the view shows a task, and whether it has settled.
    context: (s) => {
      const c = s.context as SessionContext;
      return c.taskId === null ? 'none' : c.taskSettled ? 'settled' : 'running';
    },
  });
}

export interface SessionReplay {
  observed: string[];
  expected: string[];
  /** What a person would notice going wrong (empty when nothing did). */
  problems: string[];
}

const kindOf = (m: ToWebviewMessage) => (m.type === 'event' ? `event:${m.event.type}` : m.type);

export async function replaySession(path: ModelPath, recorder: CoverageRecorder): Promise<SessionReplay> {
  const expected = dedupe(path.values);
  const problems: string[] = [];
  const h = fakeHost();
  const controller = new ChatController(h.host);
  // The runtime exists (the chat has run a task before), and the chat shows no task yet.
  await controller.prompt('an earlier task');
  controller.newTask();
  const clock = new SimulatedClock();
  const port = recordingPort();
  const observed: string[] = [];
  const inspect = (e: InspectionEvent) => {
    recorder.inspect(e);
    if (e.type !== '@xstate.snapshot') return;
    const snap = e.snapshot as AnyMachineSnapshot;
    if (snap.machine?.id !== 'session') return;
    const v = JSON.stringify(snap.value);
    if (observed.at(-1) !== v) observed.push(v);
  };
  const view = new ViewConnection('v1', 'sidebar', port.post, h.log, { clock, inspect });
  const detach = controller.attach(view);
  let shown: FakeTask | undefined;

  const newTask = async (settled: boolean): Promise<FakeTask> => {
    const task = h.runtime.startTask({ prompt: `task ${h.runtime.tasks.length + 1}`, provider: { provider: 'demo', model: 'demo' } });
    await quiesce();
    if (settled) task.answer('an answer');
    return task;
  };

  try {
    for (const e of path.events) {
      const before = view.state;
      const postedBefore = port.posted.length;
      switch (e.type) {
        case 'READY': {
          const m = view.receive({ type: 'ready' });
          if (m) await controller.handle(view, m);
          break;
        }
        case 'HIDE':
          view.setVisible(false);
          break;
        case 'UNDELIVERED':
          // The page went away without a hide: the next post to it fails.
          port.accept = false;
          controller.refresh();
          await quiesce();
          port.accept = true;
          break;
        case 'ATTACH':
          shown = await newTask(e.settled === true);
          controller.showTask(shown.id);
          break;
        case 'DETACH':
          controller.newTask();
          shown = undefined;
          break;
        case 'TASK_SETTLED':
          shown!.answer('done');
          break;
        case 'TASK_RESUMED':
          await controller.prompt('go on');
          break;
        case 'DISPOSE':
          detach();
          view.dispose();
          break;
        default:
          if (e.type.startsWith('xstate.after.')) clock.increment(IDLE_TIMEOUT_MS);
          else throw new Error(`no way to produce ${e.type}`);
      }
      await quiesce();
      const after = view.state;
      if (!LOADED.has(before) && !LOADED.has(after) && e.type !== 'UNDELIVERED' && port.posted.length !== postedBefore) {
        problems.push(`${e.type} in ${before}: a view without a loaded page was posted ${port.posted.slice(postedBefore).map(kindOf).join(', ')}`);
      }
      if (['READY', 'ATTACH', 'DETACH'].includes(e.type) && LOADED.has(after)) {
        const snapshot = port.posted.slice(postedBefore).findLast((m) => m.type === 'snapshot');
        const showing = snapshot?.type === 'snapshot' ? (snapshot.transcript?.taskId ?? null) : 'no snapshot';
        if (showing !== (shown?.id ?? null)) problems.push(`${e.type}: the page shows ${showing}, the chat ${shown?.id ?? null}`);
      }
    }
    // Navigation never kills a task.
    for (const t of h.runtime.tasks) if (t.cancels > 0) problems.push(`task ${t.id} was cancelled`);
    // Each page is numbered from a snapshot at 1, then 2, 3, … (a failed post ends its page).
    let expectedSeq = 1;
    for (const m of port.posted) {
      if (m.seq === 1 && m.type !== 'snapshot') problems.push(`a page began with ${kindOf(m)}`);
      if (m.seq !== 1 && m.seq !== expectedSeq) problems.push(`seq ${m.seq} after ${expectedSeq - 1}`);
      expectedSeq = m.seq + 1;
    }
    return { observed: observed.slice(), expected, problems };
  } finally {
    view.dispose();
    controller.dispose();
  }
}
