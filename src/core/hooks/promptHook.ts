import * as z from 'zod/mini';
import type { HookCommandResult } from './runCommand';
import { hookTimeoutS, type ConfiguredHook, type HookInput } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Claude Code's `"type": "prompt"` hooks (https://code.claude.com/docs/en/hooks, "Prompt-based
 * hooks"): instead of a command, a model judges the event. The hook's `prompt` has `$ARGUMENTS`
 * replaced with the event's JSON (without the placeholder the JSON is appended); the model
 * answers `{"ok": true}` or `{"ok": false, "reason": "…"}`. Not ok acts as a command hook's
 * exit 2 with the reason: a Stop / SubagentStop hook sends the agent back to work with it, a
 * PreToolUse hook denies the call, a UserPromptSubmit hook blocks the prompt, a PermissionRequest
 * hook denies, a PostToolUse hook feeds the reason back with the result. An answer Keel cannot
 * read, a failed call, a timeout, a budget that leaves no room: a visible non-blocking error, as
 * for a command hook that fails (Claude Code's rule for hook errors), so a broken judge never
 * locks a task in a loop nor silently approves anything the rules would not.
 */

/**
 * The model a task's prompt hooks ask (promptModel.ts implements it over the task's provider,
 * its budget and its cost). `ask` never rejects.
 */
export interface PromptHookModel {
  /** `error` says what the person reads, whole ("the model call failed: …", "not asked: …"). */
  ask(request: { system: string; prompt: string; model: string | undefined; signal: AbortSignal }): Promise<{ ok: true; text: string } | { ok: false; error: string }>;
}

/** What the judging model is told, besides the hook's own prompt. */
export const PROMPT_HOOK_SYSTEM =
  'You are a hook of a coding agent: you judge one event of its work against the instructions you are given. ' +
  'Answer with one JSON object and nothing else: {"ok": true} when the condition is met (let the agent go on), or ' +
  '{"ok": false, "reason": "…"} when it is not, with the reason the agent or the person will read.';

/** The prompt the model gets: `$ARGUMENTS` replaced with the event's JSON, or the JSON appended. Pure. */
export function promptText(template: string, input: HookInput): string {
  const json = JSON.stringify(input);
  return template.includes('$ARGUMENTS') ? template.split('$ARGUMENTS').join(json) : `${template}\n\n${json}`;
}

const answerSchema = z.looseObject({ ok: z.boolean(), reason: z.optional(z.string()) });

export type PromptVerdict = { ok: true } | { ok: false; reason: string } | { error: string };

/**
 * Reads the model's answer: one JSON object `{"ok": boolean, "reason"?: string}`, possibly in a
 * code fence or after some words (the first `{` to the last `}`). Anything else is an error. Pure.
 */
export function parsePromptAnswer(text: string): PromptVerdict {
  const t = text.trim();
  const start = t.indexOf('{');
  const end = t.lastIndexOf('}');
  if (start < 0 || end <= start) return { error: `the model did not answer with {"ok": …}: ${clip(t)}` };
  let value: unknown;
  try {
    value = JSON.parse(t.slice(start, end + 1));
  } catch {
    return { error: `the model's answer is not valid JSON: ${clip(t)}` };
  }
  const r = answerSchema.safeParse(value);
  if (!r.success) return { error: `the model's answer has no boolean "ok": ${clip(t)}` };
  if (r.data.ok) return { ok: true };
  const reason = r.data.reason?.trim();
  return { ok: false, reason: reason || 'The prompt hook\'s condition was not met (no reason given).' };
}

/**
 * Runs one prompt hook: asks `model` under the hook's timeout (default 30 s) and `signal`, and
 * returns what a command hook with the same effect would have returned, so the outcome is merged
 * with the command hooks' by the same rules (outcome.ts): ok is exit 0, not ok is exit 2 with
 * the reason, a failure is a non-blocking error. Never rejects.
 */
export async function runPromptHook(hook: ConfiguredHook, input: HookInput, model: PromptHookModel | undefined, signal: AbortSignal): Promise<HookCommandResult> {
  const started = performance.now();
  const base = { stdout: '', truncated: false, timedOut: false, cancelled: false };
  const took = () => Math.round(performance.now() - started);
  if (!model) return { ...base, exitCode: 1, stderr: 'no model is available to this task for prompt hooks', durationMs: took() };
  const timeout = AbortSignal.timeout(Math.round(hookTimeoutS(hook) * 1000));
  const both = AbortSignal.any([signal, timeout]);
  let answer: Awaited<ReturnType<PromptHookModel['ask']>>;
  try {
    answer = await model.ask({ system: PROMPT_HOOK_SYSTEM, prompt: promptText(hook.command, input), model: hook.model, signal: both });
  } catch (err) {
    answer = { ok: false, error: `the model call failed: ${errorMessage(err)}` };
  }
  if (signal.aborted) return { ...base, exitCode: null, stderr: '', cancelled: true, durationMs: took() };
  if (timeout.aborted) return { ...base, exitCode: null, stderr: '', timedOut: true, durationMs: took() };
  if (!answer.ok) return { ...base, exitCode: 1, stderr: answer.error, durationMs: took() };
  const verdict = parsePromptAnswer(answer.text);
  if ('error' in verdict) return { ...base, exitCode: 1, stderr: verdict.error, durationMs: took() };
  if (verdict.ok) return { ...base, exitCode: 0, stderr: '', durationMs: took() };
  return { ...base, exitCode: 2, stderr: verdict.reason, durationMs: took() };
}

function clip(text: string): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > 200 ? `${one.slice(0, 197)}…` : one || '(empty)';
}
