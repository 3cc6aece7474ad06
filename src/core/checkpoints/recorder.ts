import { lstatSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, relative, sep } from 'node:path';
import { formatBytes, type CheckpointFileNote } from '../../shared/domain/checkpoints';
import type { ToolCheckpoints } from '../tools/types';
import { containsSecret } from '../security/secrets';
import { hashContent, type FileImage } from './format';
import { findRepo, type GitRepo } from './git';
import { GitObjects } from './gitObjects';
import { CheckpointStore, SECRET_REFUSAL } from './store';
import { captureView, diffViews, type Recording, type WorkspaceView } from './workspaceView';

/** The limits of a task's checkpoints; reaching one is reported, never silent. */
export interface CheckpointLimits {
  /** A file larger than this gets no before-image. */
  maxFileBytes: number;
  /** Once a task's checkpoints hold this much, later steps get no before-images. */
  maxTaskBytes: number;
  /** Files looked at per command (git's changed files, or a scan's walk). */
  maxScanFiles: number;
}

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = { maxFileBytes: 32 * 1024 * 1024, maxTaskBytes: 1024 * 1024 * 1024, maxScanFiles: 5000 };

export interface TaskCheckpointsOptions {
  /** `tasks/<id>/checkpoints`. */
  dir: string;
  workspace: string;
  limits?: Partial<CheckpointLimits>;
  /** The home folder (git's `~` in a repository's config). */
  home?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * False: large whole copies are not recompacted in the background (recompact.ts). For a
   * process that ends right after (a rewind's `keel tasks rewind`), which would otherwise wait
   * for the rewrite under way as it exits.
   */
  recompact?: boolean;
}

/** What a call's checkpoints came to, for its `checkpoint` event. */
export interface CallReport {
  files: CheckpointFileNote[];
  storedBytes: number;
}

/**
 * The checkpoints one process takes for one task (the host's, or the worker's running its
 * query): before-images of the files Write and Edit change, and around each command (and MCP
 * tool) the workspace's files it changed. One instance per task per process; concurrent use by
 * the task's calls is serialised where it matters (the store's writer).
 */
export class TaskCheckpoints {
  readonly store: CheckpointStore;
  readonly limits: CheckpointLimits;
  private readonly workspace: string;
  private repo: Promise<{ repo: GitRepo | null; note?: string }> | null = null;
  /** The last view of the workspace (a baseline: unchanged files are not read again). */
  private lastView: WorkspaceView | null = null;

  constructor(private readonly options: TaskCheckpointsOptions) {
    this.limits = { ...DEFAULT_CHECKPOINT_LIMITS, ...options.limits };
    let ws = options.workspace;
    try {
      ws = realpathSync(ws);
    } catch {
      /* a workspace that does not exist: paths stay as given */
    }
    this.workspace = ws;
    this.store = new CheckpointStore(options.dir, new GitObjects(ws), { warn: (m) => options.log?.('warn', m), ...(options.recompact === false ? { recompact: false } : {}) });
  }

  private readonly calls = new Map<string, CallCheckpoints>();

  /** The checkpoints of call `callId` (the same object until `release`). */
  forCall(callId: string): CallCheckpoints {
    let c = this.calls.get(callId);
    if (!c) {
      c = new CallCheckpoints(this, callId);
      this.calls.set(callId, c);
    }
    return c;
  }

  /** The call is over: its checkpoints object is let go. */
  release(callId: string): void {
    this.calls.delete(callId);
  }

  storedBytes(): Promise<number> {
    return this.store.storedBytes();
  }

  /** Resolves once the background recompaction of large whole copies has nothing left to do. */
  recompacted(): Promise<void> {
    return this.store.recompacted();
  }

  close(): Promise<void> {
    return this.store.close();
  }

  /** @internal the path recorded for `abs`: workspace-relative, or null when it is outside. */
  relative(abs: string): string | null {
    const rel = relative(this.workspace, abs);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
    return rel.split(sep).join('/');
  }

  /** @internal */
  get root(): string {
    return this.workspace;
  }

  /** @internal the repository git may be run in, found once. */
  repository(): Promise<{ repo: GitRepo | null; note?: string }> {
    this.repo ??= findRepo(this.workspace, this.options.home ?? homedir()).catch(() => ({ repo: null }));
    return this.repo;
  }

