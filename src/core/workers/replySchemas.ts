import { z } from 'zod';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent } from '../../shared/domain/events';
import type { Usage } from '../../shared/domain/messages';
import { errorCodeSchema, stopReasonSchema, taskEventSchema } from '../../shared/protocol/domainSchemas';
import type { PermissionRequest } from '../permissions/gate';
import type { TurnOutput } from '../machines/turn/types';
import { conversationMessageSchema } from './domainSchemas';
import { PERMISSION_MODES } from '../../shared/domain/permissionModes';

/**
 * Zod schemas of the domain values a worker sends to its host (protocolFromWorker.ts): the
 * events of a task (the conversation events included), a turn's output, an error, a permission
 * request. Only the host validates them; the worker's bundle never loads this file (see
 * domainSchemas.ts for the host → worker values). The assertions at the bottom fail the build
 * when a schema and its domain type drift apart.
 */

/** Every TaskEvent, the conversation events (`message`, `compacted`) included. */
export const fullTaskEventSchema = z.union([
  taskEventSchema,
  z.object({ type: z.literal('message'), taskId: z.string(), message: conversationMessageSchema }),
  z.object({ type: z.literal('compacted'), taskId: z.string(), messages: z.array(conversationMessageSchema), summary: z.boolean() }),
]);

export const keelErrorSchema = z.object({ code: errorCodeSchema, message: z.string(), retryable: z.boolean() });

const count = z.number().int().nonnegative();
export const usageSchema = z.object({ inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheWriteTokens: count });

export const turnOutputSchema = z.object({
  status: z.enum(['done', 'error']),
  stopReason: stopReasonSchema.nullable(),
  messages: z.array(conversationMessageSchema),
  error: keelErrorSchema.nullable(),
  usage: usageSchema,
  costUsd: z.number().nonnegative(),
  compactionFailures: count,
});

/**
 * What `complete` carries: the turn's output without its conversation, which the host already
 * has — it folds the `message` and `compacted` events the worker sent, as a task's log is folded on
 * resume — and the length the worker's conversation has, which the host's must match. A long
 * answer so crosses the channel once, not twice.
 */
export const turnResultSchema = turnOutputSchema.omit({ messages: true }).extend({ messageCount: count });
export type TurnResult = z.infer<typeof turnResultSchema>;

const subjectSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('read'), tool: z.string(), paths: z.array(z.string()), summary: z.string() }),
  z.object({
    kind: z.literal('write'),
    tool: z.string(),
    paths: z.array(z.string()),
    summary: z.string(),
    diff: z.object({ path: z.string(), before: z.string().nullable(), after: z.string() }).optional(),
  }),
  z.object({ kind: z.literal('execute'), tool: z.string(), command: z.string(), cwd: z.string(), summary: z.string() }),
  z.object({ kind: z.literal('network'), tool: z.string(), url: z.string(), summary: z.string() }),
  z.object({ kind: z.literal('task'), tool: z.string(), summary: z.string() }),
  z.object({ kind: z.literal('mcp'), tool: z.string(), server: z.string(), summary: z.string() }),
]);

export const permissionRequestSchema = z.object({
  requestId: z.string().min(1),
  taskId: z.string(),
  toolCallId: z.string(),
  tool: z.string(),
  input: z.unknown(),
  subject: subjectSchema,
  reason: z.string(),
  rule: z.string().optional(),
  risky: z.boolean().optional(),
  suggestedRules: z.array(z.string()).optional(),
  mode: z.enum(PERMISSION_MODES).optional(),
  allowedBy: z.object({ mode: z.enum(PERMISSION_MODES).optional(), rules: z.array(z.string()).optional() }).optional(),
});

// Compile-time drift checks (see src/shared/protocol/domainSchemas.ts for the same pattern).
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<MutuallyAssignable<z.infer<typeof fullTaskEventSchema>, TaskEvent>>();
assertTrue<MutuallyAssignable<z.infer<typeof turnOutputSchema>, TurnOutput>>();
assertTrue<MutuallyAssignable<z.infer<typeof keelErrorSchema>, KeelError>>();
assertTrue<MutuallyAssignable<z.infer<typeof usageSchema>, Usage>>();
// `input` is `unknown` in both; the subject union is checked through the request as a whole.
assertTrue<MutuallyAssignable<z.infer<typeof permissionRequestSchema>, PermissionRequest>>();
