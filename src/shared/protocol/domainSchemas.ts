import { z } from 'zod';
import { ATTACHMENT_KINDS } from '../domain/attachments';
import { ERROR_CODES } from '../domain/errors';
import { RUN_PHASES } from '../domain/events';
import { TASK_STATE_TAGS, TURN_STATE_TAGS } from '../domain/stateTags';
import type { ViewTaskEvent } from '../domain/events';
import type { StopReason } from '../domain/messages';
import type { TaskTranscript, TranscriptItem } from '../domain/transcript';
import { isCardImageSrc, MAX_CARD_IMAGES } from '../domain/toolImages';
import { MAX_TODO_CHARS, MAX_TODOS, TODO_STATUSES } from '../domain/todos';
import { MAX_THUMBNAIL_CHARS } from '../domain/promptImageLimits';

/**
 * Zod schemas mirroring the domain types of src/shared/domain, for validating what crosses the
 * host<->webview boundary. The type assertions at the bottom make the build fail if a schema and
 * its domain type drift apart (in either direction).
 */

const STOP_REASONS = ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal'] as const;

export const errorCodeSchema = z.enum(ERROR_CODES);
export const stopReasonSchema = z.enum(STOP_REASONS);
export const taskStatusSchema = z.enum(['running', 'completed', 'interrupted', 'failed', 'aborted']);
export const streamModeSchema = z.enum(['requesting', 'responding', 'toolInput', 'thinking']);
export const permissionDecisionSchema = z.enum(['allow', 'deny', 'ask']);
export const runPhaseSchema = z.enum(RUN_PHASES);
export const gatekeeperOutcomeSchema = z.enum(['saved', 'rejected', 'skipped']);

const count = z.number().int().nonnegative();
const taskId = z.string();
const toolInput = z.record(z.string(), z.unknown());
/** A tool card's images: only `data:` URLs of checked PNG, JPEG, GIF or WebP data (toolImages.ts), never a server's URL. */
const cardImages = z
  .array(z.object({ src: z.string().refine(isCardImageSrc, 'not a checked image data: URL'), alt: z.string().max(200) }))
  .max(MAX_CARD_IMAGES);

const checkpointFiles = z.array(z.object({ path: z.string(), kept: z.boolean(), reason: z.string().optional() })).max(10_000);
const rewindScope = z.enum(['both', 'files', 'conversation']);
const rewoundFiles = z
  .array(z.object({ path: z.string(), outcome: z.enum(['restored', 'removed', 'keptYours', 'notRestorable']), reason: z.string().optional() }))
  .max(100_000);
const rewindFields = {
  id: z.string(),
  action: z.enum(['rewind', 'fork']),
  step: count,
  stepId: z.string(),
  scope: rewindScope,
  label: z.string(),
  files: rewoundFiles,
  forkedFrom: z.object({ taskId: z.string(), step: count }).optional(),
  forkedTo: z.string().optional(),
};
/** What a view shows of a message's attachment (its chip): never its content. */
export const attachmentSummarySchema = z.object({
  kind: z.enum(ATTACHMENT_KINDS),
  label: z.string().max(2000),
  note: z.string().max(2000).optional(),
  failed: z.boolean().optional(),
});
const attachmentSummaries = z.array(attachmentSummarySchema).max(100);
const attachedImages = z
  .array(
    z.object({
      name: z.string().max(300),
      mediaType: z.string().max(100),
      bytes: count,
      thumbnail: z.string().max(MAX_THUMBNAIL_CHARS).refine(isCardImageSrc, 'not a checked image data: URL').optional(),
    }),
  )
  .max(100);
export const queuedMessageSchema = z.object({
  id: z.string().max(200),
  text: z.string(),
  typed: z.string().optional(),
  attachments: attachmentSummaries.optional(),
  images: attachedImages.optional(),
});
export const todoItemSchema = z.object({ content: z.string().max(MAX_TODO_CHARS), status: z.enum(TODO_STATUSES), activeForm: z.string().max(MAX_TODO_CHARS).optional() });
const todos = z.array(todoItemSchema).max(MAX_TODOS);

