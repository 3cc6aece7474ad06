import { createActor, fromPromise, type Actor } from 'xstate';
import type { LoopEvent, LoopStatus, LoopView } from '../../shared/domain/loop';
import type { ActivitySource } from '../events/activityFeed';
import { loopModeMachine, type LoopModeNotice } from '../machines/loopMode/loopMode.machine';
import { acquireTaskLock, type HeldTaskLock } from '../store/taskLock';
import { checkLoopFolder, createLoop, existsLoop, keptProgress, loopPaths, loopSpentUsd, nameProblem, readState, readTextForView, saveState, type LoopState, type StoredLoopSettings } from './files';
import { recordIteration, runIteration, type LoopTaskHost } from './iteration';
import { loopItem, loopPromptFiles, type TrustItem } from '../trust/items';
import { errorMessage } from '../../shared/domain/errors';

export type { LoopTaskHost } from './iteration';

/**
 * Drives one loop (docs/loop.md): the loop-mode machine with real actors over the loop's files,
 * each iteration a fresh task started through the host. One process drives a loop at a time (a
 * lock in its folder); a loop whose process went away (a window reload) is continued from its
 * state.json by `open` + `run`, starting its unfinished iteration again as a new task.
 *
 * `run` and `resume` resolve with the status the loop comes to rest in: complete, stopped (the
 * iteration limit reached before the goal), cancelled or stalled (a stalled loop waits for the person: `resume` or `cancel`). Views subscribe to `view()`
 * snapshots; hosts get LoopEvents through `onEvent`.
 */
export interface LoopRunnerOptions {
  workspace: string;
  host: LoopTaskHost;
  feed?: ActivitySource;
  /** Names the process in the loop's lock ("keel loop", "VS Code window 123"). */
  owner: string;
  onEvent?(e: LoopEvent): void;
  log?(level: 'info' | 'warn' | 'error', message: string): void;
  /**
   * The person's approvals of the workspace (docs/permissions.md, "Trust"): a loop folder is
   * continued (`open`) only as Keel last wrote it or as the person approved it; a folder that
   * came with the repository, or whose goal or guardrails changed since, is refused with
   * `LoopNotApproved`. Keel records the loop's files as its own after each of its writes.
   * Absent: every loop folder is used as it is (a host without approvals).
   */
  trust?: LoopTrust;
}

/** What a loop needs of the workspace's approvals (WorkspaceTrust is one). */
export interface LoopTrust {
  approves(item: { id: string; fingerprint: string }): boolean;
  recordOwn(items: readonly TrustItem[]): Promise<void>;
  reportHeld?(items: readonly TrustItem[]): void;
}

/** A loop folder that is not Keel's own as it is now and was not approved. */
export class LoopNotApproved extends Error {
  override readonly name = 'LoopNotApproved';
}

export class LoopBusy extends Error {
  override readonly name = 'LoopBusy';
}

const RESTING: ReadonlySet<string> = new Set(['complete', 'stopped', 'cancelled', 'stalled']);
/** A loop in one of these has ended for good. */
const ENDED: ReadonlySet<LoopStatus> = new Set(['complete', 'stopped', 'cancelled']);

export class LoopRunner {
  private actor: Actor<typeof loopModeMachine> | undefined;
  private lock: HeldTaskLock | undefined;
  private readonly listeners = new Set<(v: LoopView) => void>();
  private waiters: ((s: LoopStatus) => void)[] = [];
  private currentTaskId: string | undefined;
  private disposed = false;

  private constructor(
    private readonly opts: LoopRunnerOptions,
    private readonly state: LoopState,
    private readonly resumed: boolean,
  ) {}

  /** A new loop: creates its folder and files. Throws when the name is taken or not a name. */
  static create(opts: LoopRunnerOptions, name: string, goal: string, settings: StoredLoopSettings): LoopRunner {
    const problem = nameProblem(name);
    if (problem) throw new Error(problem);
    if (!goal.trim()) throw new Error('a loop needs a goal');
    if (existsLoop(opts.workspace, name)) throw new Error(`a loop named "${name}" already exists in ${loopPaths(opts.workspace, name).dir}`);
    const runner = new LoopRunner(opts, createLoop(opts.workspace, name, goal, settings), false);
    runner.recordOwn();
    return runner;
  }

  /**
   * An existing loop, from its state.json (throws when missing or unreadable, and
   * `LoopNotApproved` when its folder is not Keel's own as it is now nor approved).
   */
  static open(opts: LoopRunnerOptions, name: string): LoopRunner {
    const problem = nameProblem(name);
    if (problem) throw new Error(problem);
    if (opts.trust) {
      const item = loopItem(name, loopPromptFiles(opts.workspace, name));
      if (!opts.trust.approves(item)) {
        opts.trust.reportHeld?.([item]);
        throw new LoopNotApproved(
          `the loop folder .keel/loop/${name} came with this workspace, or its goal or guardrails changed since Keel last wrote them: ` +
            'it is used only once you approve the workspace',
        );
      }
    }
    return new LoopRunner(opts, readState(opts.workspace, name), true);
  }

