import { z } from 'zod';
import { taskEventSchema, taskTranscriptSchema } from './domainSchemas';

/**
 * Messages from the extension host to a chat webview. Each is defined once, here, as data.
 *
 * Every message carries `seq`: a per-view sequence number that starts at 1 with the `snapshot`
 * answering a view's `ready` and grows by one per message. A view applies a message only if its
 * seq is higher than the last one it applied; a `snapshot` replaces everything the view shows.
 */

export const PROVIDER_IDS = ['anthropic', 'openai-compatible', 'demo'] as const;
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;

const seq = z.number().int().positive();

/** What the header shows about the configured provider (never a key). */
export const chatConfigSchema = z.object({
  provider: z.enum(PROVIDER_IDS),
  /** Human name of the provider, e.g. "Anthropic". */
  providerLabel: z.string(),
  /** The model label shown when no task says otherwise, e.g. "claude-sonnet-5-5" or "demo model". */
  model: z.string(),
  mode: z.enum(PERMISSION_MODES),
});
export type ChatConfig = z.infer<typeof chatConfigSchema>;

/** The whole state a view shows: the current task's transcript (null: no task open) and config. */
export const snapshotMessageSchema = z.object({
  type: z.literal('snapshot'),
  seq,
  transcript: taskTranscriptSchema.nullable(),
  config: chatConfigSchema,
});

/** One event of the task the snapshot showed; the view folds it with `applyTaskEvent`. */
export const eventMessageSchema = z.object({
  type: z.literal('event'),
  seq,
  event: taskEventSchema,
});

/** A host-level problem that is not part of any task (e.g. no folder open). */
export const hostErrorMessageSchema = z.object({
  type: z.literal('error'),
  seq,
  message: z.string(),
});

export const toWebviewMessageSchema = z.discriminatedUnion('type', [
  snapshotMessageSchema,
  eventMessageSchema,
  hostErrorMessageSchema,
]);

export type SnapshotMessage = z.infer<typeof snapshotMessageSchema>;
export type EventMessage = z.infer<typeof eventMessageSchema>;
export type HostErrorMessage = z.infer<typeof hostErrorMessageSchema>;
export type ToWebviewMessage = z.infer<typeof toWebviewMessageSchema>;
export type ToWebviewType = ToWebviewMessage['type'];

/** A host->webview message before the outbox numbers it. */
export type ToWebviewPayload = ToWebviewMessage extends infer M ? (M extends { seq: number } ? Omit<M, 'seq'> : never) : never;

export type ParseResult<T> = { ok: true; message: T } | { ok: false; error: string };

/** Validates untrusted data as a host->webview message. Never throws. */
export function parseToWebview(data: unknown): ParseResult<ToWebviewMessage> {
  const r = toWebviewMessageSchema.safeParse(data);
  return r.success ? { ok: true, message: r.data } : { ok: false, error: z.prettifyError(r.error) };
}
