import { z } from 'zod';

/**
 * Data shapes shared by both directions of the chat protocol that are not task events:
 * permission prompts, history rows, settings, file mentions. Each is defined once, here.
 */

export const PROVIDER_IDS = ['anthropic', 'openai-compatible', 'demo'] as const;
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;
/** The modes the chat's mode selector offers (the others are settings-only). */
export const SELECTABLE_MODES = ['default', 'acceptEdits', 'plan'] as const;

export const providerIdSchema = z.enum(PROVIDER_IDS);
export const permissionModeSchema = z.enum(PERMISSION_MODES);
export type PermissionMode = z.infer<typeof permissionModeSchema>;

/** A proposed file change, shown as an inline diff on a permission card. `before` null: a new file. */
export const proposedDiffSchema = z.object({ path: z.string(), before: z.string().nullable(), after: z.string() });

/**
 * A tool call waiting for the user's decision. `requestId` is the one id of this prompt: the
 * card, the notification and the answer all carry it.
 */
export const pendingPermissionSchema = z.object({
  requestId: z.string().min(1),
  taskId: z.string(),
  toolCallId: z.string(),
  tool: z.string(),
  input: z.record(z.string(), z.unknown()),
  /** One line saying what the call touches, e.g. "Write src/a.ts" or the command. */
  summary: z.string(),
  /** Why the engine asks, e.g. "editing a file". */
  reason: z.string(),
  diff: proposedDiffSchema.optional(),
});
export type PendingPermission = z.infer<typeof pendingPermissionSchema>;

/** What the user answered. `allowAlways` also allows the same kind of call for the rest of the session. */
export const permissionChoiceSchema = z.enum(['allow', 'allowAlways', 'deny']);
export type PermissionChoice = z.infer<typeof permissionChoiceSchema>;

/** One row of the history page. Times are epoch milliseconds. */
export const taskSummarySchema = z.object({
  taskId: z.string(),
  title: z.string(),
  startedAt: z.number().nonnegative(),
  state: z.string(),
  done: z.boolean(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
  current: z.boolean(),
});
export type TaskSummary = z.infer<typeof taskSummarySchema>;

/** The settings page's view of the configuration. Never contains a key: only whether one is stored. */
export const settingsStateSchema = z.object({
  provider: providerIdSchema,
  model: z.string(),
  anthropicBaseUrl: z.string(),
  openaiBaseUrl: z.string(),
  hasKey: z.object({ anthropic: z.boolean(), 'openai-compatible': z.boolean() }),
});
export type SettingsState = z.infer<typeof settingsStateSchema>;

/** The pages of the chat webview. */
export const PAGES = ['chat', 'history', 'settings'] as const;
export const pageSchema = z.enum(PAGES);
export type Page = z.infer<typeof pageSchema>;

/** Per-task facts the host measured that the transcript does not hold. */
export const transcriptMetaSchema = z.object({
  /** Milliseconds each assistant message spent thinking, by message id. */
  thinkingMs: z.record(z.string(), z.number().nonnegative()),
  /** The model's context window in tokens (200k for Claude). */
  contextWindow: z.number().int().positive(),
  /** Tokens the last model request used of that window (input, cache and output), if known. */
  contextTokens: z.number().int().nonnegative().optional(),
});
export type TranscriptMeta = z.infer<typeof transcriptMetaSchema>;
