import type { EventBus } from '../core/events/eventBus';
import type { TaskHandle } from '../core/runtime/types';
import { isViewEvent, type TaskEvent } from '../shared/domain/events';

export interface TaskFollowerHandlers {
  /** One event of the task, in order (through the bus: only view events, with their `taskSeq`; compare with `eventSeq()`). */
  event(event: TaskEvent, taskSeq?: number): void;
  /** Some events were lost to a full queue: what was shown must be rebuilt from a fresh snapshot. */
  lagged(missed: number): void;
}

/**
 * Follows one task's events for the chat views. With the process's event bus (and a task that
 * numbers its events), through a queued bus subscriber of its own: the views never slow the task
 * or the bus's other subscribers, and one that falls behind is told (`lagged`) and rebuilt from a
 * snapshot; events arrive a little later than the task delivered them, so a snapshot taken
 * meanwhile may already hold some of them (`taskSeq` ≤ the task's `eventSeq()` then). Without a
 * bus, directly from the task, synchronously. Returns the function that stops following.
 */
export function followTask(task: TaskHandle, bus: EventBus | undefined, handlers: TaskFollowerHandlers, capacity?: number): () => void {
  if (!bus || !task.eventSeq) return task.subscribe((e) => handlers.event(e));
  const sub = bus.subscribe(
    (d) => {
      if (d.kind === 'Lagged') handlers.lagged(d.missed);
      else if (d.kind === 'TaskEvent' && d.taskSeq !== undefined) handlers.event(d.event, d.taskSeq);
    },
    {
      name: `chat views of ${task.id}`,
      ...(capacity !== undefined ? { capacity } : {}),
      filter: (e) => e.kind === 'TaskEvent' && e.taskId === task.id && isViewEvent(e.event),
    },
  );
  return () => sub.unsubscribe();
}
