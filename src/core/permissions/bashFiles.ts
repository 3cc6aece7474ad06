import { basename, isAbsolute, join } from 'node:path';
import type { Findings } from './findings';
import { operandPaths } from './operands';
import { isNotAFile, type PathPolicy } from './pathPolicy';
import type { AccessKind, FileUse } from './readOnlyCommands';

/**
 * The files of one Bash call, as the path policy (pathPolicy.ts) decides them: reads, searches
 * and metadata at once (their answer decides whether a command is read-only), writes collected
 * with whether the rule that allowed their command covers them, then decided together. Shared by
 * redirections, wrappers, runners and every command Keel models (readOnlyCommands.ts).
 */

const BELOW: Record<AccessKind, AccessKind> = { read: 'search', entry: 'search', search: 'search', metadata: 'metadata', write: 'writeTree', writeTree: 'writeTree', writeBelow: 'writeBelow' };

/** A write to decide: a path (null: named only at run time) and what the command does there. */
export interface PendingWrite {
  path: string | null;
  text: string;
  kind: Extract<AccessKind, 'write' | 'writeTree' | 'writeBelow'>;
  /** For a tree copy: the tree whose names land below `path`. */
  from?: string;
  /** A Bash rule that allowed the command covers it inside the workspace. */
  covered: boolean;
}

/** How a form's words name files: from the directories it may run in, `~` as home. */
export interface Locating {
  cwds: readonly string[] | null;
  home: string;
  /** Directory entries globs may still look at (the decision's budget). */
  spend(n: number): boolean;
}

/** Every absolute path `value` may name (globs expanded as bash would); null when unknown. */
export function pathsOf(value: string, where: Locating, policy: PathPolicy): string[] | null {
  if (isAbsolute(value) && !/[*?[]/.test(value)) return [value];
  const listable = (dir: string): boolean => policy.readable(dir) || policy.readable(`${dir}/_`);
  return operandPaths(value, where.cwds, where.home, listable, policy.fs, (n) => where.spend(n));
}

/**
 * Applies one file use of a command: a read, search or metadata is decided now (Read rules into
 * `f`; the answer is whether it keeps the command read-only); a write is added to `writes`
 * (`byRule` decided later by the caller). Returns false for writes and for what cannot be located.
 */
export function applyUse(use: FileUse, where: Locating, policy: PathPolicy, f: Findings, writes: (Omit<PendingWrite, 'covered'> & { byRule: boolean })[], unknown: () => void): boolean {
  // A word that stands for every file below a folder (find's results): reading them searches it,
  // through the links below it (the command opens each file it is handed).
  if (use.word?.below && (use.kind === 'read' || use.kind === 'entry' || use.kind === 'search')) {
    const roots = pathsOf(use.value, where, policy);
    if (roots === null) {
      unknown();
      return false;
    }
    let ok = true;
    for (const p of roots) if (!policy.searchThroughLinks(p, use.word.text, f)) ok = false;
    return ok;
  }
  const u: FileUse = use.word?.below ? { ...use, kind: BELOW[use.kind] } : use;
  const byRule = u.byRule === true;
  const text = u.word?.text ?? u.value;
  const paths = u.scope === 'rules' ? [u.value] : pathsOf(u.value, where, policy);
  if (paths === null) {
    unknown();
    if (u.kind === 'write' || u.kind === 'writeTree' || u.kind === 'writeBelow') writes.push({ path: null, text, kind: u.kind, byRule });
    return false;
  }
  let ok = true;
  switch (u.kind) {
    case 'read':
      for (const p of paths) if (!policy.read(p, f)) ok = false;
      return ok;
    case 'search':
      for (const p of paths) if (!policy.search(p, text, f)) ok = false;
      return u.scope === 'rules' || ok;
    case 'metadata':
      for (const p of paths) if (!policy.metadata(p, f)) ok = false;
      return ok;
    case 'entry':
      for (const p of paths) {
        if (!p.endsWith('/') && policy.fs.lstat(p).kind === 'link') {
          if (!policy.metadata(p, f)) ok = false;
        } else if (!policy.read(p, f)) ok = false;
      }
      return ok;
    default:
      break;
  }
  // Output thrown away or sent to a pipe (`tee /dev/null`) writes no file.
  if (u.into === undefined && paths.every(isNotAFile)) return true;
  if (u.into !== undefined) {
    const dirs = pathsOf(u.into, where, policy);
    if (dirs === null) {
      unknown();
      writes.push({ path: null, text, kind: u.kind, byRule });
      return false;
    }
    for (const d of dirs) for (const p of paths) writes.push({ path: join(d, basename(p)), text: `${u.into}/${basename(p)}`, kind: u.kind, byRule, ...(u.kind === 'writeTree' ? { from: p } : {}) });
    return false;
  }
  const from = u.from === undefined ? undefined : pathsOf(u.from, where, policy);
  if (u.from !== undefined && (from === null || from === undefined || from.length !== 1)) {
    if (from === null) unknown();
    for (const p of paths) writes.push({ path: p, text, kind: 'writeBelow', byRule });
    return false;
  }
  for (const p of paths) {
    if (isNotAFile(p)) continue;
    writes.push({ path: p, text, kind: u.kind, byRule, ...(from?.[0] !== undefined ? { from: from[0] } : {}) });
  }
  return false;
}

/** Decides the collected writes; true when some write is covered by no Edit/Write allow rule nor its command's rule. */
export function decideWrites(writes: readonly PendingWrite[], policy: PathPolicy, f: Findings): boolean {
  let uncovered = false;
  for (const w of writes) {
    if (w.path === null) {
      f.softAsk.push(`writes to a file named only at run time (${w.text})`);
      uncovered = true;
      continue;
    }
    if (isNotAFile(w.path)) continue;
    const v = w.kind === 'writeTree' ? policy.writeTree(w.path, w.text, f, w.from) : w.kind === 'writeBelow' ? policy.unknownWritesBelow(w.path, w.text, f) : policy.write(w.path, w.text, f);
    if (v.real === null || !(v.allowedBy || (w.covered && v.inside))) uncovered = true;
  }
  return uncovered;
}