  /** @internal */
  get baseline(): WorkspaceView | null {
    return this.lastView;
  }
  set baseline(v: WorkspaceView | null) {
    this.lastView = v;
  }

  /** @internal why a new before-image cannot be kept now (the task's limit), or null. */
  async full(): Promise<string | null> {
    const used = await this.store.storedBytes();
    return used >= this.limits.maxTaskBytes ? `the task's checkpoints reached their limit of ${formatBytes(this.limits.maxTaskBytes)}` : null;
  }

  /** @internal */
  warn(message: string): void {
    this.options.log?.('warn', message);
  }
}

/**
 * The checkpoints of one tool call. `beforeWrite` for each file a Write or Edit changes;
 * `beforeCommand`/`afterCommand` around a command or an MCP tool. `report` says what was kept.
 * Never rejects: what could not be kept is a note (shown on the card), never an exception.
 */
export class CallCheckpoints implements ToolCheckpoints {
  private readonly notes = new Map<string, CheckpointFileNote>();
  /**
   * What this call already recorded per path: the before-image's hash, the planned after, and
   * the file's stamp then (a second call for an unchanged file and the same text reads nothing).
   */
  private readonly recorded = new Map<string, { before: string; after: string; text: string | null; stamp: string }>();
  private before: WorkspaceView | null = null;

  constructor(
    private readonly task: TaskCheckpoints,
    readonly callId: string,
  ) {}

  async beforeWrite(path: string, after: string | null): Promise<void> {
    try {
      await this.keepBeforeWrite(path, after);
    } catch (err) {
      const rel = this.task.relative(path) ?? path;
      this.note(rel, false, `no checkpoint could be kept (${(err as Error).message})`);
      this.task.warn(`checkpoint of ${rel} failed: ${(err as Error).message}`);
    }
  }

  private async keepBeforeWrite(path: string, after: string | null): Promise<void> {
    const { store, limits } = this.task;
    const rel = this.task.relative(path);
    const st = lstatOrNull(path);
    const stamp = st ? `${st.size}:${st.mtimeMs}:${st.ino}:${st.isFile() ? 'f' : 'o'}` : 'none';
    const prior = this.recorded.get(rel ?? path);
    // Taken already (while the log was made durable) for this very file and text: nothing to add.
    if (prior && prior.stamp === stamp && prior.text === after) return;
    const afterImage: FileImage = after === null ? { kind: 'absent' } : imageOf(Buffer.from(after, 'utf8'));
    const afterKey = after === null ? '' : afterImage.kind === 'blob' ? afterImage.hash : '';
    if (rel === null) {
      if (prior) return;
      this.recorded.set(path, { before: '', after: afterKey, text: after, stamp });
      await store.append({ type: 'mark', step: this.callId, path, before: { kind: 'unknown', reason: 'it is outside the workspace' }, after: afterImage });
      await store.sync();
      this.note(path, false, 'outside the workspace: not restorable');
      return;
    }
    let before: FileImage;
    let content: Buffer | null = null;
    if (!st) before = { kind: 'absent' };
    else if (!st.isFile()) before = { kind: 'unknown', reason: 'not a regular file' };
    else if (st.size > limits.maxFileBytes) before = { kind: 'unknown', reason: `larger than the ${formatBytes(limits.maxFileBytes)} checkpoint limit per file` };
    else {
      content = await readFile(path);
      before = imageOf(content);
    }
    const beforeKey = before.kind === 'blob' ? before.hash : before.kind;
    if (prior && prior.before === beforeKey && prior.after === afterKey) return;
    if (content && before.kind === 'blob') {
      const full = await this.task.full();
      const kept = full ? { refused: secretIn(content) ?? full } : await store.putFile(content, rel, before.hash);
      if ('refused' in kept) before = { kind: 'unknown', reason: kept.refused };
    }
    await store.append({ type: 'mark', step: this.callId, path: rel, before, after: afterImage });
    await store.sync();
    this.recorded.set(rel, { before: beforeKey, after: afterKey, text: after, stamp });
    this.note(rel, before.kind !== 'unknown', before.kind === 'unknown' ? before.reason : undefined);
  }