/** One schema per `TaskEvent` variant, keyed by its literal `type`. */
export const taskEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('task'), taskId, state: z.string(), title: z.string().optional(), tags: z.array(z.enum(TASK_STATE_TAGS)).max(TASK_STATE_TAGS.length).optional() }),
  z.object({ type: z.literal('turn'), taskId, state: z.string(), turn: count, tags: z.array(z.enum(TURN_STATE_TAGS)).max(TURN_STATE_TAGS.length).optional() }),
  z.object({ type: z.literal('user_message'), taskId, id: z.string(), text: z.string(), typed: z.string().optional(), attachments: attachmentSummaries.optional(), images: attachedImages.optional() }),
  z.object({ type: z.literal('queued'), taskId, message: queuedMessageSchema }),
  z.object({ type: z.literal('unqueued'), taskId, ids: z.array(z.string().max(200)).max(1000), outcome: z.enum(['sent', 'withdrawn', 'returned']) }),
  z.object({ type: z.literal('todos'), taskId, todos }),
  z.object({ type: z.literal('budget'), taskId, capUsd: z.number().nonnegative().nullable(), spentUsd: z.number().nonnegative() }),
  z.object({ type: z.literal('stream'), taskId, mode: streamModeSchema }),
  z.object({ type: z.literal('assistant_start'), taskId, messageId: z.string(), model: z.string() }),
  z.object({ type: z.literal('text'), taskId, delta: z.string() }),
  z.object({ type: z.literal('thinking'), taskId, delta: z.string() }),
  z.object({ type: z.literal('tool_call'), taskId, id: z.string(), name: z.string(), input: toolInput }),
  z.object({ type: z.literal('tool_output'), taskId, id: z.string(), chunk: z.string() }),
  z.object({ type: z.literal('tool_images'), taskId, id: z.string(), images: cardImages }),
  z.object({ type: z.literal('tool_result'), taskId, id: z.string(), is_error: z.boolean(), summary: z.string() }),
  z.object({
    type: z.literal('permission'),
    taskId,
    requestId: z.string(),
    toolCallId: z.string(),
    tool: z.string(),
    decision: permissionDecisionSchema,
    reason: z.string().optional(),
  }),
  z.object({
    type: z.literal('usage'),
    taskId,
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count,
    cacheWriteTokens: count,
    costUsd: z.number().nonnegative(),
    totalCostUsd: z.number().nonnegative(),
  }),
  z.object({ type: z.literal('retry'), taskId, attempt: count, delayMs: z.number().nonnegative(), code: errorCodeSchema, message: z.string() }),
  z.object({ type: z.literal('waiting'), taskId, quietMs: z.number().nonnegative(), stallAfterMs: z.number().nonnegative() }),
  z.object({ type: z.literal('waiting_ended'), taskId }),
  z.object({ type: z.literal('error'), taskId, code: errorCodeSchema, message: z.string(), retryable: z.boolean() }),
  z.object({ type: z.literal('done'), taskId, status: taskStatusSchema, stopReason: stopReasonSchema.nullable() }),
  z.object({ type: z.literal('phase'), taskId, run: count, phase: runPhaseSchema, previous: runPhaseSchema.nullable(), ms: z.number().nonnegative(), failure: z.string().optional() }),
  z.object({ type: z.literal('instructions'), taskId, run: count, files: z.array(z.string()) }),
  z.object({ type: z.literal('memory'), taskId, run: count, hits: z.array(z.object({ file: z.string(), title: z.string(), score: z.number() })), tokens: count }),
  z.object({
    type: z.literal('gatekeeper'),
    taskId,
    run: count,
    decision: gatekeeperOutcomeSchema,
    rule: z.string(),
    reasons: z.array(z.string()),
    file: z.string().optional(),
    title: z.string().optional(),
  }),
  z.object({ type: z.literal('checkpoint'), taskId, toolCallId: z.string(), files: checkpointFiles, storedBytes: count }),
  z.object({ type: z.literal('rewind'), taskId, ...rewindFields, items: z.array(z.lazy(() => transcriptItemSchema)).optional() }),
]);

export const transcriptItemSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user'), id: z.string(), text: z.string(), typed: z.string().optional(), attachments: attachmentSummaries.optional(), images: attachedImages.optional() }),
  z.object({
    kind: z.literal('assistant'),
    id: z.string(),
    model: z.string(),
    text: z.string(),
    thinking: z.string(),
    streaming: z.boolean(),
    interrupted: z.boolean().optional(),
    retried: z.boolean().optional(),
    cancelled: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('tool'),
    id: z.string(),
    name: z.string(),
    input: toolInput,
    output: z.string(),
    images: cardImages.optional(),
    result: z.object({ isError: z.boolean(), summary: z.string() }).optional(),
    permission: z
      .object({ requestId: z.string(), decision: permissionDecisionSchema, reason: z.string().optional() })
      .optional(),
    checkpoint: checkpointFiles.optional(),
  }),
  z.object({ kind: z.literal('error'), id: z.string(), code: errorCodeSchema, message: z.string(), retryable: z.boolean() }),
  z.object({ kind: z.literal('notice'), id: z.string(), text: z.string() }),
  z.object({
    kind: z.literal('context'),
    id: z.string(),
    run: count,
    instructions: z.array(z.string()),
    memories: z.array(z.object({ file: z.string(), title: z.string() })),
  }),
  z.object({
    kind: z.literal('gatekeeper'),
    id: z.string(),
    run: count,
    decision: gatekeeperOutcomeSchema,
    rule: z.string(),
    reasons: z.array(z.string()),
    file: z.string().optional(),
    title: z.string().optional(),
  }),
  z.object({ kind: z.literal('rewind'), ...rewindFields }),
]);

export const taskTranscriptSchema = z.object({
  taskId,
  title: z.string(),
  state: z.string(),
  tags: z.array(z.enum(TASK_STATE_TAGS)).max(TASK_STATE_TAGS.length),
  turnState: z.string(),
  turn: count,
  streamMode: streamModeSchema.nullable(),
  model: z.string(),
  usage: z.object({
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count,
    cacheWriteTokens: count,
    costUsd: z.number().nonnegative(),
  }),
  items: z.array(transcriptItemSchema),
  done: z.boolean(),
  phases: z
    .object({ run: count, phase: runPhaseSchema, durations: z.partialRecord(runPhaseSchema, z.number().nonnegative()), failure: z.string().optional() })
    .optional(),
  checkpointBytes: count.optional(),
  queued: z.array(queuedMessageSchema).max(1000).optional(),
  budget: z.object({ capUsd: z.number().nonnegative().nullable(), spentUsd: z.number().nonnegative() }).optional(),
  todos: todos.optional(),
  waiting: z.object({ quietMs: z.number().nonnegative(), stallAfterMs: z.number().nonnegative() }).optional(),
});

// Compile-time drift checks: each schema's type and its domain type must be mutually assignable.
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assertTrue = <T extends true>(): T | undefined => undefined;
assertTrue<MutuallyAssignable<z.infer<typeof taskEventSchema>, ViewTaskEvent>>();
assertTrue<MutuallyAssignable<z.infer<typeof transcriptItemSchema>, TranscriptItem>>();
assertTrue<MutuallyAssignable<z.infer<typeof taskTranscriptSchema>, TaskTranscript>>();
assertTrue<MutuallyAssignable<z.infer<typeof stopReasonSchema>, StopReason>>();
