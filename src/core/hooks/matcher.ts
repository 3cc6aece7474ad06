import { compileIf } from './ifCondition';
import type { ConfiguredHook, HookInput } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Claude Code's matcher rules (https://code.claude.com/docs/en/hooks#matcher-patterns):
 * - `"*"`, `""` or no matcher: every occurrence;
 * - only letters, digits, `_`, `-`, spaces, `,` and `|`: an exact name, or a list of exact names
 *   separated by `|` or `,` (surrounding spaces ignored);
 * - anything else: a JavaScript regular expression, unanchored (`Edit.*` also matches `NotebookEdit`).
 * What is matched depends on the event (the tool name for tool events, `source` for SessionStart,
 * …); events without matcher support ignore the matcher. Pure.
 */
export type CompiledMatcher = { ok: true; test(value: string): boolean } | { ok: false; error: string };

const EXACT = /^[A-Za-z0-9_\- ,|]*$/;

export function compileMatcher(matcher: string | undefined): CompiledMatcher {
  const m = matcher ?? '';
  if (m === '' || m === '*') return { ok: true, test: () => true };
  if (EXACT.test(m)) {
    const names = m
      .split(/[|,]/)
      .map((s) => s.trim())
      .filter((s) => s !== '');
    return { ok: true, test: (v) => names.includes(v) };
  }
  try {
    const re = new RegExp(m);
    return { ok: true, test: (v) => re.test(v) };
  } catch (err) {
    return { ok: false, error: `matcher ${JSON.stringify(m)} is not a valid regular expression (${errorMessage(err)})` };
  }
}

/** The value an event's matcher is tested against, or null when the event has no matcher support. */
export function matchValue(input: HookInput): string | null {
  switch (input.hook_event_name) {
    case 'PreToolUse':
    case 'PostToolUse':
    case 'PostToolUseFailure':
    case 'PermissionRequest':
      return input.tool_name;
    case 'PostCompact':
      return input.trigger;
    case 'SubagentStart':
      return input.agent_type;
    case 'InstructionsLoaded':
      return input.load_reason;
    case 'SessionStart':
      return input.source;
    case 'SessionEnd':
      return input.reason;
    case 'Notification':
      return input.notification_type;
    case 'PreCompact':
      return input.trigger;
    case 'SubagentStop':
      return input.agent_type;
    case 'UserPromptSubmit':
    case 'Stop':
      return null;
  }
}

/**
 * Whether `hook` runs for `input`: same event, its matcher matches (an invalid regular expression
 * matches nothing), and the call matches its `if` — one permission rule (`Bash(rm -rf *)`), read
 * as ifCondition.ts says (an `if` that is not a rule matches nothing). On events that are not
 * tool events, a hook with `if` never runs (as in Claude Code).
 */
export function hookMatches(hook: ConfiguredHook, input: HookInput): boolean {
  if (hook.event !== input.hook_event_name) return false;
  const value = matchValue(input);
  if (value !== null) {
    const m = compileMatcher(hook.matcher);
    if (!m.ok || !m.test(value)) return false;
  }
  if (hook.if !== undefined) {
    if (!('tool_name' in input)) return false;
    const condition = compileIf(hook.if);
    if (!condition.ok || !condition.test(input.tool_name, input.tool_input, input.cwd)) return false;
  }
  return true;
}
