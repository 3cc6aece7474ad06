import { z } from 'zod';
import { permissionRequestSchema, fullTaskEventSchema, keelErrorSchema, turnResultSchema } from './replySchemas';
import { HOOK_LOG_MAX_CHARS, mcpNameSchema as mcpName, wireIdSchema as id } from './domainSchemas';
import { workerHookInputSchema } from '../hooks/schemas';

/**
 * The worker → parent half of the host ↔ worker protocol (protocol.ts has the other half, the
 * common parts and the rules): `ready`, `session`, `message`, `complete`, `error`, `shutdown_ack`,
 * `health_ok`, and what must go up to the owner of the task — `permission_request` /
 * `permission_cancel`, `durable_request`, `subtask_start`, and the MCP calls the host's hub makes
 * for the worker: `mcp_list`, `mcp_call`, `mcp_cancel` (workers/mcpHostServer.ts), and from the
 * task's hooks run by the worker: `hook_event`, `hook_log`, `hook_stop`. Only the host validates these
 * (`fromWorkerSchema`); a worker imports this file for its types only, so its bundle never builds
 * these schemas.
 */

export const readyMessageSchema = z.object({ type: z.literal('ready'), pid: z.number().int().positive(), protocol: z.number().int() });
/** The worker took the query: `warm` when it had served this task before (its caches are hot). */
export const sessionMessageSchema = z.object({ type: z.literal('session'), queryId: id, sessionId: id, warm: z.boolean() });
export const eventMessageSchema = z.object({ type: z.literal('message'), queryId: id, event: fullTaskEventSchema });
/** The turn ended: its output without the conversation (the host folded it from the `message` and `compacted` events; replySchemas.ts). */
export const completeMessageSchema = z.object({ type: z.literal('complete'), queryId: id, output: turnResultSchema });
/** The worker could not run the query at all (not a model failure: those are in `complete`'s output). */
export const errorMessageSchema = z.object({ type: z.literal('error'), queryId: z.optional(id), error: keelErrorSchema });
export const shutdownAckMessageSchema = z.object({ type: z.literal('shutdown_ack') });
export const healthOkMessageSchema = z.object({
  type: z.literal('health_ok'),
  id,
  uptime: z.number().nonnegative(),
  queriesProcessed: z.number().int().nonnegative(),
  rssBytes: z.number().int().nonnegative(),
});
export const permissionRequestMessageSchema = z.object({ type: z.literal('permission_request'), queryId: id, promptId: id, request: permissionRequestSchema });
export const permissionCancelMessageSchema = z.object({ type: z.literal('permission_cancel'), queryId: id, promptId: id });
export const durableRequestMessageSchema = z.object({ type: z.literal('durable_request'), queryId: id, requestId: id });
export const subtaskStartMessageSchema = z.object({ type: z.literal('subtask_start'), queryId: id, toolCallId: id, description: z.string(), prompt: z.string() });
/** A hook event the query's turn fired (before its hooks ran): for the host's observers and its report of unapproved hooks. */
export const hookEventMessageSchema = z.object({ type: z.literal('hook_event'), queryId: id, input: workerHookInputSchema });
/** What a hook wants the person to see (an error, a `systemMessage`, a bounded Stop hook): the host's log. Capped by the worker. */
export const hookLogMessageSchema = z.object({ type: z.literal('hook_log'), queryId: id, level: z.enum(['info', 'warn', 'error']), message: z.string().max(HOOK_LOG_MAX_CHARS) });
/** A hook answered `"continue": false`: the host stops the task (as it would in process), the reason shown. */
export const hookStopMessageSchema = z.object({ type: z.literal('hook_stop'), queryId: id, reason: z.string().max(HOOK_LOG_MAX_CHARS) });

/** The worker asks for the MCP tools of the task (answered by `mcp_tools` with the same `requestId`). */
export const mcpListMessageSchema = z.object({ type: z.literal('mcp_list'), queryId: id, requestId: id });
/**
 * One MCP tool call through the host's hub: `callId` is the worker's id of this call (answered
 * once by `mcp_result`), `toolCallId` the model's tool call it runs (the host's permission
 * re-check matches it against the prompts it answered).
 */
export const mcpCallMessageSchema = z.object({
  type: z.literal('mcp_call'),
  queryId: id,
  callId: id,
  toolCallId: id,
  name: mcpName,
  server: mcpName,
  tool: mcpName,
  arguments: z.record(z.string(), z.unknown()),
});
/** The call's signal aborted in the worker: the host aborts its call (the server gets `notifications/cancelled`). */
export const mcpCancelMessageSchema = z.object({ type: z.literal('mcp_cancel'), queryId: id, callId: id });

export const fromWorkerSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  sessionMessageSchema,
  eventMessageSchema,
  completeMessageSchema,
  errorMessageSchema,
  shutdownAckMessageSchema,
  healthOkMessageSchema,
  permissionRequestMessageSchema,
  permissionCancelMessageSchema,
  durableRequestMessageSchema,
  subtaskStartMessageSchema,
  mcpListMessageSchema,
  mcpCallMessageSchema,
  mcpCancelMessageSchema,
  hookEventMessageSchema,
  hookLogMessageSchema,
  hookStopMessageSchema,
]);
export type FromWorker = z.infer<typeof fromWorkerSchema>;

