import type { EngineDecision } from '../permissions/engine';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { PermissionDecider } from './permissionCheck';

const STRICTNESS: Record<EngineDecision['decision'], number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The decider of a sub-agent, written once for the host's process and for a worker: each call is
 * decided under the task's own mode and, separately, under each of its ancestors' modes as they
 * are *now* (`ancestorModes`, nearest first: its parent's, its grandparent's, …); the strictest
 * answer wins (deny over ask over allow; the task's own on a tie, else the nearest ancestor's). So
 * a sub-agent never gets more than any task above it would, even when someone sets a looser mode
 * on it, and a parent tightened while its child runs tightens the child's next decision at once.
 * Without ancestors it is `own`. Never throws.
 */
export function boundedByAncestors(own: PermissionDecider, ancestorModes: () => readonly PermissionMode[]): PermissionDecider {
  return {
    // The child's own engine knows the workspace's Read rules (a parent's are the same files).
    searchExclusions: (root) => own.searchExclusions(root),
    async decide(call, mode) {
      const modes = ancestorModes();
      const [mine, ...theirs] = await Promise.all([own.decide(call, mode), ...modes.map((m) => own.decide(call, m))]);
      let strictest: EngineDecision = mine!;
      let from: PermissionMode | null = null;
      theirs.forEach((d, i) => {
        if (STRICTNESS[d.decision] > STRICTNESS[strictest.decision]) {
          strictest = d;
          from = modes[i]!;
        }
      });
      if (from === null) return strictest;
      return { ...strictest, reason: `${strictest.reason} (the parent task's ${String(from)} mode)` };
    },
  };
}
