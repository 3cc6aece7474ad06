import { changedRunFile } from '../trust/items';
import { hookMatches } from './matcher';
import { mergeOutcome } from './outcome';
import { runPromptHook, type PromptHookModel } from './promptHook';
import { runHookCommand } from './runCommand';
import { EMPTY_OUTCOME, type ConfiguredHook, type HookInput, type HookOutcome } from './types';

/**
 * What a task's hook points need from whoever runs hooks: fire one event and get the merged
 * outcome. The host's `HookRunner` (settings files, approvals) and a worker's
 * `ApprovedHooksRunner` (the list the host approved, carried with the query) both are one.
 * `fire` never rejects.
 */
export interface HookFirer {
  /** `model`: what the task's prompt hooks ask (promptHook.ts); without it a prompt hook is an error. */
  fire(input: HookInput, signal?: AbortSignal, model?: PromptHookModel): Promise<HookOutcome>;
}

export interface HookRunContext {
  workspace: string;
  /** The environment of tool processes (no provider keys). */
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  killGraceMs?: number;
  /** The model the task's prompt hooks ask. */
  model?: PromptHookModel | undefined;
}

/**
 * Runs `hooks` (each already allowed to run and matching `input`) in parallel, each in its own
 * process group with its own timeout, and merges their results (outcome.ts). No hooks: the empty
 * outcome, nothing started. Never rejects.
 */
export async function runHooks(hooks: readonly ConfiguredHook[], input: HookInput, ctx: HookRunContext): Promise<HookOutcome> {
  if (hooks.length === 0) return EMPTY_OUTCOME;
  // A file an approved hook runs that changed since its approval was checked: the hook does not
  // start (docs/permissions.md, "Trust"), and the person hears why.
  const stale: string[] = [];
  const fresh = hooks.filter((h) => {
    const changed = changedRunFile(h.runs);
    if (changed) stale.push(`a hook of this workspace did not run: ${changed} changed since it was approved (${h.command})`);
    return !changed;
  });
  const results = await Promise.all(
    fresh.map(async (hook) => ({ hook, result: hook.type === 'prompt' ? await runPromptHook(hook, input, ctx.model, ctx.signal) : await runHookCommand(hook, input, ctx) })),
  );
  const outcome = fresh.length ? mergeOutcome(input.hook_event_name, results) : EMPTY_OUTCOME;
  return stale.length ? { ...outcome, errors: [...outcome.errors, ...stale] } : outcome;
}

/**
 * The hooks a worker runs for one query: exactly the list the host approved and sent with it
 * (docs/hooks.md, "Hooks on a worker"). It never reads a settings file or the approvals: what the
 * host did not send never runs here. Every event is first handed to `announce` (the host's
 * observers hear it, and reports workspace hooks that matched but are not approved).
 */
export interface ApprovedHooksOptions {
  hooks: readonly ConfiguredHook[];
  workspace: string;
  environment(): NodeJS.ProcessEnv;
  announce(input: HookInput): void;
  killGraceMs?: number;
}

export class ApprovedHooksRunner implements HookFirer {
  constructor(private readonly opts: ApprovedHooksOptions) {}

  async fire(input: HookInput, signal: AbortSignal = new AbortController().signal, model?: PromptHookModel): Promise<HookOutcome> {
    try {
      this.opts.announce(input);
    } catch {
      // Announcing is for observers; it never stops the hooks.
    }
    const matching = this.opts.hooks.filter((h) => hookMatches(h, input));
    if (matching.length === 0) return EMPTY_OUTCOME;
    return runHooks(matching, input, {
      workspace: this.opts.workspace,
      env: this.opts.environment(),
      signal,
      model,
      ...(this.opts.killGraceMs !== undefined ? { killGraceMs: this.opts.killGraceMs } : {}),
    });
  }
}
