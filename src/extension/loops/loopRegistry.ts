import type { ActivityFeed } from '../../core/events/activityFeed';
import { restoreCheckpoint } from '../../core/loop/checkpoint';
import { listLoops, loopDir, uniqueLoopName, type StoredLoopSettings } from '../../core/loop/files';
import { LoopRunner, type LoopTaskHost, type LoopTrust } from '../../core/loop/runner';
import { lockState } from '../../core/store/taskLock';
import type { LoopEvent, LoopStatus } from '../../shared/domain/loop';
import { boundLoop, type LoopPageView, type LoopsState } from '../../shared/protocol/loopMessages';
import { ownerWords } from '../../shared/words/owners';
import type { Logger } from '../logger';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The loops of one window's workspace (docs/loop.md, "In VS Code"): the ones this window drives
 * and the ones only on disk (interrupted by a reload, stalled, finished, or driven by another
 * window or `keel loop`). No 'vscode' here: the extension gives it the task host and shows its
 * results; the loop page and the reload offer read it.
 *
 * Contract: at most one runner per loop name in this window, and a loop is driven only while this
 * window holds the loop's lock (LoopRunner takes it; another holder makes `continue` reject with
 * LoopBusy naming it). Listeners hear every change of a loop this window drives.
 */
export interface LoopRegistryOptions {
  workspace: string;
  /** The window's task host for iterations (loads the runtime; may reject: no provider settings). */
  taskHost(): Promise<LoopTaskHost>;
  /** The window's activity feed, once the runtime exists (hook events reach the judge through it). */
  feed(): ActivityFeed | undefined;
  /** Names this window in loop locks ("VS Code window 123"). */
  owner: string;
  log: Logger;
  /** Asks the person to confirm a restore; resolves true to go on. */
  confirm(message: string, detail: string): Promise<boolean>;
  /**
   * The workspace's approvals (docs/permissions.md, "Trust"): a loop runs from its folder only as
   * Keel last wrote it or as the person approved it. Absent: loops are run as they are.
   */
  trust?(): Promise<LoopTrust | undefined>;
}

interface Entry {
  runner: LoopRunner;
  /** run() was called on it and it has not ended (complete, cancelled) or been let go. */
  driving: boolean;
  unsubscribe(): void;
}

const ENDED: ReadonlySet<LoopStatus> = new Set(['complete', 'stopped', 'cancelled']);

