import { isViewEvent, type TaskEvent, type ViewTaskEvent } from '../../shared/domain/events';
import type { LoopEvent } from '../../shared/domain/loop';
import { EventBus } from '../events/eventBus';
import { publishTaskEvent, type TaskOrigin } from '../events/taskEvents';
import type { BusEvent } from '../events/types';
import type { HookInput } from './types';
import { errorMessage } from '../../shared/domain/errors';

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
 * The activity view of the process's one event bus (src/core/events/eventBus.ts): publishing
 * here publishes on `bus`, and a listener here is an inline observer of `bus` that sees the bus
 * events it understands, mapped back to `ActivityEvent`. There is no second broadcaster: the
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
   * only view events), with what it implies (taskEvents.ts). Call it after the store recorded it.
   */
  publishTask(event: TaskEvent, origin: TaskOrigin = {}): void {
    publishTaskEvent(this.bus, event, origin);
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
