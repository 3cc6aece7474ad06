import { z } from 'zod';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent } from '../../shared/domain/events';
import type { ConversationMessage, ToolResultBlock, Usage } from '../../shared/domain/messages';
import { errorCodeSchema, stopReasonSchema, taskEventSchema } from '../../shared/protocol/domainSchemas';
import { permissionModeSchema } from '../../shared/protocol/chatMessages';
import type { PermissionAnswer, PermissionRequest } from '../permissions/gate';
import type { ProviderConfig } from '../providers/types';
import type { TurnLimits, TurnOutput } from '../machines/turn/types';

/**
 * Zod schemas of the domain values that cross the worker boundary and that the webview protocol
 * does not carry: the conversation, the conversation events of a task, a turn's output, a
 * permission request and its answer, a provider config. The assertions at the bottom fail the
 * build when a schema and its domain type drift apart.
 */

const text = z.object({ type: z.literal('text'), text: z.string() });
const image = z.object({
  type: z.literal('image'),
  source: z.object({ type: z.literal('base64'), media_type: z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']), data: z.string() }),
});
// Usually text; text and image blocks when an MCP tool returned images.
const toolResultContent = z.union([z.string(), z.array(z.discriminatedUnion('type', [text, image]))]);
export const toolResultContentSchema = toolResultContent;
const toolResult = z.object({ type: z.literal('tool_result'), tool_use_id: z.string(), content: toolResultContent, is_error: z.boolean().optional() });
const toolUse = z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) });
const thinking = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redacted = z.object({ type: z.literal('redacted_thinking'), data: z.string() });

export const toolResultBlockSchema = toolResult;
export const conversationMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.array(z.discriminatedUnion('type', [text, toolResult])) }),
  z.object({ role: z.literal('assistant'), content: z.array(z.discriminatedUnion('type', [text, thinking, redacted, toolUse])) }),
]);

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

export const turnLimitsSchema = z.object({
  maxTurns: z.number().int().positive(),
  maxTokens: z.number().int().positive(),
  contextLimit: z.number().positive(),
  retryLimit: count,
  retryBaseMs: z.number().nonnegative(),
  lockTimeoutMs: z.number().nonnegative(),
  thinkingBudgetTokens: z.number().int().positive().optional(),
});

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
});

export const permissionAnswerSchema = z.object({
  decision: z.enum(['allow', 'deny']),
  feedback: z.string().optional(),
  always: z.object({ rules: z.array(z.string()), where: z.enum(['project', 'local', 'user']) }).optional(),
});

export const providerConfigSchema = z.object({
  provider: z.enum(['anthropic', 'openai-compatible', 'demo']),
  model: z.string(),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  stallTimeoutMs: z.number().positive().optional(),
  maxRetries: count.optional(),
});

export { permissionModeSchema };

// Compile-time drift checks (see src/shared/protocol/domainSchemas.ts for the same pattern).
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<MutuallyAssignable<z.infer<typeof conversationMessageSchema>, ConversationMessage>>();
assertTrue<MutuallyAssignable<z.infer<typeof fullTaskEventSchema>, TaskEvent>>();
assertTrue<MutuallyAssignable<z.infer<typeof turnOutputSchema>, TurnOutput>>();
assertTrue<MutuallyAssignable<z.infer<typeof keelErrorSchema>, KeelError>>();
assertTrue<MutuallyAssignable<z.infer<typeof usageSchema>, Usage>>();
assertTrue<MutuallyAssignable<z.infer<typeof toolResultBlockSchema>, ToolResultBlock>>();
assertTrue<MutuallyAssignable<z.infer<typeof permissionAnswerSchema>, PermissionAnswer>>();
assertTrue<MutuallyAssignable<z.infer<typeof turnLimitsSchema>, TurnLimits>>();
assertTrue<MutuallyAssignable<z.infer<typeof providerConfigSchema>, ProviderConfig>>();
// `input` is `unknown` in both; the subject union is checked through the request as a whole.
assertTrue<MutuallyAssignable<z.infer<typeof permissionRequestSchema>, PermissionRequest>>();
