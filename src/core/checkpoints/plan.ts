import { lstatSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import type { RewindScope } from '../../shared/domain/checkpoints';
import type { ConversationMessage } from '../../shared/domain/messages';
import type { TranscriptItem } from '../../shared/domain/transcript';
import { resolvePhysical } from '../permissions/physical';
import { hashContent, sameImage, type FileImage } from './format';
import type { ScannedRecord } from './pack';
import type { CheckpointIndex, CheckpointStore } from './store';
import { conversationBefore, itemsBefore, positionsOf, type Step, type Timeline } from './timeline';
import { captureView, diffViews, type WorkspaceView } from './workspaceView';
import type { GitRepo } from './git';
import { GitBlobError } from './gitObjects';

/**
 * What a rewind to before a step would do, worked out before anything is written: for each file
 * changed at or after that step, what it held just before (the first checkpoint taken from then
 * on), what it holds now, and whether the person changed it since Keel last wrote it (a conflict
 * they decide). Files with no before-image are named as not restorable, with the reason.
 */
export interface PlannedFile {
  /** As recorded: workspace-relative, or absolute for a file outside the workspace. */
  path: string;
  /** Where it is written (null when it cannot be: outside the workspace, through a link). */
  abs: string | null;
  action: 'restore' | 'remove' | 'notRestorable';
  /** It holds something other than what Keel last wrote: the person (or something else) changed it. */
  conflict: boolean;
  reason?: string;
  target: FileImage;
  current: FileImage;
  /** The target's content when it is not in the store (a command's change recovered from git's HEAD). */
  targetContent?: Buffer;
}

export interface RewindPlan {
  step: Step;
  scope: RewindScope;
  /** The files that would change (and those that cannot be restored), by path. */
  files: PlannedFile[];
  /** What the person should know: folders not looked at, commands cut short, damage. */
  notes: string[];
  /** The conversation and the chat as they were (when the conversation is rewound). */
  conversation?: ConversationMessage[];
  items?: TranscriptItem[];
}

type Mark = Extract<ScannedRecord, { type: 'mark' }>;

/** Index in `records` from which everything happened at or after log record `P`. */
export function cutIndex(records: ScannedRecord[], positions: Map<string, number>, P: number): number {
  let cut = 0;
  records.forEach((r, i) => {
    if (r.type === 'blob') return;
    if (r.type === 'anchor') {
      if (r.records <= P) cut = i + 1;
      return;
    }
    const pos = positions.get(r.step);
    if (pos !== undefined && pos < P) cut = i + 1;
  });
  return cut;
}

export interface PlanInput {
  timeline: Timeline;
  index: CheckpointIndex;
  store: CheckpointStore;
  workspace: string;
  step: Step;
  scope: RewindScope;
  /** The repository git may be run in (to recover a command that was cut short), if any. */
  repo?: GitRepo | null;
}

export async function planRewind(input: PlanInput): Promise<RewindPlan> {
  const { timeline, index, step, scope, workspace } = input;
  const notes: string[] = [...index.damage];
  const out: RewindPlan = { step, scope, files: [], notes };
  if (scope !== 'files') {
    out.conversation = conversationBefore(timeline, step);
    out.items = itemsBefore(timeline, step);
  }
  if (scope === 'conversation') return out;
  const positions = positionsOf(timeline);
  const records = index.records.filter((r) => r.type !== 'blob');
  const after = records.slice(cutIndex(records, positions, step.record));
  const recovered = new Map<string, Buffer>();
  const marks = await withRecovered(after, input, notes, recovered);
  const first = new Map<string, Mark>();
  const last = new Map<string, Mark>();
  for (const m of marks) {
    if (!first.has(m.path)) first.set(m.path, m);
    last.set(m.path, m);
  }
  const ignored = new Set<string>();
  for (const r of after) if (r.type === 'command' && r.phase === 'end') for (const n of r.notes) ignored.add(n);
  for (const n of ignored) notes.push(n);
  for (const [path, m] of first) {
    const target = m.before;
    const abs = placeOf(workspace, path);
    const current = abs ? await imageAt(abs) : ({ kind: 'unknown', reason: 'outside the workspace' } as FileImage);
    if (target.kind === 'unknown') {
      out.files.push({ path, abs, action: 'notRestorable', conflict: false, reason: target.reason, target, current });
      continue;
    }
    if (sameImage(current, target)) continue;
    if (!abs) {
      out.files.push({ path, abs, action: 'notRestorable', conflict: false, reason: 'it now leads outside the workspace', target, current });
      continue;
    }
    if (current.kind === 'unknown') {
      out.files.push({ path, abs, action: 'notRestorable', conflict: true, reason: current.reason, target, current });
      continue;
    }
    const expected = last.get(path)!.after;
    const conflict = !sameImage(current, expected);
    let content = target.kind === 'blob' ? recovered.get(target.hash) : undefined;
    if (target.kind === 'blob' && !content && (await input.store.fromGit(target.hash))) {
      // Kept as git's object: read (and checked) now, so the preview never offers what the
      // repository can no longer give back, and the restore writes exactly what was read.
      try {
        content = await input.store.read(target.hash);
      } catch (err) {
        const reason = err instanceof GitBlobError ? err.message : `its before-image could not be read (${(err as Error).message})`;
        out.files.push({ path, abs, action: 'notRestorable', conflict: false, reason, target, current });
        continue;
      }
    }
    out.files.push({
      path,
      abs,
      action: target.kind === 'absent' ? 'remove' : 'restore',
      conflict,
      ...(conflict ? { reason: 'changed since Keel last wrote it' } : {}),
      target,
      current,
      ...(content ? { targetContent: content } : {}),
    });
  }
  out.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

/**
 * The marks after the cut, with those of a command whose recording was cut short (its process
 * died after `start`): found now by comparing the workspace with what was recorded before it.
 */
async function withRecovered(after: ScannedRecord[], input: PlanInput, notes: string[], recovered: Map<string, Buffer>): Promise<Mark[]> {
  const ended = new Set(after.filter((r) => r.type === 'command' && r.phase === 'end').map((r) => (r as { step: string }).step));
  const out: Mark[] = [];
  for (const r of after) {
    if (r.type === 'mark') out.push(r);
    if (r.type !== 'command' || r.phase !== 'start' || ended.has(r.step) || !r.manifest) continue;
    try {
      const view = JSON.parse((await input.store.read(r.manifest)).toString('utf8')) as WorkspaceView;
      const identify = (c: Buffer): FileImage => ({ kind: 'blob', hash: hashContent(c), size: c.length });
      const nowView = await captureView(
        input.workspace,
        view.mode === 'git' ? (input.repo ?? null) : null,
        view,
        { maxFileBytes: Number.MAX_SAFE_INTEGER, maxFiles: Object.keys(view.files).length + 10_000 },
        { keep: false, record: async (_p, c) => identify(c) },
      );
      // Planning writes nothing: contents found now (git's HEAD) travel with the plan.
      const keep = async (_path: string, c: Buffer): Promise<FileImage> => {
        const image = identify(c);
        if (image.kind === 'blob') recovered.set(image.hash, c);
        return image;
      };
      const repo = view.mode === 'git' ? (input.repo ?? null) : null;
      const { changes } = await diffViews(input.workspace, repo, view, nowView, keep, identify, { maxFileBytes: Number.MAX_SAFE_INTEGER, maxFiles: 100_000 });
      for (const c of changes) out.push({ type: 'mark', step: r.step, path: c.path, before: c.before, after: c.after });
      notes.push(`a command (${r.step}) ended before what it changed was recorded (Keel was stopped); its changes were found by comparing the workspace with what was recorded before it ran`);
    } catch (err) {
      notes.push(`a command (${r.step}) ended before what it changed was recorded, and its changes could not be worked out (${(err as Error).message}); files it changed may not be restored`);
    }
  }
  return out;
}

/** Where a recorded path is written, or null when it is outside the workspace or leads out of it. */
export function placeOf(workspace: string, path: string): string | null {
  if (isAbsolute(path) || path.split('/').some((s) => s === '..' || s === '' || s === '.')) return null;
  const abs = join(workspace, ...path.split('/'));
  const phys = resolvePhysical(abs);
  if (!phys.ok) return null;
  const root = resolvePhysical(workspace);
  const base = root.ok ? root.path : workspace;
  return phys.path === base || phys.path.startsWith(base + sep) ? phys.path : null;
}

/** What a file holds now, hashed. */
export async function imageAt(abs: string): Promise<FileImage> {
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    return { kind: 'absent' };
  }
  if (st.isSymbolicLink()) return { kind: 'unknown', reason: 'it is a symbolic link now' };
  if (!st.isFile()) return { kind: 'unknown', reason: 'it is not a regular file now' };
  const c = await readFile(abs);
  return { kind: 'blob', hash: hashContent(c), size: c.length };
}