  /** Before a command runs: the workspace as it is (the files that may change are kept). */
  async beforeCommand(): Promise<void> {
    try {
      const { repo, note } = await this.task.repository();
      const full = await this.task.full();
      const keep: Recording = { keep: true, record: full ? async () => ({ kind: 'unknown', reason: full }) : (p, c) => this.keep(p, c) };
      const view = await captureView(this.task.root, repo, this.task.baseline, { maxFileBytes: this.task.limits.maxFileBytes, maxFiles: this.task.limits.maxScanFiles }, keep);
      this.before = view;
      this.task.baseline = view;
      const manifest = await this.task.store.put(Buffer.from(JSON.stringify(view)), '\0manifest');
      await this.task.store.append({
        type: 'command',
        step: this.callId,
        phase: 'start',
        mode: view.mode,
        manifest: manifest.hash,
        ...(view.head ? { head: view.head } : {}),
        notes: [...(note ? [note] : []), ...view.notes],
      });
      await this.task.store.sync();
    } catch (err) {
      this.before = null;
      this.task.warn(`checkpoint before a command failed: ${(err as Error).message}`);
      this.note('(workspace)', false, `the files this command changes could not be checkpointed (${(err as Error).message})`);
    }
  }

  /** After a command: what it changed, each with its before-image. */
  async afterCommand(): Promise<void> {
    const before = this.before;
    if (!before) return;
    try {
      const { repo } = await this.task.repository();
      const limits = { maxFileBytes: this.task.limits.maxFileBytes, maxFiles: this.task.limits.maxScanFiles };
      const identify: Recording = { keep: false, record: async (_p, c) => imageOf(c) };
      const after = await captureView(this.task.root, before.mode === 'git' ? repo : null, before, limits, identify);
      const full = await this.task.full();
      const keep = full ? async (): Promise<FileImage> => ({ kind: 'unknown', reason: full }) : (p: string, c: Buffer) => this.keep(p, c);
      const { changes, notes } = await diffViews(this.task.root, repo, before, after, keep, imageOf, limits);
      for (const c of changes) {
        await this.task.store.append({ type: 'mark', step: this.callId, path: c.path, before: c.before, after: c.after });
        this.note(c.path, c.before.kind !== 'unknown', c.before.kind === 'unknown' ? c.before.reason : undefined);
      }
      const ignored = after.ignored.length ? [`not looked at (changes there are not restored): ${after.ignored.slice(0, 12).join(', ')}${after.ignored.length > 12 ? ', …' : ''}`] : [];
      await this.task.store.append({ type: 'command', step: this.callId, phase: 'end', mode: after.mode, notes: [...after.notes, ...notes, ...ignored] });
      await this.task.store.sync();
      this.task.baseline = after;
    } catch (err) {
      this.task.warn(`checkpoint after a command failed: ${(err as Error).message}`);
      this.note('(workspace)', false, `what this command changed could not be checkpointed (${(err as Error).message})`);
    }
  }

  /** What this call's checkpoints kept and what they could not. */
  async report(): Promise<CallReport> {
    return { files: [...this.notes.values()], storedBytes: await this.task.storedBytes().catch(() => 0) };
  }

  private async keep(path: string, content: Buffer): Promise<FileImage> {
    const kept = await this.task.store.putFile(content, path);
    return 'refused' in kept ? { kind: 'unknown', reason: kept.refused } : { kind: 'blob', hash: kept.hash, size: content.length };
  }

  private note(path: string, kept: boolean, reason?: string): void {
    const prev = this.notes.get(path);
    // A file not kept stays "not kept" for the call, whatever a later record of it says.
    if (prev && !prev.kept) return;
    this.notes.set(path, { path, kept, ...(reason ? { reason } : {}) });
  }
}

function imageOf(content: Buffer): FileImage {
  return { kind: 'blob', hash: hashContent(content), size: content.length };
}

function lstatOrNull(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/**
 * Why a file is not kept when it holds a key or token, when nothing is stored anyway (the task's
 * checkpoints are full): the reason a person is told first. Otherwise `putFile` scans.
 */
function secretIn(content: Buffer): string | null {
  return containsSecret(content.toString('utf8')) ? SECRET_REFUSAL : null;
}
