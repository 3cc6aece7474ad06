import { randomUUID } from 'node:crypto';
import { constants, existsSync, mkdirSync } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { RewindScope, RewoundFile } from '../../shared/domain/checkpoints';
import type { TaskEvent } from '../../shared/domain/events';
import { taskStateTags } from '../machines/task/taskTags';
import type { TaskRecorder } from '../store/taskRecorder';
import type { TaskStore } from '../store/taskStore';
import { StoreError } from '../store/types';
import { hashContent, sameImage, type FileImage } from './format';
import { planRewind, type PlannedFile, type RewindPlan } from './plan';
import { TaskCheckpoints, type CheckpointLimits } from './recorder';
import { conversationBefore, readTimeline, stepAt, type Step, type Timeline } from './timeline';

/**
 * Rewind and fork of stored tasks (docs/persistence.md, "Rewind and fork"), for the CLI and the
 * extension alike. A task being driven (by another process, or by this one: the caller lets go of
 * a live task first) is never rewound under its driver: `rewind` takes the task's lock.
 */

export class RewindError extends Error {
  constructor(
    readonly code: 'no_step' | 'conflicts' | 'no_workspace',
    message: string,
    readonly conflicts: PlannedFile[] = [],
  ) {
    super(message);
    this.name = 'RewindError';
  }
}

/** The person's answer for a file changed since Keel last wrote it. */
export type ConflictChoice = 'overwrite' | 'keep';

export interface RewindResult {
  id: string;
  step: Step;
  scope: RewindScope;
  files: RewoundFile[];
  notes: string[];
  /** The user message rewound to (to be typed again or changed), when the step is one. */
  messageText?: string;
}

export interface CheckpointsAccess {
  store: TaskStore;
  /** Who drives the task while it is rewritten (for "running in another window" messages). */
  owner: string;
  limits?: Partial<CheckpointLimits>;
  home?: string;
}

export function checkpointsDir(store: TaskStore, id: string): string {
  return join(store.taskDir(id), 'checkpoints');
}

/** What a rewind of stored task `id` to before step `n` would do. Reads only. */
export async function previewRewind(access: CheckpointsAccess, id: string, n: number, scope: RewindScope): Promise<{ plan: RewindPlan; timeline: Timeline; workspace: string }> {
  const dir = access.store.taskDir(id);
  const timeline = await readTimeline(dir);
  const step = stepAt(timeline, n);
  if (!step) throw new RewindError('no_step', `task ${id} has no step ${n} (it has ${timeline.steps.length}; \`keel tasks checkpoints ${id}\` lists them)`);
  const workspace = timeline.header.workspace ?? '';
  if (scope !== 'conversation' && (!workspace || !existsSync(workspace))) {
    throw new RewindError('no_workspace', `the task's workspace ${workspace || '(unknown)'} is not there; its files cannot be rewound`);
  }
  const cps = new TaskCheckpoints({
    dir: checkpointsDir(access.store, id),
    workspace: workspace || '/',
    ...(access.limits ? { limits: access.limits } : {}),
    ...(access.home ? { home: access.home } : {}),
  });
  try {
    const index = await cps.store.load();
    const plan = await planRewind({ timeline, index, store: cps.store, workspace: cps.root, step, scope, repo: (await cps.repository()).repo });
    return { plan, timeline, workspace: cps.root };
  } finally {
    await cps.close();
  }
}

/** The text a planned file holds now and would hold after the rewind (null: no file), for a diff. */
export async function plannedTexts(access: CheckpointsAccess, id: string, file: PlannedFile): Promise<{ current: Buffer | null; target: Buffer | null }> {
  let workspace = '/';
  if (file.target.kind === 'blob' && !file.targetContent) {
    // A before-image kept as git's object is read from the task's workspace's repository.
    const probe = new TaskCheckpoints({ dir: checkpointsDir(access.store, id), workspace: '/' });
    const fromGit = await probe.store.fromGit(file.target.hash).finally(() => probe.close());
    if (fromGit) workspace = (await readTimeline(access.store.taskDir(id))).header.workspace ?? '/';
  }
  const cps = new TaskCheckpoints({ dir: checkpointsDir(access.store, id), workspace });
  try {
    const current = file.abs && file.current.kind === 'blob' ? await readFile(file.abs).catch(() => null) : null;
    const target = file.target.kind === 'blob' ? (file.targetContent ?? (await cps.store.read(file.target.hash))) : null;
    return { current, target };
  } finally {
    await cps.close();
  }
}

