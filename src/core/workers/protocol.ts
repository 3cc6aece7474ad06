import * as z from 'zod/mini';
import type { McpToolOutcome } from '../mcp/toolSource';
import {
  conversationMessageSchema,
  mcpNameSchema,
  permissionAnswerSchema,
  permissionModeSchema,
  providerConfigSchema,
  toolResultBlockSchema,
  toolResultContentSchema,
  turnLimitsSchema,
  wireIdSchema,
} from './domainSchemas';
import type { FromWorker } from './protocolFromWorker';
import { approvedHookSchema } from '../hooks/schemas';

/**
 * The host ↔ worker protocol: one JSON object per line (NDJSON) over a Unix domain socket (a named
 * pipe on Windows). Every message is defined once, here, with a literal `type`, and validated with
 * zod on receipt; a line that does not parse, has an unknown type or is longer than the limit
 * breaks the connection (the worker is replaced), it never reaches the machines.
 *
 * Parent → worker: `query`, `cancel`, `shutdown {graceful}`, `health_check` (the worker-pool
 * catalog), plus the answers a query waits for: `permission_answer`, `durable_ok`,
 * `subtask_result`, and `set_mode`; the host's MCP hub answers `mcp_tools`, `mcp_progress`,
 * `mcp_result`.
 * Worker → parent: `ready`, `session`, `message`, `complete`, `error`, `shutdown_ack`,
 * `health_ok {uptime, queriesProcessed}`, plus what must go up to the owner of the task:
 * `permission_request` / `permission_cancel` (a prompt and its withdrawal, by the prompt's id),
 * `durable_request` (a tool runs only once what was published before it is on disk),
 * `subtask_start` (a Task tool call; the host starts the child task), the MCP calls the host's
 * hub makes for the worker: `mcp_list`, `mcp_call`, `mcp_cancel` (workers/mcpHostServer.ts), and
 * from the task's hooks run by the worker: `hook_event`, `hook_log`, `hook_stop`.
 *
 * Two files, one per direction: this one (parent → worker, `toWorkerSchema`, and what both sides
 * share) and protocolFromWorker.ts (worker → parent, `fromWorkerSchema`). A worker validates only
 * what it receives and never loads the other file: every zod schema built costs an idle worker
 * memory (docs/benchmarks.md, pool), so this file and what it uses (domainSchemas.ts,
 * hooks/schemas.ts) build them with `zod/mini` (no method closures per schema; the same checks).
 * A new message type goes, as one `…MessageSchema`, into the
 * file of its direction and into that file's union.
 */
export const PROTOCOL_VERSION = 1;

/** The longest line either side accepts by default (a query carries the whole conversation). */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;

const id = wireIdSchema;

export { HOOK_LOG_MAX_CHARS } from './domainSchemas';

/** What the worker needs to act for the host: the workspace, its tools' environment and the engine's settings. */
export const runtimeConfigSchema = z.object({
  workspace: z.string().check(z.minLength(1)),
  ripgrepPath: z.optional(z.string()),
  settingsFiles: z.array(z.string()),
  sandbox: z.object({
    enabled: z.boolean(),
    excludedCommands: z.optional(z.array(z.string())),
    network: z.optional(z.object({ allowedDomains: z.optional(z.array(z.string())), deniedDomains: z.optional(z.array(z.string())) })),
    writablePaths: z.optional(z.array(z.string())),
    bwrapPath: z.optional(z.string()),
  }),
  /** Variables tool processes keep although Keel would remove them. */
  passEnv: z.array(z.string()),
  /** Keys the host holds (SecretStorage, provider configs): kept out of tool processes and redacted. */
  heldSecrets: z.array(z.string()),
});
export type RuntimeConfig = z.infer<typeof runtimeConfigSchema>;

/**
 * The task's hooks for one query (docs/hooks.md, "Hooks on a worker"): the hooks the host
 * approved (user hooks, the workspace's own once approved), which the worker runs at the points
 * of the turn loop (PreToolUse, PermissionRequest, Notification, PostToolUse, Stop, SubagentStop,
 * PreCompact) with the common fields the host would give them. Absent: no hook point at all.
 */
export const queryHooksSchema = z.object({
  /** `session_id`: the root task's id (a sub-agent's differs from its own `taskId`). */
  sessionId: id,
  /** `transcript_path`: the task's event log, or '' for a task that is not recorded. */
  transcriptPath: z.string().check(z.maxLength(4096)),
  approved: z.array(approvedHookSchema).check(z.maxLength(1000)),
});
export type QueryHooks = z.infer<typeof queryHooksSchema>;

/** One run of a task's turn loop: what the turn machine's input holds, and the provider to use. */
export const turnPayloadSchema = z.object({
  model: z.string(),
  mode: permissionModeSchema,
  messages: z.array(conversationMessageSchema),
  limits: turnLimitsSchema,
  compactionFailures: z.number().check(z.int(), z.nonnegative()),
  run: z.number().check(z.int(), z.nonnegative()),
  /** The task's cost before this run: the worker's usage events carry the task's running total. */
  priorCostUsd: z.number().check(z.nonnegative()),
});

