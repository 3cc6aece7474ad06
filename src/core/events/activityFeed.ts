import { isViewEvent, type TaskEvent, type ViewTaskEvent } from '../../shared/domain/events';
import { errorMessage } from '../../shared/domain/errors';
import type { LoopEvent } from '../../shared/domain/loop';
import type { HookInput } from '../hooks/types';
import { EventBus } from './eventBus';
import type { BusEvent, BusEventInit } from './types';

/*
 * What happens in one process (tasks, hooks, loops) as the process's event bus carries it, both
 * ways: a task's event becomes the bus events it implies, and a bus event becomes the activity a
 * watcher understands. One file since 27 Nov 2026 (issue 25): the feed's `publishTask` only
 * forwarded to `taskEvents.ts`, whose mapping was its one user's; the feed lived in `hooks/`
 * though it is the bus's view of everything.
 */

/** Where a task event comes from: its parent task, the task's title then, its number in the task. */
export interface TaskOrigin {
  parentId?: string;
  title?: string;
  taskSeq?: number;
}

/**
 * The bus events one task event stands for: itself (`TaskEvent`), then the seed's typed kinds
 * it implies — a machine state (`SessionStateChanged`), a tool call's progress
 * (`ToolEventReceived`), the end of a run (`SessionCompleted` / `SessionFailed`), a run phase,
 * the memories a run used and the gatekeeper's decision. Pure.
 */
export function busEventsOf(event: TaskEvent, origin: TaskOrigin = {}): BusEventInit[] {
  const taskId = event.taskId;
  const out: BusEventInit[] = [{ kind: 'TaskEvent', taskId, event, ...origin }];
  switch (event.type) {
    case 'task':
      out.push({ kind: 'SessionStateChanged', taskId, machine: 'task', state: event.state });
      if (event.state === 'interrupted') out.push({ kind: 'SessionFailed', taskId, status: 'interrupted' });
      break;
    case 'turn':
      out.push({ kind: 'SessionStateChanged', taskId, machine: 'turn', state: event.state });
      break;
    case 'phase':
      out.push({ kind: 'SessionStateChanged', taskId, machine: 'runPhases', state: event.phase, run: event.run });
      break;
    case 'tool_call':
      out.push({ kind: 'ToolEventReceived', taskId, toolCallId: event.id, tool: event.name, stage: 'call' });
      break;
    case 'permission':
      out.push({ kind: 'ToolEventReceived', taskId, toolCallId: event.toolCallId, tool: event.tool, stage: 'permission', decision: event.decision });
      break;
    case 'tool_result':
      out.push({ kind: 'ToolEventReceived', taskId, toolCallId: event.id, tool: '', stage: 'result', isError: event.is_error, summary: event.summary });
      break;
    case 'memory':
      out.push({ kind: 'MemoryHit', taskId, run: event.run, hits: event.hits.map((h) => ({ file: h.file, title: h.title, score: h.score })) });
      break;
    case 'gatekeeper':
      out.push({ kind: 'GatekeeperDecision', taskId, run: event.run, decision: event.decision, rule: event.rule, reasons: event.reasons, ...(event.file ? { file: event.file } : {}) });
      break;
    case 'done':
      if (event.status === 'completed') out.push({ kind: 'SessionCompleted', taskId, stopReason: event.stopReason });
      else if (event.status !== 'running') out.push({ kind: 'SessionFailed', taskId, status: event.status });
      break;
    default:
      break;
  }
  return out;
}

/**
 * What happens in one process, for those who watch without driving: the status board, the loop
 * judge and the status socket. Hook events (every event a task fires, whether or not a hook is
 * configured for it), the tasks' view events and loop events arrive in order. Listeners must not
 * throw (one that does is logged and skipped).
 */
export type ActivityEvent =
  | { kind: 'hook'; at: number; input: HookInput }
  | { kind: 'task'; at: number; event: ViewTaskEvent; parentId?: string; title?: string }
  | { kind: 'loop'; at: number; event: LoopEvent };

export interface ActivitySource {
  subscribe(listener: (e: ActivityEvent) => void): () => void;
}

/**
 * The activity view of the process's one event bus (eventBus.ts): publishing here publishes on
 * `bus` (a task event with the bus events it implies, `busEventsOf`), and a listener here is an
 * inline observer of `bus` that sees the bus events it understands, mapped back to
 * `ActivityEvent`. There is no second broadcaster: the
 * metrics collector, the logger and `keel events --follow` readers subscribe to the same bus.
 *
 * Listeners are inline observers, not queued ones, on purpose: the status board and the loop
 * judge drive machines from what they see (a task's `done`, an iteration's end) and must never
 * miss an event to a full queue, and they are fast (a fold, a socket write bounded by its own
 * byte cap).
 */
export class ActivityFeed implements ActivitySource {
  readonly bus: EventBus;

  constructor(
    private readonly log?: (message: string) => void,
    bus?: EventBus,
  ) {
    this.bus = bus ?? new EventBus({ onError: (name, err) => log?.(`an event bus subscriber (${name}) threw: ${errorMessage(err)}`) });
  }

  publish(e: ActivityEvent): void {
    if (e.kind === 'hook') this.bus.publish({ kind: 'HookEvent', input: e.input }, e.at);
    else if (e.kind === 'loop') this.bus.publish({ kind: 'LoopEvent', event: e.event }, e.at);
    else this.publishTask(e.event, { ...(e.parentId ? { parentId: e.parentId } : {}), ...(e.title !== undefined ? { title: e.title } : {}) });
  }

  /**
   * Any task event (the log-only ones too: the bus carries every event; activity listeners get
   * only view events), then what it implies, in that order (`busEventsOf`). Call it after the
   * store recorded it.
   */
  publishTask(event: TaskEvent, origin: TaskOrigin = {}): void {
    for (const e of busEventsOf(event, origin)) this.bus.publish(e);
  }

  subscribe(listener: (e: ActivityEvent) => void): () => void {
    const sub = this.bus.observe(
      (b) => {
        const a = activityOf(b);
        if (!a) return;
        try {
          listener(a);
        } catch (err) {
          this.log?.(`an activity listener threw: ${errorMessage(err)}`);
        }
      },
      { name: 'activity listener', filter: (b) => b.kind === 'HookEvent' || b.kind === 'LoopEvent' || (b.kind === 'TaskEvent' && isViewEvent(b.event)) },
    );
    return () => sub.unsubscribe();
  }
}

/** The activity event a bus event stands for, if any. */
function activityOf(b: BusEvent): ActivityEvent | null {
  switch (b.kind) {
    case 'HookEvent':
      return { kind: 'hook', at: b.at, input: b.input };
    case 'LoopEvent':
      return { kind: 'loop', at: b.at, event: b.event };
    case 'TaskEvent':
      if (!isViewEvent(b.event)) return null;
      return { kind: 'task', at: b.at, event: b.event, ...(b.parentId ? { parentId: b.parentId } : {}), ...(b.title !== undefined ? { title: b.title } : {}) };
    default:
      return null;
  }
}
