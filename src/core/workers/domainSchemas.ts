import * as z from 'zod/mini';
import type { ConversationMessage, ToolResultBlock } from '../../shared/domain/messages';
import { PERMISSION_MODES } from '../../shared/domain/permissionModes';
import type { PermissionAnswer } from '../permissions/gate';
import type { ProviderConfig } from '../providers/types';
import type { TurnLimits } from '../machines/turn/types';

/**
 * Zod schemas of the domain values a host sends to a worker (protocol.ts, parent → worker): the
 * conversation, a turn's limits, a permission answer, a provider config, a permission mode.
 * What a worker sends back (task events, a turn's output, a permission request) is in
 * replySchemas.ts: a worker validates only what it receives, so it never builds those (nor the
 * webview protocol's schemas they use) — each zod schema costs an idle worker memory
 * (docs/benchmarks.md, pool). Built with `zod/mini`, like protocol.ts: a classic zod schema
 * carries dozens of method closures, a mini one none; the checks are the same. The assertions at the bottom fail the build when a schema and its
 * domain type drift apart.
 */

/** An id on the wire (query, task, prompt, request, tool call), in both directions. */
export const wireIdSchema = z.string().check(z.minLength(1), z.maxLength(200));

/** An MCP server's, tool's or tool name's on the wire (MCP calls through the host's hub), in both directions. */
export const mcpNameSchema = z.string().check(z.minLength(1), z.maxLength(1000));

/** The same values as the webview protocol's `permissionModeSchema` (shared/protocol/chatMessages.ts). */
export const permissionModeSchema = z.enum(PERMISSION_MODES);

const text = z.object({ type: z.literal('text'), text: z.string() });
const image = z.object({
  type: z.literal('image'),
  source: z.object({ type: z.literal('base64'), media_type: z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']), data: z.string() }),
});
// Usually text; text and image blocks when an MCP tool returned images.
const toolResultContent = z.union([z.string(), z.array(z.discriminatedUnion('type', [text, image]))]);
export const toolResultContentSchema = toolResultContent;
const toolResult = z.object({ type: z.literal('tool_result'), tool_use_id: z.string(), content: toolResultContent, is_error: z.optional(z.boolean()) });
const toolUse = z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) });
const thinking = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redacted = z.object({ type: z.literal('redacted_thinking'), data: z.string() });

export const toolResultBlockSchema = toolResult;
export const conversationMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.array(z.discriminatedUnion('type', [text, toolResult, image])) }),
  z.object({ role: z.literal('assistant'), content: z.array(z.discriminatedUnion('type', [text, thinking, redacted, toolUse])) }),
]);

const count = z.number().check(z.int(), z.nonnegative());

export const turnLimitsSchema = z.object({
  maxTurns: z.number().check(z.int(), z.positive()),
  maxTokens: z.number().check(z.int(), z.positive()),
  contextLimit: z.number().check(z.positive()),
  retryLimit: count,
  retryBaseMs: z.number().check(z.nonnegative()),
  maxRetryDelayMs: z.optional(z.number().check(z.nonnegative())),
  lockTimeoutMs: z.number().check(z.nonnegative()),
  thinkingBudgetTokens: z.optional(z.number().check(z.int(), z.positive())),
});

export const permissionAnswerSchema = z.object({
  decision: z.enum(['allow', 'deny']),
  feedback: z.optional(z.string()),
  deniedBecause: z.optional(z.string()),
  always: z.optional(z.object({ rules: z.array(z.string()), where: z.enum(['project', 'local', 'user']) })),
  review: z.optional(
    z.object({
      content: z.string(),
      hunks: z.number().check(z.int(), z.nonnegative()),
      accepted: z.array(z.number().check(z.int(), z.positive())),
      rejected: z.array(z.number().check(z.int(), z.positive())),
      edited: z.array(z.number().check(z.int(), z.positive())),
      edits: z.array(z.object({ hunk: z.number().check(z.int(), z.positive()), lines: z.array(z.string()) })),
    }),
  ),
});

export const providerConfigSchema = z.object({
  provider: z.enum(['anthropic', 'openai-compatible', 'demo']),
  model: z.string(),
  baseUrl: z.optional(z.string()),
  apiKey: z.optional(z.string()),
  stallTimeoutMs: z.optional(z.number().check(z.positive())),
  headerTimeoutMs: z.optional(z.number().check(z.positive())),
});

// Compile-time drift checks (see src/shared/protocol/domainSchemas.ts for the same pattern).
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<MutuallyAssignable<z.infer<typeof conversationMessageSchema>, ConversationMessage>>();
assertTrue<MutuallyAssignable<z.infer<typeof toolResultBlockSchema>, ToolResultBlock>>();
assertTrue<MutuallyAssignable<z.infer<typeof permissionAnswerSchema>, PermissionAnswer>>();
assertTrue<MutuallyAssignable<z.infer<typeof turnLimitsSchema>, TurnLimits>>();
assertTrue<MutuallyAssignable<z.infer<typeof providerConfigSchema>, ProviderConfig>>();
// The same keys too: an optional field the schema lacks passes the check above, and parsing then
// drops it silently (a worker ran with the default response timeout the person had raised, and
// without a test's cap on the retry wait).
assertTrue<MutuallyAssignable<keyof z.infer<typeof conversationMessageSchema>, keyof ConversationMessage>>();
assertTrue<MutuallyAssignable<keyof z.infer<typeof permissionAnswerSchema>, keyof PermissionAnswer>>();
assertTrue<MutuallyAssignable<keyof z.infer<typeof turnLimitsSchema>, keyof TurnLimits>>();
assertTrue<MutuallyAssignable<keyof z.infer<typeof providerConfigSchema>, keyof ProviderConfig>>();

/** The longest hook message a worker sends up (it cuts longer ones: hook output is untrusted). */
export const HOOK_LOG_MAX_CHARS = 64 * 1024;
