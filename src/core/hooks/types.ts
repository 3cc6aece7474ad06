import type { PermissionMode } from '../runtime/types';
import type { RunFile } from '../trust/commandFiles';

/**
 * Hook events as Claude Code names them, with the JSON a command receives on stdin in Claude
 * Code's field names (https://code.claude.com/docs/en/hooks), so a hook written for Claude Code
 * reads what it expects. Keel fires these at the matching points of a task; the same events feed
 * the status board, the loop judge and the external socket.
 */
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
  'SubagentStart',
  'SessionStart',
  'SessionEnd',
  'PreCompact',
  'PostCompact',
  'InstructionsLoaded',
  'Notification',
  'PermissionRequest',
] as const;

export type HookEventName = (typeof HOOK_EVENTS)[number];

export function isHookEventName(name: string): name is HookEventName {
  return (HOOK_EVENTS as readonly string[]).includes(name);
}

/** Fields every event carries. `session_id` is the task id (a sub-agent: its root task's id, plus `agent_id`). */
export interface HookCommonInput {
  session_id: string;
  /** The task's event log (JSONL), or '' for a task that is not recorded. */
  transcript_path: string;
  cwd: string;
  permission_mode?: PermissionMode;
  /** Set inside a sub-agent: the subtask's id and its type. */
  agent_id?: string;
  agent_type?: string;
}

export type HookInput =
  | (HookCommonInput & { hook_event_name: 'PreToolUse'; tool_name: string; tool_input: Record<string, unknown>; tool_use_id: string })
  | (HookCommonInput & {
      hook_event_name: 'PostToolUse';
      tool_name: string;
      tool_input: Record<string, unknown>;
      tool_response: unknown;
      tool_use_id: string;
      duration_ms?: number;
    })
  /** A tool call that failed (its result is an error, or it was cancelled): instead of PostToolUse. */
  | (HookCommonInput & { hook_event_name: 'PostToolUseFailure'; tool_name: string; tool_input: Record<string, unknown>; tool_use_id: string; error: string; is_interrupt?: boolean })
  | (HookCommonInput & { hook_event_name: 'PermissionRequest'; tool_name: string; tool_input: Record<string, unknown>; permission_suggestions?: unknown[] })
  | (HookCommonInput & { hook_event_name: 'UserPromptSubmit'; prompt: string })
  | (HookCommonInput & { hook_event_name: 'Stop'; stop_hook_active: boolean; last_assistant_message: string })
  | (HookCommonInput & {
      hook_event_name: 'SubagentStop';
      stop_hook_active: boolean;
      agent_id: string;
      agent_type: string;
      last_assistant_message: string;
    })
  | (HookCommonInput & { hook_event_name: 'SessionStart'; source: 'startup' | 'resume' | 'clear' | 'compact'; model?: string })
  | (HookCommonInput & { hook_event_name: 'SessionEnd'; reason: 'clear' | 'logout' | 'prompt_input_exit' | 'other' })
  | (HookCommonInput & { hook_event_name: 'PreCompact'; trigger: 'manual' | 'auto'; custom_instructions: string })
  | (HookCommonInput & { hook_event_name: 'PostCompact'; trigger: 'manual' | 'auto'; compact_summary: string })
  /** A sub-agent is about to start (fired in its parent's task, with the sub-agent's id and type). */
  | (HookCommonInput & { hook_event_name: 'SubagentStart'; agent_id: string; agent_type: string })
  /** An instructions file (KEEL.md, CLAUDE.md, AGENTS.md, an import) was read into a run's context. */
  | (HookCommonInput & {
      hook_event_name: 'InstructionsLoaded';
      file_path: string;
      memory_type: 'User' | 'Project';
      load_reason: 'session_start' | 'include';
      parent_file_path?: string;
    })
  | (HookCommonInput & { hook_event_name: 'Notification'; message: string; title?: string; notification_type: NotificationType });

export type NotificationType = 'permission_prompt' | 'idle_prompt' | 'agent_needs_input' | 'agent_completed';

export type HookInputOf<E extends HookEventName> = Extract<HookInput, { hook_event_name: E }>;