/**
 * Rewinds stored task `id` to before step `n`: the files (each changed one back to what it held
 * then; a conflict as `decide` says, and without an answer the rewind is refused), the
 * conversation (and the chat), or both. Every file it overwrites is checkpointed first, so the
 * rewind is a step of its own and can be undone by rewinding to it. Recorded as a `rewind` event
 * (then a `compacted` with the conversation). Throws StoreError('locked') when another process
 * drives the task, RewindError for a bad step or undecided conflicts.
 */
export async function rewindTask(access: CheckpointsAccess, id: string, n: number, scope: RewindScope, decide?: (f: PlannedFile) => ConflictChoice | undefined): Promise<RewindResult> {
  const opened = await access.store.open(id, access.owner);
  const recorder = opened.recorder;
  try {
    const { plan, timeline } = await previewRewind(access, id, n, scope);
    refuseUndecided(plan, decide);
    const rewindId = `rewind_${randomUUID()}`;
    const files = scope === 'conversation' ? [] : await restoreFiles(access, id, timeline, plan, rewindId, decide ?? (() => undefined));
    const step = plan.step;
    const what = scope === 'files' ? 'Files rewound' : scope === 'conversation' ? 'Conversation rewound' : 'Rewound';
    const event: TaskEvent = {
      type: 'rewind',
      taskId: id,
      id: rewindId,
      action: 'rewind',
      step: step.number,
      stepId: step.id,
      scope,
      label: `${what} to before step ${step.number} (${step.label})`,
      files,
      ...(plan.items ? { items: plan.items } : {}),
    };
    recorder.record(event);
    if (plan.conversation) recorder.record({ type: 'compacted', taskId: id, messages: plan.conversation, summary: false });
    await recorder.durable();
    return { id: rewindId, step, scope, files, notes: plan.notes, ...(scope !== 'files' && step.kind === 'message' && step.text !== undefined ? { messageText: step.text } : {}) };
  } finally {
    recorder.close();
  }
}

/**
 * Writes a plan's files back. First every file about to be overwritten is checkpointed (and made
 * durable) under the rewind's id, after an anchor that places the rewind in the log; then the
 * files are written. A file that changed since the plan was made is a conflict of its own.
 */
/** Throws RewindError('conflicts') naming each conflict `decide` has no answer for. */
function refuseUndecided(plan: RewindPlan, decide: ((f: PlannedFile) => ConflictChoice | undefined) | undefined): void {
  const undecided = plan.files.filter((f) => f.conflict && f.action !== 'notRestorable' && !decide?.(f));
  if (!undecided.length) return;
  const one = undecided.length === 1;
  const names = undecided.map((f) => f.path).join(', ');
  const them = one ? 'it' : 'them';
  throw new RewindError('conflicts', `${undecided.length} file${one ? ' was' : 's were'} changed since Keel last wrote ${them}: ${names}; say whether to overwrite or keep ${them}`, undecided);
}

type Decide = (f: PlannedFile) => ConflictChoice | undefined;