  /** Records the loop's files as Keel's own, as they are after Keel's write. Never throws. */
  private recordOwn(): void {
    const trust = this.opts.trust;
    if (!trust) return;
    const item = loopItem(this.state.name, loopPromptFiles(this.opts.workspace, this.state.name));
    trust.recordOwn([item]).catch((err: unknown) => this.opts.log?.('warn', `loop ${this.state.name}: could not record its files as Keel's own (${errorMessage(err)})`));
  }

  get name(): string {
    return this.state.name;
  }

  get status(): LoopStatus {
    return this.state.status;
  }

  /**
   * Starts (or continues) the loop and resolves when it comes to rest. A loop that already ended
   * resolves at once with its status. Throws LoopBusy when another process drives it.
   */
  run(): Promise<LoopStatus> {
    if (ENDED.has(this.state.status)) return Promise.resolve(this.state.status);
    this.takeLock();
    const actor = createActor(this.machine(), { input: { name: this.state.name, iteration: this.state.iteration } });
    this.actor = actor;
    let last = '';
    actor.subscribe({
      next: (s) => {
        const v = typeof s.value === 'string' ? s.value : Object.keys(s.value)[0]!;
        if (v !== last && RESTING.has(v)) this.rest(v as LoopStatus, s.context.reasons);
        last = v;
      },
      error: (err) => this.opts.log?.('error', `loop ${this.state.name}: ${errorMessage(err)}`),
    });
    const resting = this.nextRest();
    actor.start();
    this.emit({ type: 'loop', name: this.state.name, state: this.resumed ? 'resumed' : 'started', iteration: this.state.iteration });
    if (this.state.status === 'stalled') actor.send({ type: 'RESTORE_STALLED', reasons: this.state.reasons });
    else actor.send({ type: 'START' });
    return resting;
  }

  /** A stalled loop goes on (the person stepped in: edited the anchor, the progress or guardrails). */
  resume(): Promise<LoopStatus> {
    if (!this.actor || this.state.status !== 'stalled') return Promise.resolve(this.state.status);
    // The stall counters start again: the next verdicts judge what the person changed.
    this.state.stopReasons = [];
    this.state.progressDigests = [this.state.progressDigests.at(-1) ?? ''];
    const resting = this.nextRest();
    this.actor.send({ type: 'RESUME' });
    return resting;
  }

  /** Cancels the loop and the iteration running now. */
  cancel(): void {
    if (this.actor) this.actor.send({ type: 'CANCEL' });
    else if (!ENDED.has(this.state.status)) this.rest('cancelled');
  }

  /** Lets go of the loop without changing its status (the window closes; it continues after a reload). */
  dispose(): void {
    // An iteration cut off here (a budget pause, a signal, the window closing) keeps what it spent.
    if (this.lock && this.state.iterations.some((i) => i.endedAt === undefined && i.costUsd !== undefined)) {
      try {
        saveState(this.opts.workspace, this.state);
      } catch (err) {
        this.opts.log?.('error', `loop ${this.state.name}: could not save what its cut-off iteration spent: ${errorMessage(err)}`);
      }
    }
    this.disposed = true;
    this.actor?.stop();
    this.actor = undefined;
    this.lock?.release();
    this.lock = undefined;
    this.listeners.clear();
  }

  /** What the loop has spent so far, cut-off iterations included (its budget starts from this). */
  spentUsd(): number {
    return loopSpentUsd(this.state);
  }

  view(): LoopView {
    const s = this.state;
    return {
      name: s.name,
      goal: readTextForView(this.opts.workspace, loopPaths(this.opts.workspace, s.name).anchor).trim(),
      status: s.status,
      iteration: s.iteration,
      settings: {
        maxIterations: s.settings.maxIterations,
        stopWord: s.settings.stopWord,
        checkpoints: s.settings.checkpoints,
        ...(s.settings.promise !== undefined ? { promise: s.settings.promise } : {}),
      },
      reasons: s.reasons,
      initialProgress: keptProgress(this.opts.workspace, s.name, 0) ?? '',
      iterations: s.iterations.map((i) => {
        const progress = i.endedAt ? keptProgress(this.opts.workspace, s.name, i.n) : undefined;
        return {
          n: i.n,
          taskId: i.taskId,
          startedAt: i.startedAt,
          reasons: i.reasons,
          ...(i.endedAt !== undefined ? { endedAt: i.endedAt } : {}),
          ...(i.status !== undefined ? { status: i.status } : {}),
          ...(i.stopReason !== undefined ? { stopReason: i.stopReason } : {}),
          ...(i.verdict !== undefined ? { verdict: i.verdict } : {}),
          ...(i.checkpoint ? { checkpoint: i.checkpoint } : {}),
          ...(i.costUsd !== undefined ? { costUsd: i.costUsd } : {}),
          ...(progress !== undefined ? { progress } : {}),
        };
      }),
      ...(this.currentTaskId && (s.status === 'active' || s.status === 'continuing') ? { currentTaskId: this.currentTaskId } : {}),
    };
  }

