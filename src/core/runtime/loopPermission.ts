import { lstatSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import { protectedReason } from '../permissions/protectedPlaces';
import { linkProblem } from '../security/linkFreeFiles';
import type { PermissionMode } from './types';
import type { PermissionDecider } from './permissionCheck';

/**
 * The one permission exception of loop mode (docs/loop.md): an iteration may write its loop's
 * progress file without being asked, in every mode but plan. Narrow on purpose:
 * - only a Write or Edit whose single target is, as written, exactly that file
 *   (`<workspace>/.keel/loop/<name>/progress.md`, compared as a path, never through its real
 *   location), with no symbolic link anywhere between the workspace and the file, the file itself
 *   a plain file with one name (or not there yet);
 * - only the question that file would raise anyway: the protection of Keel's own folder for that
 *   very file, or the mode's. A deny rule still denies, an ask rule or any other safety question
 *   (a link, settings that cannot be read, …) still asks, dontAsk denies those, and plan mode
 *   still refuses.
 * Every other call is decided by `inner` unchanged.
 */
export function allowingLoopProgress(inner: PermissionDecider, progressFile: string, workspace: string): PermissionDecider {
  const file = resolve(progressFile);
  const root = resolve(workspace);
  const shaped = isLoopProgressPath(root, file);
  // What the engine says about a write to this file only because it is in Keel's own folder.
  const ownFolder = protectedReason(file, { roots: [root], home: '' });
  return {
    searchExclusions: (root) => inner.searchExclusions(root),
    async decide(call, mode) {
      if (mode === 'plan' || !shaped || !isProgressWrite(call, file) || !linkFree(root, file)) return inner.decide(call, mode);
      const d = await inner.decide(call, mode === 'dontAsk' ? 'default' : mode);
      if (d.decision !== 'ask') return d;
      if (d.rule || d.risky || (d.reason !== ownFolder && !(await onlyTheMode(inner, call)))) return deniedInDontAsk(d, mode);
      return { decision: 'allow', reason: "the loop's own progress file" };
    },
  };
}

/**
 * Decides `call` as `inner` would, except that a question asked only because of the mode becomes
 * an allow with `reason`. A deny stays a deny (deny rules win), an ask rule or a safety question
 * (a protected place, a write outside the workspace, settings that cannot be read: anything that
 * asks even in bypassPermissions, or is risky) still asks, and dontAsk still denies those. Used
 * for a PreToolUse hook's "allow" (docs/hooks.md). Plan mode's read-only refusal happens before
 * the engine (the permission machine's checkMode) and is not affected.
 */
export async function allowingModeAsk(inner: Pick<PermissionDecider, 'decide'>, call: PermissionCall, mode: PermissionMode, reason: string): Promise<EngineDecision> {
  // Decide as the default mode would, to tell a mode question from a rule's or a safety one.
  const d = await inner.decide(call, mode === 'dontAsk' ? 'default' : mode);
  if (d.decision !== 'ask') return d;
  if (d.rule || d.risky || !(await onlyTheMode(inner, call))) return deniedInDontAsk(d, mode);
  return { decision: 'allow', reason };
}

/** True when nothing but the mode makes `call` ask: bypassPermissions (which skips only the mode's questions) allows it. */
async function onlyTheMode(inner: Pick<PermissionDecider, 'decide'>, call: PermissionCall): Promise<boolean> {
  return (await inner.decide(call, 'bypassPermissions')).decision === 'allow';
}

function deniedInDontAsk(d: EngineDecision, mode: PermissionMode): EngineDecision {
  return mode === 'dontAsk' ? { ...d, decision: 'deny', reason: `${d.reason} (dontAsk mode denies what would ask)` } : d;
}

/** `file` is `<root>/.keel/loop/<name>/progress.md` with a single-folder name, as the loop files make it. */
function isLoopProgressPath(root: string, file: string): boolean {
  const prefix = join(root, '.keel', 'loop') + sep;
  if (!file.startsWith(prefix) || !file.endsWith(`${sep}progress.md`)) return false;
  const name = file.slice(prefix.length, -`${sep}progress.md`.length);
  return name.length > 0 && !name.includes(sep) && name !== '.' && name !== '..';
}

function isProgressWrite(call: PermissionCall, file: string): boolean {
  if ((call.tool !== 'Write' && call.tool !== 'Edit') || call.subject.kind !== 'write') return false;
  const paths = call.subject.paths;
  // As written: the path the tool names, made absolute, never its real location.
  return paths.length === 1 && resolve(paths[0]!) === file;
}

/** No link between the workspace and the file, and the file a plain file with one name (a hard link would be another file's too), or missing. */
function linkFree(root: string, file: string): boolean {
  if (linkProblem(root, file) !== null) return false;
  try {
    return lstatSync(file).nlink === 1;
  } catch {
    return true;
  }
}
