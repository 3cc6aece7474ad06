import type { ViewTaskEvent } from '../../shared/domain/events';
import type { LoopEvent } from '../../shared/domain/loop';
import type { HookInput } from './types';

/**
 * What happens in one process, for those who watch without driving: the status board, the loop
 * judge and the external socket. Hook events (every event a task fires, whether or not a hook is
 * configured for it), the tasks' view events and loop events arrive in order. Listeners must not
 * throw (one that does is logged and skipped). This is the small interface the event bus of
 * src/core/events serves; it is all these subscribers need of it.
 */
export type ActivityEvent =
  | { kind: 'hook'; at: number; input: HookInput }
  | { kind: 'task'; at: number; event: ViewTaskEvent; parentId?: string; title?: string }
  | { kind: 'loop'; at: number; event: LoopEvent };

export interface ActivitySource {
  subscribe(listener: (e: ActivityEvent) => void): () => void;
}

export class ActivityFeed implements ActivitySource {
  private readonly listeners = new Set<(e: ActivityEvent) => void>();

  constructor(private readonly log?: (message: string) => void) {}

  publish(e: ActivityEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(e);
      } catch (err) {
        this.log?.(`an activity listener threw: ${(err as Error).message}`);
      }
    }
  }

  subscribe(listener: (e: ActivityEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
