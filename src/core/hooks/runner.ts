import { homedir } from 'node:os';
import { HookApprovals } from './approvals';
import { hookSources, loadHooksConfig, stampOf, type HookSource, type HooksConfig } from './config';
import { runHooks, type HookFirer } from './execute';
import { hookMatches } from './matcher';
import { EMPTY_OUTCOME, type ConfiguredHook, type HookInput, type HookOutcome } from './types';

/**
 * Runs the configured hooks of each event a task fires (docs/hooks.md). Every event is first
 * announced to the observers (the status board, the loop judge, the external socket), whether or
 * not a hook is configured for it; then every matching hook that may run (user hooks; the
 * workspace's own once approved) runs, all in parallel, each with its own timeout, and their
 * results are merged into one outcome. Workspace hooks that are not approved do not run; they are
 * reported once each through `onUnapproved`. The settings files are re-read when they change.
 * `fire` never rejects.
 */
export interface HookRunnerOptions {
  workspace: string;
  /** Where approvals live (`<keel home>/hook-approvals.json`). */
  keelHome: string;
  /** Home of the user settings file (`~/.keel/settings.json`). Default: the OS home. */
  home?: string;
  /** The environment of tool processes (no provider keys). Called for every run. */
  environment(): NodeJS.ProcessEnv;
  log?(level: 'info' | 'warn' | 'error', message: string): void;
  /** Workspace hooks that matched an event but are not approved (each reported once). */
  onUnapproved?(hooks: ConfiguredHook[]): void;
  /** Grace between SIGTERM and SIGKILL for a hook at its timeout. */
  killGraceMs?: number;
}

export type HookObserver = {
  /** An event fired (before its hooks run). */
  event?(input: HookInput): void;
  /** The hooks of an event ran (only when at least one ran). */
  outcome?(input: HookInput, outcome: HookOutcome): void;
};

export class HookRunner implements HookFirer {
  private readonly sources: HookSource[];
  private readonly approvals: HookApprovals;
  private config: HooksConfig;
  private readonly reported = new Set<string>();
  private readonly observers = new Set<HookObserver>();

  constructor(private readonly opts: HookRunnerOptions) {
    this.sources = hookSources(opts.workspace, opts.home ?? homedir());
    this.approvals = new HookApprovals(opts.keelHome, opts.workspace);
    this.config = this.load();
  }

  /** Adds an observer of every event; returns the function that removes it. */
  observe(observer: HookObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** Every configured hook (approved or not), re-read if the files changed. */
  configured(): HooksConfig {
    this.refresh();
    return this.config;
  }

  /** The workspace hooks waiting for approval. */
  pendingApproval(): ConfiguredHook[] {
    return this.approvals.pending(this.configured().hooks);
  }

  /** Approves exactly `hooks` for this workspace (throws on I/O errors). */
  approve(hooks: readonly ConfiguredHook[]): void {
    this.approvals.approve(hooks);
  }

  /**
   * Announces `input` and runs its hooks. Aborting `signal` kills running hooks. Never rejects.
   * The outcome's errors are the caller's to report (TaskHooks does, once), not logged here too.
   */
  async fire(input: HookInput, signal: AbortSignal = new AbortController().signal): Promise<HookOutcome> {
    const runnable = this.announce(input);
    if (runnable.length === 0) return EMPTY_OUTCOME;
    const outcome = await runHooks(runnable, input, {
      workspace: this.opts.workspace,
      env: this.opts.environment(),
      signal,
      ...(this.opts.killGraceMs !== undefined ? { killGraceMs: this.opts.killGraceMs } : {}),
    });
    for (const o of this.observers) this.notify(() => o.outcome?.(input, outcome));
    return outcome;
  }

  /**
   * An event fired here (`fire`) or by a task's turn on a worker (which runs the hooks the host
   * sent it: `runnable`): the observers hear it, and the workspace's hooks it matches that are
   * not approved are reported (once each). Returns the matching hooks that may run. Never throws.
   */
  announce(input: HookInput): ConfiguredHook[] {
    for (const o of this.observers) this.notify(() => o.event?.(input));
    this.refresh();
    const matching = this.config.hooks.filter((h) => hookMatches(h, input));
    if (matching.length === 0) return [];
    const runnable = matching.filter((h) => this.approvals.mayRun(h));
    const unapproved = matching.filter((h) => !runnable.includes(h) && !this.reported.has(h.fingerprint));
    if (unapproved.length > 0) {
      for (const h of unapproved) this.reported.add(h.fingerprint);
      this.notify(() => this.opts.onUnapproved?.(unapproved));
    }
    return runnable;
  }

  /**
   * Every hook that may run now (user hooks, and the workspace's own once approved in their exact
   * form), re-read if the files changed: what a worker gets to run for one query.
   */
  runnable(): ConfiguredHook[] {
    this.refresh();
    return this.config.hooks.filter((h) => this.approvals.mayRun(h));
  }

  private refresh(): void {
    if (stampOf(this.sources) !== this.config.stamp) this.config = this.load();
  }

  private load(): HooksConfig {
    const config = loadHooksConfig(this.sources);
    for (const p of config.problems) {
      if (this.reported.has(p)) continue;
      this.reported.add(p);
      this.opts.log?.('warn', `hooks: ${p}`);
    }
    return config;
  }

  private notify(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.log?.('warn', `a hook observer threw: ${(err as Error).message}`);
    }
  }
}