/** Where a hook was configured. Project and local files belong to the repository: they run only once approved. */
export type HookScope = 'user' | 'project' | 'local';

/**
 * One handler as configured, with where it came from: a `{"type":"command"}` handler, or (with
 * `type: 'prompt'`) Claude Code's `{"type":"prompt"}` handler, whose `command` holds the prompt
 * text a model answers (promptHook.ts).
 */
export interface ConfiguredHook {
  event: HookEventName;
  /** As written; undefined when omitted. */
  matcher: string | undefined;
  /** The command; for a prompt hook, its prompt text (with `$ARGUMENTS`). */
  command: string;
  /** Set for a prompt hook; absent for a command hook. */
  type?: 'prompt';
  /** A prompt hook's `model`, as written (default: promptModel.ts). */
  model?: string;
  /** Exec form (Claude Code's `args`): `command` is run directly with these arguments, no shell. */
  args?: string[];
  /** Seconds; undefined means the default (60 s). */
  timeout: number | undefined;
  /** Claude Code's `if` (a permission rule): only its tool name is checked (see matcher.ts). */
  if?: string;
  scope: HookScope;
  /** The settings file it came from. */
  source: string;
  /** Stable identity of this hook (event, matcher, command, args, timeout, if; a prompt hook's type and model). */
  fingerprint: string;
  /**
   * For a workspace hook the person approved: the files it runs with their digests when the
   * approval was checked. Each is checked again right before the hook starts; a changed one
   * stops it (docs/permissions.md, "Trust").
   */
  runs?: RunFile[];
}

/** What one handler did. */
export interface HookRun {
  command: string;
  source: string;
  /** Exit code; null when it did not exit by itself (killed at its timeout, cancelled, not started). */
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** Whether stdout or stderr went past the cap (the rest was dropped). */
  truncated: boolean;
}

/**
 * The merged result of every matching hook of one event (docs/hooks.md):
 * - `block`: exit code 2 (stderr is the reason) or `decision: "block"`; for PreToolUse a
 *   `permissionDecision` of deny; for PermissionRequest a `behavior` of deny.
 * - `permission` (PreToolUse): the most restrictive decision, deny > ask > allow.
 * - `permissionRequest` (PermissionRequest): allow or deny on behalf of the person.
 * - `additionalContext`: text for the model, from every hook (UserPromptSubmit and SessionStart:
 *   plain stdout too).
 * - `stop`: `continue: false` — the task stops after this point with `stopReason` shown to the person.
 * - `systemMessages` and `errors`: shown to the person, never to the model.
 */
export interface HookOutcome {
  block?: { reason: string };
  permission?: { decision: 'allow' | 'deny' | 'ask'; reason: string };
  permissionRequest?: { behavior: 'allow' | 'deny'; message: string; interrupt: boolean };
  additionalContext: string[];
  stop?: { reason: string };
  systemMessages: string[];
  errors: string[];
  runs: HookRun[];
}

export const EMPTY_OUTCOME: HookOutcome = Object.freeze({ additionalContext: [], systemMessages: [], errors: [], runs: [] }) as HookOutcome;

/** Default timeout of a command hook, in seconds. */
export const DEFAULT_HOOK_TIMEOUT_S = 60;

/** Default timeout of a prompt hook, in seconds (Claude Code's). */
export const DEFAULT_PROMPT_HOOK_TIMEOUT_S = 30;

/** The events Claude Code runs `"type": "prompt"` hooks for; on the others it is a configuration error. */
export const PROMPT_HOOK_EVENTS: ReadonlySet<HookEventName> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'UserPromptSubmit', 'Stop', 'SubagentStop']);

/** The seconds a hook may run before Keel goes on without it. */
export function hookTimeoutS(hook: Pick<ConfiguredHook, 'timeout' | 'type'>): number {
  return hook.timeout ?? (hook.type === 'prompt' ? DEFAULT_PROMPT_HOOK_TIMEOUT_S : DEFAULT_HOOK_TIMEOUT_S);
}

/** What the model or the person sees of one hook's output at most (Claude Code's cap). */
export const HOOK_TEXT_CAP = 10_000;
