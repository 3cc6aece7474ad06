import type { TaskEvent } from '../../shared/domain/events';
import type { CallCheckpoints, TaskCheckpoints } from '../checkpoints/recorder';
import type { PermissionSubject } from '../tools/types';

/**
 * Where the turn loop meets checkpoints (src/core/checkpoints): the small, explicit coupling the
 * runtime's tool actors use, the same in the host and in a worker. Write and Edit checkpoint the
 * file they write themselves (`ToolContext.checkpoints.beforeWrite`); a command or an MCP tool,
 * which may change anything, is bracketed here: the workspace before it, what it changed after.
 * Each call that touched files publishes one `checkpoint` event for its card and the header.
 */
interface Services {
  checkpoints?: TaskCheckpoints;
  publish(event: TaskEvent): void;
}

/**
 * A Write's or an Edit's before-image, taken while the log is made durable so the two fsyncs
 * overlap; the tool's own checkpoint then finds the file as kept and adds nothing.
 */
export async function prepareWrite(services: Pick<Services, 'checkpoints'>, call: { id: string; subject: PermissionSubject }, reviewedContent?: string): Promise<void> {
  const s = call.subject;
  if (!services.checkpoints || s.kind !== 'write' || !s.diff) return;
  const targets = s.targets ?? s.paths;
  if (targets.length !== 1 || !targets[0]) return;
  await services.checkpoints.forCall(call.id).beforeWrite(targets[0], reviewedContent ?? s.diff.after);
}

/**
 * Runs one tool call with its checkpoints: `command` brackets it (git status or a scan before and
 * after), `write` hands the tool its `CallCheckpoints`; null runs it without. Then publishes what
 * was kept. Never lets a checkpoint failure fail the call (they are notes on the card).
 */
export async function withCheckpoints<T>(
  services: Services,
  taskId: string,
  callId: string,
  what: { kind: 'command' | 'write'; subject?: PermissionSubject } | null,
  run: (checkpoints?: CallCheckpoints) => Promise<T>,
): Promise<T> {
  const cps = services.checkpoints;
  if (!cps || !what) return run(undefined);
  const cp = cps.forCall(callId);
  if (what.kind === 'command') await cp.beforeCommand();
  try {
    return await run(cp);
  } finally {
    if (what.kind === 'command') await cp.afterCommand();
    const report = await cp.report();
    cps.release(callId);
    if (report.files.length) services.publish({ type: 'checkpoint', taskId, toolCallId: callId, files: report.files, storedBytes: report.storedBytes });
  }
}
