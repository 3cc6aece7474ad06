import * as z from 'zod/mini';
import type { McpToolOutcome } from '../mcp/toolSource';
import { approvedHookSchema, workerHookInputSchema } from '../hooks/schemas';
import {
  conversationMessageSchema,
  HOOK_LOG_MAX_CHARS,
  mcpNameSchema,
  permissionAnswerSchema,
  permissionModeSchema,
  providerConfigSchema,
  toolResultBlockSchema,
  toolResultContentSchema,
  turnLimitsSchema,
  wireIdSchema,
} from './domainSchemas';
import { fullTaskEventSchema, permissionRequestSchema, turnResultSchema } from './replySchemas';
import { notification, request, type Declarations, type ParamsOf, type ResultOf } from './rpc';

/**
 * The host ↔ worker protocol, every message declared once: `toWorker` (what the host asks or
 * tells a worker) and `toHost` (what a worker asks or tells its host), each method with its
 * params and, for a request, its result (and progress). rpc.ts carries them — correlation,
 * cancellation and validation on receipt, for both ends — over the worker's channel (channel.ts:
 * NDJSON, long messages in parts, over the socketpair the worker inherits on fd 3). A message
 * that does not match its declaration breaks the connection (the worker is replaced); it never
 * reaches the machines.
 *
 * One query is one run of a task's turn loop on a worker: the host's `query` request, answered
 * by the turn's result; cancelling the request cancels the turn (it still answers, cancelled).
 * What the running turn needs of the task's owner (runtime/turnHost.ts) comes up as the `toHost`
 * methods that name its `queryId`: its events, the permission prompts (by the prompt's id;
 * cancelling the request withdraws the prompt), the durability barrier before a tool, the Task
 * calls, the MCP tools (through the host's hub, which checks each call again), and what the
 * task's hooks report.
 */

/**
 * 4: the budget request, prompt hooks' model calls, checkpoints and per-hunk review on workers
 * (added to the declarations after 3). 3: the typed request/notification layer (rpc.ts). 2: long
 * messages in parts, the channel on fd 3. A worker that speaks another version is not used.
 */
export const PROTOCOL_VERSION = 4;

/**
 * The longest line either side accepts by default. A long message (a query carrying a long
 * conversation, a 50 MB answer) goes in parts of at most ~1.5 MB each (channel.ts), so no line
 * comes near this; the limit on a whole message is the channel's `maxMessageChars`.
 */
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

export { HOOK_LOG_MAX_CHARS };

const id = wireIdSchema;
const count = z.number().check(z.int(), z.nonnegative());

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
  /**
   * The person's approvals of the workspace as the host holds them now (docs/permissions.md,
   * "Trust"): item id → approved fingerprint, and the files whose writes ask in every mode (the
   * scripts of the workspace's hooks and MCP servers), each with its reason. Absent: nothing the
   * workspace provides that loosens is used.
   */
  trust: z.optional(z.object({ approved: z.record(z.string(), z.string()), protectedFiles: z.array(z.tuple([z.string(), z.string()])) })),
  /** The settings files' `env` as the person allowed it, set for every tool process. */
  env: z.optional(z.record(z.string(), z.string())),
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
  compactionFailures: count,
  run: count,
  /** The task's cost before this run: the worker's usage events carry the task's running total. */
  priorCostUsd: z.number().check(z.nonnegative()),
});

/** The `query` request: one run of a task's turn loop. */
export const queryParamsSchema = z.object({
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
  /**
   * The task's checkpoints folder (`tasks/<id>/checkpoints`) and limits: the worker checkpoints
   * what its tools change there itself (content addressing keeps the host's and its writes apart).
   */
  checkpoints: z.optional(
    z.object({
      dir: z.string().check(z.minLength(1), z.maxLength(4096)),
      limits: z.object({ maxFileBytes: z.number().check(z.int(), z.positive()), maxTaskBytes: z.number().check(z.int(), z.positive()), maxScanFiles: z.number().check(z.int(), z.positive()) }),
    }),
  ),
});
export type QueryParams = z.infer<typeof queryParamsSchema>;

/** One MCP tool as the model sees it, with the server and tool it stands for (the worker's `resolveTool`). */
export const mcpToolSchema = z.object({
  name: mcpNameSchema,
  server: mcpNameSchema,
  tool: mcpNameSchema,
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});
export const mcpOutcomeSchema = z.object({ content: toolResultContentSchema, isError: z.boolean(), summary: z.string() });
const mcpTargetSchema = z.object({ name: mcpNameSchema, server: mcpNameSchema, tool: mcpNameSchema });
const ofQuery = { queryId: id };
const empty = z.object({});

