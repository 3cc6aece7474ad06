import type { EngineDecision, PermissionCall } from '../permissions/engine';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { PermissionDecider } from './permissionCheck';

/** What a subtask needs to know of its parent to never be looser than it. */
export interface PermissionParent {
  /** The parent's mode right now (it may have changed since the child started). */
  permissionMode(): PermissionMode;
  /** How the parent would decide `call` now, under its own mode and every ancestor's. Never throws. */
  decideAsParent(call: PermissionCall): Promise<EngineDecision>;
  /** The parent's mode and its ancestors', nearest first (sent to a worker running the child). */
  ancestorModes?(): PermissionMode[];
}

const STRICTNESS: Record<EngineDecision['decision'], number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The decider of a subtask: each call is decided under the child's own mode and, separately, as
 * its parent would decide it right now; the stricter answer wins (deny over ask over allow, the
 * child's own on a tie). So a child never gets more than its parent would, even when someone sets
 * a looser mode on the child, and a parent tightened while its child runs tightens the child's
 * next decision at once. Never throws.
 */
export function boundedByParent(own: PermissionDecider, parent: PermissionParent): PermissionDecider {
  return {
    // The child's own engine knows the workspace's Read rules (a parent's are the same files).
    searchExclusions: (root) => own.searchExclusions(root),
    async decide(call, mode) {
      const [mine, theirs] = await Promise.all([own.decide(call, mode), parent.decideAsParent(call)]);
      if (STRICTNESS[mine.decision] > STRICTNESS[theirs.decision]) return mine;
      if (STRICTNESS[theirs.decision] > STRICTNESS[mine.decision]) return { ...theirs, reason: `${theirs.reason} (the parent task's ${parent.permissionMode()} mode)` };
      return mine;
    },
  };
}