export class LoopRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  private readonly eventListeners = new Set<(e: LoopEvent) => void>();
  /** Loops between Continue and their run taking the lock (the task host loads meanwhile). */
  private readonly starting = new Set<string>();
  private disposed = false;

  constructor(private readonly o: LoopRegistryOptions) {}

  /** Hears every change of a loop this window drives (the page's `loops` message follows it). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hears every loop event of the loops this window drives (progress notifications, the log). */
  onEvent(listener: (e: LoopEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Creates a new loop (a unique name from its goal) and starts it. Resolves once it runs, with its name and the run's end. */
  async start(goal: string, settings: StoredLoopSettings): Promise<{ name: string; done: Promise<LoopStatus> }> {
    const host = await this.o.taskHost();
    const name = uniqueLoopName(this.o.workspace, goal);
    const trust = await this.o.trust?.();
    const runner = LoopRunner.create({ ...this.runnerOptions(host), ...(trust ? { trust } : {}) }, name, goal, settings);
    const entry = this.track(runner);
    entry.driving = true;
    return { name, done: this.settle(entry, runner.run()) };
  }

  /**
   * Goes on with loop `name`: a stalled loop this window drives resumes; a loop nobody drives
   * (interrupted by a reload, or left stalled) is opened from its state.json and run, its cut-off
   * iteration started again as a new task. Rejects with LoopBusy when another window or process
   * drives it, and with an Error when it ended or cannot be read. Resolves with the run's end.
   */
  async continue(name: string): Promise<LoopStatus> {
    const have = this.entries.get(name);
    if (have?.driving) {
      if (have.runner.status !== 'stalled') throw new Error(`loop "${name}" is running`);
      return this.settle(have, have.runner.resume());
    }
    if (this.starting.has(name)) throw new Error(`loop "${name}" is already being continued`);
    this.starting.add(name);
    let runner: LoopRunner;
    let first: Promise<LoopStatus>;
    let wasStalled = false;
    try {
      const host = await this.o.taskHost();
      const trust = await this.o.trust?.();
      // LoopNotApproved when the folder is not Keel's own as it is now: the window offers its review.
      runner = LoopRunner.open({ ...this.runnerOptions(host), ...(trust ? { trust } : {}) }, name);
      if (ENDED.has(runner.status)) throw new Error(`loop "${name}" is ${runner.status}; start a new loop instead`);
      wasStalled = runner.status === 'stalled';
      // run() throws LoopBusy before anything changes when another process holds the loop.
      first = runner.run();
    } finally {
      this.starting.delete(name);
    }
    have?.runner.dispose();
    have?.unsubscribe();
    const entry = this.track(runner);
    entry.driving = true;
    if (!wasStalled) return this.settle(entry, first);
    await first;
    return this.settle(entry, runner.resume());
  }

  /**
   * Cancels loop `name`: the iteration running now is cancelled too. A loop nobody drives is
   * recorded as cancelled; one another process drives is refused (cancel it there). Returns what
   * happened, in words.
   */
  cancel(name: string): string {
    const have = this.entries.get(name);
    if (have?.driving) {
      have.runner.cancel();
      return `Loop "${name}" cancelled.`;
    }
    const lock = lockState(loopDir(this.o.workspace, name));
    if (lock.live) throw new Error(`loop "${name}" is run by ${lock.owner?.label ?? 'another process'}; cancel it there`);
    const runner = LoopRunner.open(this.runnerOptions(undefined), name);
    if (ENDED.has(runner.status)) return `Loop "${name}" had already ended (${runner.status}).`;
    runner.cancel();
    this.changed();
    return `Loop "${name}" cancelled.`;
  }

  /**
   * Writes the files of the checkpoint `commit` of loop `name` back into the work tree, after the
   * person confirmed (core: the branch, HEAD and index are never touched; the current files are
   * kept as a checkpoint first). Refused while an iteration of the loop runs, and for a commit
   * that is not one of the loop's iteration checkpoints. Returns what happened, in words.
   */
  async restore(name: string, commit: string): Promise<string> {
    const view = this.views().find((v) => v.name === name);
    if (!view) throw new Error(`there is no loop named "${name}"`);
    if (this.starting.has(name) || ((view.status === 'active' || view.status === 'continuing') && view.driver !== 'none')) {
      throw new Error(`loop "${name}" is running an iteration; cancel it (or wait until it stalls or ends) before restoring files`);
    }
    const it = view.iterations.find((i) => i.checkpoint?.commit === commit);
    if (!it) throw new Error(`that is not a checkpoint of loop "${name}"`);
    const ok = await this.o.confirm(
      `Restore the workspace's files to loop "${name}" after iteration ${it.n}?`,
      `Files change back to what they were after iteration ${it.n}; files created since are removed. ` +
        'Your branch, HEAD and staged changes are not touched, .keel/loop/ is left as it is, and the current files are kept as a checkpoint first, so this can be undone.',
    );
    if (!ok) return 'Nothing restored.';
    const before = await restoreCheckpoint(this.o.workspace, name, commit);
    this.o.log.info(`loop ${name}: files restored to iteration ${it.n} (${commit.slice(0, 12)}); the files before are ${before.ref}`);
    const undo = `git restore --source=${before.commit.slice(0, 12)} --worktree -- .`;
    return `Files restored to loop "${name}" after iteration ${it.n}. The files before are kept as ${before.ref} (${undo} brings them back without touching the index).`;
  }

  /** Loops of the workspace that say they run but nobody drives: a reload (or a crash) cut them off. */
  interrupted(): Array<{ name: string; iteration: number }> {
    return listLoops(this.o.workspace)
      .states.filter((s) => (s.status === 'active' || s.status === 'continuing') && !this.entries.get(s.name)?.driving && !lockState(loopDir(this.o.workspace, s.name)).live)
      .map((s) => ({ name: s.name, iteration: s.iteration + 1 }));
  }

  /** Every loop of the workspace, as the loop page shows it (newest first). Never throws. */
  state(): LoopsState {
    const { problems } = listLoops(this.o.workspace);
    return { loops: this.views(), problems: problems.slice(0, 50).map((p) => p.slice(0, 1000)), available: true };
  }

  private views(): LoopPageView[] {
    const out: LoopPageView[] = [];
    const { states } = listLoops(this.o.workspace);
    for (const s of states.sort((a, b) => b.createdAt - a.createdAt)) {
      const have = this.entries.get(s.name);
      if (have?.driving) {
        out.push(boundLoop(have.runner.view(), 'here'));
        continue;
      }
      const lock = lockState(loopDir(this.o.workspace, s.name));
      try {
        const view = LoopRunner.open(this.runnerOptions(undefined), s.name).view();
        out.push(boundLoop(view, lock.live ? 'elsewhere' : 'none', lock.live ? ownerWords(lock.owner?.label) : undefined));
      } catch (err) {
        this.o.log.warn(`loop ${s.name}: ${errorMessage(err)}`);
      }
    }
    return out;
  }

  /** Lets go of every loop without changing its status: after a reload they are offered again. */
  dispose(): void {
    this.disposed = true;
    for (const e of this.entries.values()) {
      e.unsubscribe();
      e.runner.dispose();
    }
    this.entries.clear();
    this.listeners.clear();
    this.eventListeners.clear();
  }

  private track(runner: LoopRunner): Entry {
    const entry: Entry = { runner, driving: false, unsubscribe: () => undefined };
    entry.unsubscribe = runner.subscribe(() => this.changed());
    this.entries.set(runner.name, entry);
    return entry;
  }

  private async settle(entry: Entry, run: Promise<LoopStatus>): Promise<LoopStatus> {
    const status = await run;
    if (ENDED.has(status)) {
      entry.driving = false;
      entry.unsubscribe();
      entry.runner.dispose();
    }
    this.changed();
    return status;
  }

  private runnerOptions(host: LoopTaskHost | undefined) {
    const feed = this.o.feed();
    return {
      workspace: this.o.workspace,
      host: host ?? { startIteration: () => { throw new Error('this loop is only shown, not run'); } },
      owner: this.o.owner,
      ...(feed ? { feed } : {}),
      onEvent: (e: LoopEvent) => {
        feed?.publish({ kind: 'loop', at: Date.now(), event: e });
        for (const l of this.eventListeners) l(e);
      },
      log: (level: 'info' | 'warn' | 'error', message: string) => (level === 'error' ? this.o.log.error(message) : level === 'warn' ? this.o.log.warn(message) : this.o.log.info(message)),
    };
  }

  private changed(): void {
    if (this.disposed) return;
    for (const l of this.listeners) {
      try {
        l();
      } catch (err) {
        this.o.log.warn(`a loop listener threw: ${errorMessage(err)}`);
      }
    }
  }
}
