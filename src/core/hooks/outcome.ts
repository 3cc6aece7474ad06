import * as z from 'zod/mini';
import type { HookCommandResult } from './runCommand';
import { HOOK_TEXT_CAP, hookTimeoutS, type ConfiguredHook, type HookEventName, type HookOutcome, type HookRun } from './types';

/**
 * Turns what hook commands did into one `HookOutcome`, with Claude Code's semantics
 * (https://code.claude.com/docs/en/hooks#exit-code-output):
 * - exit 0: stdout is parsed as JSON when it is a JSON object (`continue`, `stopReason`,
 *   `systemMessage`, `decision`/`reason`, `hookSpecificOutput.permissionDecision`,
 *   `…permissionDecisionReason`, `…additionalContext`, `…decision.behavior`); for
 *   UserPromptSubmit and SessionStart other stdout is context for the model;
 * - exit 2: a blocking error, stderr is the reason (fed to the model where the event can block;
 *   shown to the person for SessionStart, SessionEnd and Notification; for PostToolUse fed to the
 *   model next to the result);
 * - any other exit, a timeout, a failure to start: a non-blocking error the person sees.
 * Several hooks: PreToolUse decisions merge most restrictive first (deny > ask > allow); every
 * `additionalContext` is kept. Pure; every text is capped at HOOK_TEXT_CAP characters.
 */
const outputSchema = z.looseObject({
  continue: z.optional(z.boolean()),
  stopReason: z.optional(z.string()),
  systemMessage: z.optional(z.string()),
  decision: z.optional(z.string()),
  reason: z.optional(z.string()),
  hookSpecificOutput: z.optional(
    z.looseObject({
      permissionDecision: z.optional(z.string()),
      permissionDecisionReason: z.optional(z.string()),
      additionalContext: z.optional(z.string()),
      decision: z.optional(z.looseObject({ behavior: z.optional(z.string()), message: z.optional(z.string()), interrupt: z.optional(z.boolean()) })),
    }),
  ),
});

/** Events whose exit code 2 cannot block anything: stderr only goes to the person. */
const UNBLOCKABLE: ReadonlySet<HookEventName> = new Set(['SessionStart', 'SessionEnd', 'Notification']);
/** Events whose plain (non-JSON) stdout is context for the model. */
const STDOUT_IS_CONTEXT: ReadonlySet<HookEventName> = new Set(['UserPromptSubmit', 'SessionStart']);
const RANK = { allow: 0, ask: 1, deny: 2 } as const;

export function cap(text: string, max = HOOK_TEXT_CAP): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters cut)`;
}

export function hookLabel(hook: ConfiguredHook): string {
  const c = hook.command.replace(/\s+/g, ' ').trim();
  return `${hook.event}${hook.type === 'prompt' ? ' prompt' : ''} hook "${c.length > 80 ? `${c.slice(0, 77)}…` : c}"`;
}

export function mergeOutcome(event: HookEventName, results: readonly { hook: ConfiguredHook; result: HookCommandResult }[]): HookOutcome {
  const o: HookOutcome = { additionalContext: [], systemMessages: [], errors: [], runs: [] };
  const blockReasons: string[] = [];
  for (const { hook, result } of results) {
    o.runs.push(runOf(hook, result));
    const label = hookLabel(hook);
    if (result.cancelled) continue;
    if (result.spawnError) {
      o.errors.push(`${label} could not start: ${result.spawnError}`);
      continue;
    }
    if (result.timedOut) {
      o.errors.push(`${label} was stopped at its timeout (${hookTimeoutS(hook)} s); Keel went on without it`);
      continue;
    }
    const stderr = cap(result.stderr.trim());
    if (result.exitCode === 2) {
      const reason = stderr || `${label} exited with code 2`;
      if (UNBLOCKABLE.has(event)) o.errors.push(`${label}: ${reason}`);
      else if (event === 'PostToolUse') o.additionalContext.push(reason);
      else if (event === 'PreToolUse') raisePermission(o, 'deny', reason);
      else if (event === 'PermissionRequest') o.permissionRequest = { behavior: 'deny', message: reason, interrupt: false };
      else blockReasons.push(reason);
      continue;
    }
    if (result.exitCode !== 0) {
      const first = stderr.split('\n')[0] ?? '';
      o.errors.push(`${label} error: Failed with non-blocking status code ${result.exitCode}${first ? `: ${first}` : ''}`);
      continue;
    }
    applyStdout(event, result.stdout, o, blockReasons, label);
  }
  if (blockReasons.length > 0) o.block = { reason: blockReasons.join('\n') };
  if (o.permission?.decision === 'deny') o.block ??= { reason: o.permission.reason };
  if (o.permissionRequest?.behavior === 'deny') o.block ??= { reason: o.permissionRequest.message };
  return o;
}

function applyStdout(event: HookEventName, stdout: string, o: HookOutcome, blockReasons: string[], label: string): void {
  const text = stdout.trim();
  if (text === '') return;
  let json: z.infer<typeof outputSchema> | undefined;
  if (text.startsWith('{')) {
    try {
      const parsed = outputSchema.safeParse(JSON.parse(text));
      if (parsed.success) json = parsed.data;
    } catch {
      // Not JSON (or cut off at the cap): plain output.
    }
  }
  if (!json) {
    if (STDOUT_IS_CONTEXT.has(event)) o.additionalContext.push(cap(text));
    return;
  }
  if (json.continue === false) o.stop ??= { reason: cap(json.stopReason ?? `${label} asked to stop`) };
  if (json.systemMessage) o.systemMessages.push(cap(json.systemMessage));
  const specific = json.hookSpecificOutput;
  if (specific?.additionalContext) o.additionalContext.push(cap(specific.additionalContext));
  if (event === 'PreToolUse') {
    // The deprecated top-level form: "approve" / "block".
    const legacy = json.decision === 'approve' ? 'allow' : json.decision === 'block' ? 'deny' : undefined;
    const decision = specific?.permissionDecision ?? legacy;
    if (decision === 'allow' || decision === 'deny' || decision === 'ask') {
      raisePermission(o, decision, cap(specific?.permissionDecisionReason ?? json.reason ?? `${label} decided ${decision}`));
    }
    return;
  }
  if (event === 'PermissionRequest') {
    const d = specific?.decision;
    if (d?.behavior === 'deny') o.permissionRequest = { behavior: 'deny', message: cap(d.message ?? `${label} denied this`), interrupt: Boolean(d.interrupt) };
    else if (d?.behavior === 'allow' && o.permissionRequest?.behavior !== 'deny') o.permissionRequest = { behavior: 'allow', message: `allowed by ${label}`, interrupt: false };
    return;
  }
  if (json.decision === 'block') blockReasons.push(cap(json.reason ?? `${label} blocked this`));
}

function raisePermission(o: HookOutcome, decision: 'allow' | 'deny' | 'ask', reason: string): void {
  if (!o.permission || RANK[decision] > RANK[o.permission.decision]) o.permission = { decision, reason };
  else if (RANK[decision] === RANK[o.permission.decision] && decision !== 'allow') o.permission = { decision, reason: `${o.permission.reason}\n${reason}` };
}

function runOf(hook: ConfiguredHook, r: HookCommandResult): HookRun {
  return { command: hook.command, source: hook.source, exitCode: r.exitCode, timedOut: r.timedOut, durationMs: r.durationMs, truncated: r.truncated };
}
