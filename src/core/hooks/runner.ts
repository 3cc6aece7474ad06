import { homedir } from 'node:os';
import { relative } from 'node:path';
import { FileWatch } from '../permissions/settingsWatch';
import { hookItem, isApproved, type TrustItem, type TrustView } from '../trust/items';
import { hookSources, loadHooksConfig, stampOf, type HookSource, type HooksConfig } from './config';
import { runHooks, type HookFirer } from './execute';
import { hookMatches } from './matcher';
import type { PromptHookModel } from './promptHook';
import { EMPTY_OUTCOME, type ConfiguredHook, type HookInput, type HookOutcome } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Runs the configured hooks of each event a task fires (docs/hooks.md). Every event is first
 * announced to the observers (the status board, the loop judge, the external socket), whether or
 * not a hook is configured for it; then every matching hook that may run (user hooks; the
 * workspace's own once the person approved them, with the content of every file they run:
 * docs/permissions.md, "Trust") runs, all in parallel, each with its own timeout, and their
 * results are merged into one outcome. Workspace hooks that are not approved — new, changed, or
 * running a script that changed since — do not run; they are reported once each through
 * `onUnapproved`. The settings files are watched and re-read when they change. `fire` never
 * rejects.
 */
export interface HookRunnerOptions {
  workspace: string;
  /** The person's approvals of this workspace. */
  trust: TrustView;
  /** Home of the user settings file (`~/.keel/settings.json`). Default: the OS home. */
  home?: string;
  /** The environment of tool processes (no provider keys). Called for every run. */
  environment(): NodeJS.ProcessEnv;
  log?(level: 'info' | 'warn' | 'error', message: string): void;
  /** Workspace hooks that matched an event but are not approved as they are now (each form reported once). */
  onUnapproved?(hooks: ConfiguredHook[], items: TrustItem[]): void;
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
  private readonly watch: FileWatch;
  private readonly home: string;
  private config: HooksConfig;
  private readonly reported = new Set<string>();
  private readonly observers = new Set<HookObserver>();

  constructor(private readonly opts: HookRunnerOptions) {
    this.home = opts.home ?? homedir();
    this.sources = hookSources(opts.workspace, this.home);
    this.watch = new FileWatch(
      this.sources.map((s) => s.path),
      () => stampOf(this.sources),
    );
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

  /** Stops watching the settings files. */
  dispose(): void {
    this.watch.dispose();
  }

  /**
   * Announces `input` and runs its hooks. Aborting `signal` kills running hooks. Never rejects.
   * The outcome's errors are the caller's to report (TaskHooks does, once), not logged here too.
   */
  async fire(input: HookInput, signal: AbortSignal = new AbortController().signal, model?: PromptHookModel): Promise<HookOutcome> {
    await FileWatch.settled();
    const runnable = this.announce(input);
    if (runnable.length === 0) return EMPTY_OUTCOME;
    const outcome = await runHooks(runnable, input, {
      workspace: this.opts.workspace,
      env: this.opts.environment(),
      signal,
      model,
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
    return this.allowed(matching);
  }

  /**
   * Every hook that may run now (user hooks, and the workspace's own as approved), re-read if the
   * files changed: what a worker gets to run for one query. Each carries the digests of the files
   * it runs, checked again right before it starts (execute.ts).
   */
  runnable(): ConfiguredHook[] {
    this.refresh();
    return this.allowed(this.config.hooks);
  }

  /** The hooks among `hooks` that may run now; the others are reported (each form once). */
  private allowed(hooks: readonly ConfiguredHook[]): ConfiguredHook[] {
    const out: ConfiguredHook[] = [];
    const held: { hook: ConfiguredHook; item: TrustItem }[] = [];
    for (const h of hooks) {
      if (h.scope === 'user') {
        out.push(h);
        continue;
      }
      const item = hookItem(h, this.display(h.source), { workspace: this.opts.workspace, home: this.home, ...(process.env.PATH !== undefined ? { pathEnv: process.env.PATH } : {}) });
      if (isApproved(this.opts.trust, item)) out.push({ ...h, runs: item.runs ?? [] });
      else if (!this.reported.has(`${item.id}:${item.fingerprint}`)) held.push({ hook: h, item });
    }
    if (held.length > 0) {
      for (const { item } of held) this.reported.add(`${item.id}:${item.fingerprint}`);
      this.notify(() =>
        this.opts.onUnapproved?.(
          held.map((x) => x.hook),
          held.map((x) => x.item),
        ),
      );
    }
    return out;
  }

  private display(path: string): string {
    const rel = relative(this.opts.workspace, path);
    return rel.startsWith('..') ? path : rel;
  }

  private refresh(): void {
    if (this.watch.changed()) this.config = this.load();
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
      this.opts.log?.('warn', `a hook observer threw: ${errorMessage(err)}`);
    }
  }
}