async function restoreFiles(access: CheckpointsAccess, id: string, timeline: Timeline, plan: RewindPlan, rewindId: string, decide: Decide): Promise<RewoundFile[]> {
  // Its copies of what it overwrites are not recompacted: `keel tasks rewind` would wait for it to exit.
  const cps = new TaskCheckpoints({ dir: checkpointsDir(access.store, id), workspace: timeline.header.workspace ?? '/', recompact: false, ...(access.limits ? { limits: access.limits } : {}) });
  const out: RewoundFile[] = [];
  const writes: { file: PlannedFile; content: Buffer | null }[] = [];
  try {
    await cps.store.append({ type: 'anchor', records: timeline.records.length });
    for (const f of plan.files) {
      if (f.action === 'notRestorable' || !f.abs) {
        out.push({ path: f.path, outcome: 'notRestorable', ...(f.reason ? { reason: f.reason } : {}) });
        continue;
      }
      if (f.conflict && decide(f) !== 'overwrite') {
        out.push({ path: f.path, outcome: 'keptYours' });
        continue;
      }
      const now = await readNow(f.abs);
      const nowImage: FileImage = now === null ? { kind: 'absent' } : { kind: 'blob', hash: hashContent(now), size: now.length };
      if (!sameImage(nowImage, f.current)) {
        // Changed between the preview and now: never overwritten unasked.
        out.push({ path: f.path, outcome: 'keptYours', reason: 'it changed while the rewind was being decided' });
        continue;
      }
      const content = f.target.kind === 'blob' ? (f.targetContent ?? (await cps.store.read(f.target.hash))) : null;
      // Content recovered from git for this rewind is kept from now on, like any before-image.
      // (One holding a key or token is not: it is read from git again when needed.)
      if (f.targetContent) await cps.store.putFile(f.targetContent, f.path);
      let before: FileImage = nowImage;
      if (now !== null && nowImage.kind === 'blob') {
        // What the file holds now, so that the rewind can be undone — never a key or token.
        const full = await cps.full();
        const kept = full ? { refused: full } : await cps.store.putFile(now, f.path, nowImage.hash);
        if ('refused' in kept) before = { kind: 'unknown', reason: kept.refused };
      }
      await cps.store.append({ type: 'mark', step: rewindId, path: f.path, before, after: f.target });
      writes.push({ file: f, content });
    }
    await cps.store.sync();
    for (const w of writes) {
      try {
        if (w.content === null) await unlink(w.file.abs!).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
        else await writeNoFollow(w.file.abs!, w.content);
        out.push({ path: w.file.path, outcome: w.content === null ? 'removed' : 'restored' });
      } catch (err) {
        out.push({ path: w.file.path, outcome: 'notRestorable', reason: `writing it failed: ${(err as Error).message}` });
      }
    }
  } finally {
    await cps.close();
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function readNow(abs: string): Promise<Buffer | null> {
  try {
    return await readFile(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function writeNoFollow(abs: string, content: Buffer): Promise<void> {
  mkdirSync(dirname(abs), { recursive: true });
  const fh = await open(abs, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666);
  try {
    await fh.writeFile(content);
  } finally {
    await fh.close();
  }
}

export interface ForkResult {
  taskId: string;
  step: Step;
  files: RewoundFile[];
  notes: string[];
}

/**
 * Forks stored task `id` at step `n` into a new task: the chat and the conversation as they were
 * just before that step (the parent's log up to there, then a `rewind` event with `action:
 * 'fork'`), sharing the parent's checkpoints (hard links), settled and waiting for a message.
 * With `files`, the workspace's files are also put back as they were before that step (as a
 * rewind of the new task would, conflicts decided by `decide`). The parent gets a `rewind` event
 * naming the fork when it can be opened here.
 */
export async function forkTask(access: CheckpointsAccess, id: string, n: number, opts: { files: boolean; decide?: (f: PlannedFile) => ConflictChoice | undefined }): Promise<ForkResult> {
  const { store } = access;
  const meta = await store.readMeta(id);
  const { plan, timeline } = await previewRewind(access, id, n, opts.files ? 'both' : 'conversation');
  const step = plan.step;
  if (opts.files) {
    refuseUndecided(plan, opts.decide);
  }
  const newId = randomUUID();
  const recorder: TaskRecorder = store.create({
    id: newId,
    title: `${meta.title} (fork at step ${n})`,
    model: meta.model,
    ...(meta.provider ? { provider: meta.provider } : {}),
    workspace: timeline.header.workspace ?? meta.workspace,
    owner: access.owner,
  });
  try {
    const prefix = timeline.records.slice(0, step.record);
    for (const r of prefix) recorder.record(retag(r.event, newId));
    const parentCps = new TaskCheckpoints({ dir: checkpointsDir(store, id), workspace: '/' });
    await parentCps.store.shareWith(checkpointsDir(store, newId)).finally(() => parentCps.close());
    // What the parent recorded after this point is shared too, but happened before the fork:
    // the anchor puts everything the fork records later after it.
    const own = new TaskCheckpoints({ dir: checkpointsDir(store, newId), workspace: '/' });
    await own.store.append({ type: 'anchor', records: prefix.length });
    await own.store.sync().finally(() => own.close());
    const forkEventId = `fork_${randomUUID()}`;
    const forkTimeline: Timeline = { ...timeline, records: prefix };
    const files = opts.files ? await restoreFiles(access, newId, forkTimeline, plan, forkEventId, opts.decide ?? (() => undefined)) : [];
    recorder.record({
      type: 'rewind',
      taskId: newId,
      id: forkEventId,
      action: 'fork',
      step: n,
      stepId: step.id,
      scope: opts.files ? 'both' : 'conversation',
      label: `Forked from "${meta.title}" at step ${n} (${step.label})`,
      files,
      forkedFrom: { taskId: id, step: n },
    });
    recorder.record({ type: 'compacted', taskId: newId, messages: conversationBefore(timeline, step), summary: false });
    recorder.record({ type: 'task', taskId: newId, state: 'completed', title: `${meta.title} (fork at step ${n})`, tags: taskStateTags('completed') });
    await recorder.durable();
    await noteForkInParent(access, id, newId, step).catch(() => undefined);
    return { taskId: newId, step, files, notes: plan.notes };
  } finally {
    recorder.close();
  }
}

/** The parent's log says where it was forked, when no other process drives it. */
async function noteForkInParent(access: CheckpointsAccess, id: string, forkId: string, step: Step): Promise<void> {
  let opened;
  try {
    opened = await access.store.open(id, access.owner);
  } catch (err) {
    if (err instanceof StoreError) return;
    throw err;
  }
  try {
    opened.recorder.record({
      type: 'rewind',
      taskId: id,
      id: `forked_${randomUUID()}`,
      action: 'fork',
      step: step.number,
      stepId: step.id,
      scope: 'conversation',
      label: `Forked at step ${step.number} (${step.label}) into a new task`,
      files: [],
      forkedTo: forkId,
    });
    await opened.recorder.durable();
  } finally {
    opened.recorder.close();
  }
}

function retag(e: TaskEvent, taskId: string): TaskEvent {
  return { ...e, taskId };
}

/** One step as `keel tasks checkpoints` lists it. */
export interface StepListing {
  step: number;
  kind: Step['kind'];
  id: string;
  at: number;
  label: string;
  /** The files this step changed, each restorable (a before-image was kept) or not, and why. */
  files: { path: string; restorable: boolean; reason?: string }[];
  notes: string[];
}

export interface CheckpointListing {
  taskId: string;
  workspace: string;
  /** Bytes on disk: this task's own packs, and packs it shares with a parent or a fork. */
  ownBytes: number;
  sharedBytes: number;
  steps: StepListing[];
  notes: string[];
}

/** The steps of stored task `id` that can be rewound to, with the files each changed. Reads only. */
export async function listCheckpoints(access: CheckpointsAccess, id: string): Promise<CheckpointListing> {
  const dir = access.store.taskDir(id);
  const timeline = await readTimeline(dir);
  const cps = new TaskCheckpoints({ dir: checkpointsDir(access.store, id), workspace: timeline.header.workspace ?? '/' });
  try {
    const index = await cps.store.load();
    const byStep = new Map<string, StepListing['files']>();
    const started = new Set<string>();
    const ended = new Set<string>();
    const notes = new Map<string, string[]>();
    for (const r of index.records) {
      if (r.type === 'command') {
        (r.phase === 'start' ? started : ended).add(r.step);
        if (r.notes.length) notes.set(r.step, [...(notes.get(r.step) ?? []), ...r.notes]);
      }
      if (r.type !== 'mark' || sameImage(r.before, r.after)) continue;
      const list = byStep.get(r.step) ?? [];
      if (!list.some((f) => f.path === r.path)) list.push({ path: r.path, restorable: r.before.kind !== 'unknown', ...(r.before.kind === 'unknown' ? { reason: r.before.reason } : {}) });
      byStep.set(r.step, list);
    }
    const steps = timeline.steps.map((s): StepListing => {
      const stepNotes = [...new Set(notes.get(s.id) ?? [])];
      if (started.has(s.id) && !ended.has(s.id)) {
        stepNotes.push('the command ended before what it changed was recorded (Keel was stopped); a rewind finds its changes by comparing the workspace with what was recorded before it');
      }
      return { step: s.number, kind: s.kind, id: s.id, at: s.at, label: s.label, files: byStep.get(s.id) ?? [], notes: stepNotes };
    });
    return { taskId: id, workspace: timeline.header.workspace ?? '', ownBytes: index.ownBytes, sharedBytes: index.linkedBytes, steps, notes: index.damage };
  } finally {
    await cps.close();
  }
}