  subscribe(listener: (v: LoopView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private machine() {
    const ctx = {
      workspace: this.opts.workspace,
      state: this.state,
      host: this.opts.host,
      ...(this.opts.feed ? { feed: this.opts.feed } : {}),
      started: (taskId: string) => {
        this.currentTaskId = taskId;
        this.emit({ type: 'loop', name: this.state.name, state: 'iteration', iteration: this.state.iterations.at(-1)?.n ?? this.state.iteration + 1, taskId });
      },
      guardrail: (pattern: string) => this.emit({ type: 'loop', name: this.state.name, state: 'guardrail', iteration: this.state.iteration + 1, pattern }),
      checkpoint: (ref: string, commit: string) => this.emit({ type: 'loop', name: this.state.name, state: 'checkpoint', iteration: this.state.iteration + 1, ref, commit }),
      log: (level: 'info' | 'warn', message: string) => this.opts.log?.(level, message),
    };
    return loopModeMachine.provide({
      actors: {
        runIteration: fromPromise(({ input, signal }) => runIteration(ctx, input.n, signal)),
        recordIteration: fromPromise(async ({ input }) => {
          const out = await recordIteration(ctx, input.n, input.end);
          // The guardrails Keel just appended are its own.
          this.recordOwn();
          return out;
        }),
        prepareNext: fromPromise(async () => {
          this.state.status = 'active';
          saveState(this.opts.workspace, this.state);
        }),
      },
      actions: { notify: (_: unknown, n: LoopModeNotice) => this.notice(n) },
    });
  }

  private notice(n: LoopModeNotice): void {
    if (n.kind === 'judged') this.emit({ type: 'loop', name: this.state.name, state: 'judged', iteration: n.iteration, verdict: n.verdict, reasons: n.reasons });
    this.changed();
  }

  private rest(status: LoopStatus, reasons: readonly string[] = []): void {
    // A stall the judge did not record (the iteration could not be recorded: a link, the disk) says why in state.json too.
    const unrecorded = status === 'stalled' && reasons.length > 0 && reasons.join('\n') !== this.state.reasons.join('\n');
    if (this.state.status !== status || unrecorded) {
      this.state.status = status;
      if (status === 'cancelled') this.state.reasons = ['cancelled by the person'];
      if (unrecorded) this.state.reasons = [...reasons];
      try {
        saveState(this.opts.workspace, this.state);
      } catch (err) {
        this.opts.log?.('error', `loop ${this.state.name}: could not save its state: ${errorMessage(err)}`);
      }
    }
    this.currentTaskId = undefined;
    this.emit({ type: 'loop', name: this.state.name, state: status, iteration: this.state.iteration, reasons: this.state.reasons });
    if (status !== 'stalled') {
      this.lock?.release();
      this.lock = undefined;
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(status);
  }

  private nextRest(): Promise<LoopStatus> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private takeLock(): void {
    if (this.lock) return;
    // The lock writes into the loop's folder: nothing there may lead elsewhere.
    checkLoopFolder(this.opts.workspace, this.state.name);
    const attempt = acquireTaskLock(loopPaths(this.opts.workspace, this.state.name).dir, this.opts.owner);
    if (!attempt.ok) throw new LoopBusy(`loop "${this.state.name}" is being run by ${attempt.owner ? `${attempt.owner.label} (pid ${attempt.owner.pid})` : 'another process'}`);
    this.lock = attempt.lock;
  }

  private emit(e: LoopEvent): void {
    if (this.disposed) return;
    try {
      this.opts.onEvent?.(e);
    } catch (err) {
      this.opts.log?.('warn', `a loop listener threw: ${errorMessage(err)}`);
    }
    this.changed();
  }

  private changed(): void {
    if (this.disposed) return;
    const v = this.view();
    for (const l of this.listeners) {
      try {
        l(v);
      } catch (err) {
        this.opts.log?.('warn', `a loop view listener threw: ${errorMessage(err)}`);
      }
    }
  }
}
