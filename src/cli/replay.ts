import { replayTask } from '../core/replay/replayTask';
import type { TaskStore } from '../core/store/taskStore';

/**
 * `keel tasks replay ID [--until N]`: prints whether a replay of the task's log gives the same
 * events, or the first one that differs (its index, what the log has, what the replay published).
 * Exit 0 when they agree, 1 on a difference. Never calls a model, runs a tool or writes the store.
 */
export async function replayCommand(store: TaskStore, id: string, until: number | undefined): Promise<number> {
  const result = await replayTask(store, id, until !== undefined ? { until } : {});
  if (result.stoppedAt) process.stdout.write(`note: compared up to event ${result.stoppedAt.index}: ${result.stoppedAt.reason}\n`);
  const d = result.divergence;
  if (!d) {
    process.stdout.write(`replayed task ${id}: the ${result.compared} events compared came out the same, in the same order\n`);
    return 0;
  }
  process.stdout.write(
    `replayed task ${id}: first difference at event ${d.index} (of ${result.compared} compared)\n` +
      `  expected: ${d.expected === null ? '(no more events)' : JSON.stringify(d.expected)}\n` +
      `  actual:   ${d.actual === null ? '(no more events)' : JSON.stringify(d.actual)}\n`,
  );
  return 1;
}