/** What the host asks or tells a worker. */
export const toWorker = {
  /** Runs one query; answered with the turn's result (its conversation: the `event`s it sent). */
  query: request(queryParamsSchema, turnResultSchema),
  /** Is it alive, and how big: answered at once. */
  health: request(empty, z.object({ uptime: z.number().check(z.nonnegative()), queriesProcessed: count, rssBytes: count })),
  /** Stop (the running query first): answered once the query has settled; the connection's end then ends the worker. */
  shutdown: request(z.object({ graceful: z.boolean() }), empty),
  /** The query's mode from now on, and its ancestors' (a sub-agent is never looser than any of them). */
  setMode: notification(z.object({ ...ofQuery, mode: permissionModeSchema, parentModes: z.array(permissionModeSchema) })),
  /** A Task call's sub-agent answered (the turn resumes once every call of its answer has). */
  subtaskResult: notification(z.object({ ...ofQuery, toolCallId: id, result: toolResultBlockSchema, summary: z.string() })),
} satisfies Declarations;

/** What a worker asks or tells its host. */
export const toHost = {
  /** The worker is up, on its own pid, speaking this protocol. */
  ready: notification(z.object({ pid: z.number().check(z.int(), z.positive()), protocol: z.number().check(z.int()) })),
  /** The worker took the query: `warm` when it had served this task before (its caches are hot). */
  session: notification(z.object({ ...ofQuery, sessionId: id, warm: z.boolean() })),
  /** One event of the query's turn (the conversation events included). */
  event: notification(z.object({ ...ofQuery, event: fullTaskEventSchema })),
  /** A permission prompt (the request's `requestId` is the prompt's id); cancelling withdraws it. */
  permission: request(z.object({ ...ofQuery, request: permissionRequestSchema }), permissionAnswerSchema),
  /** Answered once everything the query published so far is durable (a tool runs only after). */
  durable: request(z.object(ofQuery), empty),
  /**
   * Whether a priced request of the query's turn may go (the task's budget, docs/cli.md "Budget"):
   * `verdict` null when it may, else the cap, what was spent and the request's worst case.
   */
  budget: request(
    z.object({ ...ofQuery, purpose: z.enum(['answer', 'summary', 'hook']), estimateUsd: z.number().check(z.nonnegative()) }),
    z.object({ verdict: z.nullable(z.object({ capUsd: z.number(), spentUsd: z.number(), estimateUsd: z.number() })) }),
  ),
  /** A Task tool call: the host starts the child task; its answer comes back as `subtaskResult`. */
  subtaskStart: notification(z.object({ ...ofQuery, toolCallId: id, description: z.string(), prompt: z.string() })),
  /** The task's MCP tools: `tools` are offered to the model, `known` the other names the hub resolves (their server is down). */
  mcpList: request(
    z.object(ofQuery),
    z.object({
      tools: z.array(mcpToolSchema).check(z.maxLength(10_000)),
      known: z.array(mcpTargetSchema).check(z.maxLength(10_000)),
      // The servers still starting: a call of one of their tools is told so (mcpCallSubject).
      starting: z.array(z.string().check(z.maxLength(200))).check(z.maxLength(1_000)),
    }),
  ),
  /** One MCP tool call through the host's hub (`toolCallId`: the model's call, for the host's permission re-check); progress lines on the way. */
  mcpCall: request(
    z.object({ ...ofQuery, toolCallId: id, name: mcpNameSchema, server: mcpNameSchema, tool: mcpNameSchema, arguments: z.record(z.string(), z.unknown()) }),
    mcpOutcomeSchema,
    z.string().check(z.maxLength(64 * 1024)),
  ),
  /** A hook event the query's turn fired (before its hooks ran): for the host's observers and its report of unapproved hooks. */
  hookEvent: notification(z.object({ ...ofQuery, input: workerHookInputSchema })),
  /** What a hook wants the person to see (an error, a `systemMessage`): the host's log. Capped by the worker. */
  hookLog: notification(z.object({ ...ofQuery, level: z.enum(['info', 'warn', 'error']), message: z.string().check(z.maxLength(HOOK_LOG_MAX_CHARS)) })),
  /** A hook answered `"continue": false`: the host stops the task (as it would in process), the reason shown. */
  hookStop: notification(z.object({ ...ofQuery, reason: z.string().check(z.maxLength(HOOK_LOG_MAX_CHARS)) })),
} satisfies Declarations;

export type ToWorker = typeof toWorker;
export type ToHost = typeof toHost;
export type QueryResult = ResultOf<ToWorker, 'query'>;
export type HealthAnswer = ResultOf<ToWorker, 'health'>;
export type McpToolsAnswer = ResultOf<ToHost, 'mcpList'>;
export type McpCallParams = ParamsOf<ToHost, 'mcpCall'>;

// Compile-time drift check: what `mcpCall` answers is exactly the hub's outcome.
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<MutuallyAssignable<z.infer<typeof mcpOutcomeSchema>, McpToolOutcome>>();
