import * as z from 'zod/mini';
import { PERMISSION_MODES } from '../../shared/domain/permissionModes';
import { fingerprintOf } from './config';
import { compileMatcher } from './matcher';
import { HOOK_EVENTS, type ConfiguredHook, type HookInput } from './types';

/**
 * The hook values that cross the worker boundary (docs/hooks.md, "Hooks on a worker"), validated
 * on receipt like every protocol message:
 * - host → worker: the hooks the host approved for a query (`approvedHookSchema`). A hook whose
 *   fingerprint does not match its fields, or whose matcher does not compile, fails validation:
 *   the worker runs exactly what the host approved, or nothing.
 * - worker → host: an event the worker's turn fired (`workerHookInputSchema`), for the host's
 *   observers. Only the events that fire inside the turn loop are accepted: a worker cannot
 *   announce a prompt or a session start.
 * Built with `zod/mini` like the protocol they are part of (workers/protocol.ts): a worker builds
 * these at start, and a classic zod schema carries dozens of method closures (docs/benchmarks.md, pool).
 */

const permissionModeSchema = z.enum(PERMISSION_MODES);

// Bounded by the protocol's line limit: a long answer or tool input must not break the connection.
const text = z.string();

export const approvedHookSchema = z.pipe(
  z
    .object({
      event: z.enum(HOOK_EVENTS),
      matcher: z.optional(z.string().check(z.maxLength(10_000))),
      command: z.string().check(z.minLength(1), z.maxLength(100_000)),
      args: z.optional(z.array(z.string().check(z.maxLength(100_000))).check(z.maxLength(1000))),
      timeout: z.optional(z.number().check(z.positive())),
      if: z.optional(z.string().check(z.maxLength(10_000))),
      type: z.optional(z.literal('prompt')),
      model: z.optional(z.string().check(z.maxLength(200))),
      scope: z.enum(['user', 'project', 'local']),
      source: z.string().check(z.maxLength(4096)),
      fingerprint: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
      /** The files it runs with their approved digests: the worker checks them before it starts the hook. */
      runs: z.optional(
        z
          .array(
            z.object({
              path: z.string().check(z.maxLength(4096)),
              display: z.string().check(z.maxLength(4096)),
              digest: z.string().check(z.maxLength(200)),
              inWorkspace: z.boolean(),
              part: z.optional(z.string().check(z.maxLength(4096))),
            }),
          )
          .check(z.maxLength(1000)),
      ),
    })
    .check(
      z.refine((h) => fingerprintOf({ ...h, matcher: h.matcher, timeout: h.timeout }) === h.fingerprint, { message: "a hook's fingerprint does not match its fields" }),
      z.refine((h) => compileMatcher(h.matcher).ok, { message: "a hook's matcher does not compile" }),
    ),
  // JSON has no `undefined`: an omitted matcher or timeout is the hook's own "none".
  z.transform((h): ConfiguredHook => ({ ...h, matcher: h.matcher, timeout: h.timeout })),
);

/** The events a task's turn fires, so the ones that run in the worker that runs the turn. */
export const WORKER_HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'Notification', 'Stop', 'SubagentStop', 'PreCompact', 'PostCompact'] as const;
export type WorkerHookEvent = (typeof WORKER_HOOK_EVENTS)[number];
export type WorkerHookInput = Extract<HookInput, { hook_event_name: WorkerHookEvent }>;

export function isWorkerHookInput(input: HookInput): input is WorkerHookInput {
  return (WORKER_HOOK_EVENTS as readonly string[]).includes(input.hook_event_name);
}

const common = {
  session_id: z.string().check(z.minLength(1), z.maxLength(200)),
  transcript_path: z.string().check(z.maxLength(4096)),
  cwd: z.string().check(z.maxLength(4096)),
  permission_mode: z.optional(permissionModeSchema),
  agent_id: z.optional(z.string().check(z.maxLength(200))),
  agent_type: z.optional(z.string().check(z.maxLength(200))),
};
const toolInput = z.record(z.string(), z.unknown());

export const workerHookInputSchema = z.discriminatedUnion('hook_event_name', [
  z.object({ ...common, hook_event_name: z.literal('PreToolUse'), tool_name: text, tool_input: toolInput, tool_use_id: text }),
  z.object({
    ...common,
    hook_event_name: z.literal('PostToolUse'),
    tool_name: text,
    tool_input: toolInput,
    tool_response: z.unknown(),
    tool_use_id: text,
    duration_ms: z.optional(z.number().check(z.nonnegative())),
  }),
  z.object({
    ...common,
    hook_event_name: z.literal('PostToolUseFailure'),
    tool_name: text,
    tool_input: toolInput,
    tool_use_id: text,
    error: text,
    is_interrupt: z.optional(z.boolean()),
  }),
  z.object({ ...common, hook_event_name: z.literal('PermissionRequest'), tool_name: text, tool_input: toolInput, permission_suggestions: z.optional(z.array(z.unknown())) }),
  z.object({
    ...common,
    hook_event_name: z.literal('Notification'),
    message: text,
    title: z.optional(text),
    notification_type: z.enum(['permission_prompt', 'idle_prompt', 'agent_needs_input', 'agent_completed']),
  }),
  z.object({ ...common, hook_event_name: z.literal('Stop'), stop_hook_active: z.boolean(), last_assistant_message: text }),
  z.object({
    ...common,
    hook_event_name: z.literal('SubagentStop'),
    stop_hook_active: z.boolean(),
    agent_id: z.string().check(z.maxLength(200)),
    agent_type: z.string().check(z.maxLength(200)),
    last_assistant_message: text,
  }),
  z.object({ ...common, hook_event_name: z.literal('PreCompact'), trigger: z.enum(['manual', 'auto']), custom_instructions: text }),
  z.object({ ...common, hook_event_name: z.literal('PostCompact'), trigger: z.enum(['manual', 'auto']), compact_summary: text }),
]);

// Compile-time drift checks: what the schemas accept is what the domain types hold.
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<z.infer<typeof approvedHookSchema> extends ConfiguredHook ? true : false>();
assertTrue<ConfiguredHook extends z.infer<typeof approvedHookSchema> ? true : false>();
assertTrue<z.infer<typeof workerHookInputSchema> extends WorkerHookInput ? true : false>();
assertTrue<WorkerHookInput['hook_event_name'] extends z.infer<typeof workerHookInputSchema>['hook_event_name'] ? true : false>();
