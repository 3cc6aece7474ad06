import { realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import type { PermissionMode } from './types';
import type { PermissionDecider } from './permissionCheck';

/**
 * The one permission exception of loop mode (docs/loop.md): an iteration may write its loop's
 * progress file without being asked, in every mode but plan. Narrow on purpose:
 * - only a Write or Edit whose single target is exactly that file (its real location: a symlink
 *   pointing elsewhere is not it);
 * - only what would otherwise have asked because of the mode (or been denied by dontAsk for that
 *   reason): a deny rule still denies, an ask rule or a safety question (risky) still asks, and
 *   plan mode still refuses.
 * Every other call is decided by `inner` unchanged.
 */
export function allowingLoopProgress(inner: PermissionDecider, progressFile: string): PermissionDecider {
  const target = realTarget(progressFile);
  return {
    searchExclusions: (root) => inner.searchExclusions(root),
    decide(call, mode) {
      if (mode === 'plan' || !isProgressWrite(call, target)) return inner.decide(call, mode);
      return allowingModeAsk(inner, call, mode, "the loop's own progress file");
    },
  };
}

/**
 * Decides `call` as `inner` would, except that a question asked only because of the mode becomes
 * an allow with `reason`. A deny stays a deny (deny rules win), an ask rule or a safety question
 * (risky) still asks, and dontAsk still denies those. Shared by the loop's progress file and a
 * PreToolUse hook's "allow" (docs/hooks.md). Plan mode's read-only refusal happens before the
 * engine (the permission machine's checkMode) and is not affected.
 */
export async function allowingModeAsk(inner: Pick<PermissionDecider, 'decide'>, call: PermissionCall, mode: PermissionMode, reason: string): Promise<EngineDecision> {
  // Decide as the default mode would, to tell a mode question from a rule's or a safety one.
  const d = await inner.decide(call, mode === 'dontAsk' ? 'default' : mode);
  if (d.decision !== 'ask') return d;
  if (d.rule || d.risky) return mode === 'dontAsk' ? { ...d, decision: 'deny', reason: `${d.reason} (dontAsk mode denies what would ask)` } : d;
  return { decision: 'allow', reason };
}

function isProgressWrite(call: PermissionCall, target: string): boolean {
  if ((call.tool !== 'Write' && call.tool !== 'Edit') || call.subject.kind !== 'write') return false;
  const paths = call.subject.paths;
  return paths.length === 1 && realTarget(paths[0]!) === target;
}

/** The file's real location: its folder resolved through symlinks, and the file itself if it is one. */
function realTarget(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return join(realpathSync(dirname(abs)), abs.slice(dirname(abs).length + 1));
    } catch {
      return abs;
    }
  }
}