// ── parent → worker ─────────────────────────────────────────────────────────────────────────
export const queryMessageSchema = z.object({
  type: z.literal('query'),
  queryId: id,
  taskId: id,
  runtime: runtimeConfigSchema,
  provider: providerConfigSchema,
  turn: turnPayloadSchema,
  /** The modes of the task's ancestors, nearest first: a subtask is never looser than any of them. */
  parentModes: z.array(permissionModeSchema),
  /** The run's own system parts (instructions files, memories) read by the host; after the base prompt. */
  runSystem: z.optional(z.array(z.string()).check(z.maxLength(64))),
  /** A loop iteration's progress file, which it may write without a prompt (runtime/loopPermission.ts). */
  loopProgressFile: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
  /** The custom command whose run this is narrows its permissions to its allowed-tools (docs/commands.md). */
  narrowing: z.optional(z.object({ command: z.string().check(z.maxLength(300)), rules: z.array(z.string().check(z.maxLength(2000))).check(z.maxLength(200)) })),
  /** The skills the host found and approved for the task (its Skill tool loads only these). */
  skills: z.optional(
    z
      .array(
        z.object({
          name: z.string().check(z.maxLength(100)),
          description: z.string().check(z.maxLength(2000)),
          dir: z.string().check(z.maxLength(4096)),
          path: z.string().check(z.maxLength(4096)),
          linkFree: z.boolean(),
          workspace: z.optional(z.string().check(z.maxLength(4096))),
        }),
      )
      .check(z.maxLength(200)),
  ),
  /** The task has the host's MCP servers: the worker asks the host for their tools and calls them through it. */
  mcp: z.optional(z.boolean()),
  hooks: z.optional(queryHooksSchema),
});
export const cancelMessageSchema = z.object({ type: z.literal('cancel'), queryId: id });
export const shutdownMessageSchema = z.object({ type: z.literal('shutdown'), graceful: z.boolean() });
export const healthCheckMessageSchema = z.object({ type: z.literal('health_check'), id });
export const setModeMessageSchema = z.object({ type: z.literal('set_mode'), queryId: id, mode: permissionModeSchema, parentModes: z.array(permissionModeSchema) });
export const permissionAnswerMessageSchema = z.object({ type: z.literal('permission_answer'), queryId: id, promptId: id, answer: permissionAnswerSchema });
export const durableOkMessageSchema = z.object({ type: z.literal('durable_ok'), queryId: id, requestId: id });
export const subtaskResultMessageSchema = z.object({ type: z.literal('subtask_result'), queryId: id, toolCallId: id, result: toolResultBlockSchema, summary: z.string() });

// MCP through the host's hub (workers/mcpHostServer.ts, workers/mcpRemote.ts).
const mcpName = mcpNameSchema;
/** One MCP tool as the model sees it, with the server and tool it stands for (the worker's `resolveTool`). */
export const mcpToolSchema = z.object({
  name: mcpName,
  server: mcpName,
  tool: mcpName,
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});
export const mcpOutcomeSchema = z.object({ content: toolResultContentSchema, isError: z.boolean(), summary: z.string() });
const mcpTargetSchema = z.object({ name: mcpName, server: mcpName, tool: mcpName });
/** `tools`: what the model is offered; `known`: other names the hub resolves (their server is down: a call is answered "not available"). */
export const mcpToolsMessageSchema = z.object({
  type: z.literal('mcp_tools'),
  queryId: id,
  requestId: id,
  tools: z.array(mcpToolSchema).check(z.maxLength(10_000)),
  known: z.array(mcpTargetSchema).check(z.maxLength(10_000)),
});
export const mcpProgressMessageSchema = z.object({ type: z.literal('mcp_progress'), queryId: id, callId: id, line: z.string().check(z.maxLength(64 * 1024)) });
export const mcpResultMessageSchema = z.object({ type: z.literal('mcp_result'), queryId: id, callId: id, outcome: mcpOutcomeSchema });

export const toWorkerSchema = z.discriminatedUnion('type', [
  queryMessageSchema,
  cancelMessageSchema,
  shutdownMessageSchema,
  healthCheckMessageSchema,
  setModeMessageSchema,
  permissionAnswerMessageSchema,
  durableOkMessageSchema,
  subtaskResultMessageSchema,
  mcpToolsMessageSchema,
  mcpProgressMessageSchema,
  mcpResultMessageSchema,
]);
export type ToWorker = z.infer<typeof toWorkerSchema>;
export type QueryMessage = z.infer<typeof queryMessageSchema>;
export type { FromWorker };

/** Messages of one query, worker → parent (everything that names a query). */
export type QueryReply = Exclude<FromWorker, { type: 'ready' | 'health_ok' | 'shutdown_ack' | 'error' }> | (Extract<FromWorker, { type: 'error' }> & { queryId: string });

/** True for a message that belongs to a query. */
export function isQueryReply(m: FromWorker): m is QueryReply {
  return 'queryId' in m && typeof m.queryId === 'string';
}

export type Validated<T> = { ok: true; message: T } | { ok: false; problem: string };

/** Validates one decoded line against a direction's schema. Never throws. */
export function validate<T>(schema: z.core.$ZodType<T>, value: unknown): Validated<T> {
  const r = z.safeParse(schema, value);
  if (r.success) return { ok: true, message: r.data };
  const type = value && typeof value === 'object' && 'type' in value ? String((value as { type: unknown }).type).slice(0, 40) : '(none)';
  return { ok: false, problem: `invalid message of type ${JSON.stringify(type)}: ${r.error.issues[0]?.message ?? 'does not match the protocol'}` };
}

// Compile-time drift check: what `mcp_result` carries is exactly the hub's outcome.
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<MutuallyAssignable<z.infer<typeof mcpOutcomeSchema>, McpToolOutcome>>();
