import { z } from 'zod';
import { PROVIDER_IDS } from '../domain/models';
import { PERMISSION_MODES } from '../domain/permissionModes';

/**
 * Data shapes shared by both directions of the chat protocol that are not task events:
 * permission prompts, history rows, settings, file mentions. Each is defined once, here.
 */

export { PROVIDER_IDS } from '../domain/models';
export { PERMISSION_MODES, PERMISSION_MODE_INFO, SELECTABLE_MODES, type PermissionMode } from '../domain/permissionModes';

export const providerIdSchema = z.enum(PROVIDER_IDS);
export const permissionModeSchema = z.enum(PERMISSION_MODES);

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
  /** The rule that made it ask, if one did (e.g. `Bash(git push:*)` in an ask list). */
  rule: z.string().optional(),
  /** Unparseable, sudo, writes outside the workspace, network tools: the host also shows a modal. */
  risky: z.boolean().optional(),
  /** What "Always allow" would save (the card lets the user edit it), most specific first. */
  suggestedRules: z.array(z.string()).optional(),
});
export type PendingPermission = z.infer<typeof pendingPermissionSchema>;

/** What the user answered. `allowAlways` also saves a rule (see `alwaysAllowSchema`) so later calls it covers are allowed. */
export const permissionChoiceSchema = z.enum(['allow', 'allowAlways', 'deny']);
export type PermissionChoice = z.infer<typeof permissionChoiceSchema>;

/** Where "Always allow" saves its rule: `.keel/settings.local.json` (the default), `.keel/settings.json`, `~/.keel/settings.json`. */
export const RULE_SCOPES = ['local', 'project', 'user'] as const;
export const ruleScopeSchema = z.enum(RULE_SCOPES);
export type RuleScope = z.infer<typeof ruleScopeSchema>;
/** The file each scope saves to, for people (the card shows it). */
export const RULE_SCOPE_FILES: Readonly<Record<RuleScope, string>> = {
  local: '.keel/settings.local.json',
  project: '.keel/settings.json',
  user: '~/.keel/settings.json',
};

/** The rules an "Always allow" answer saves (as the user edited them) and where. The host validates each rule. */
export const alwaysAllowSchema = z.object({ rules: z.array(z.string().min(1).max(2000)).min(1).max(20), where: ruleScopeSchema });
export type AlwaysAllow = z.infer<typeof alwaysAllowSchema>;

/** Status of a task as history shows it (the store's statuses). */
export const TASK_STATUSES = ['running', 'completed', 'interrupted', 'failed', 'aborted'] as const;
export const historyStatusSchema = z.enum(TASK_STATUSES);
export type HistoryStatus = z.infer<typeof historyStatusSchema>;

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
  /** The stored status (a task no live process drives is `interrupted`). */
  status: historyStatusSchema.optional(),
  updatedAt: z.number().nonnegative().optional(),
  /** All tokens of the task (input, output, cache) when only the total is known (stored tasks). */
  totalTokens: z.number().int().nonnegative().optional(),
  /** Driven by this window right now. */
  live: z.boolean().optional(),
  /** Who drives it when another window or process does (then it is read-only here). */
  heldElsewhere: z.string().optional(),
  /** Resume is offered (interrupted, failed or aborted, and not driven elsewhere). */
  resumable: z.boolean().optional(),
  /** The task's workspace folder, set when it is not this window's. */
  otherWorkspace: z.string().optional(),
  /** The model id the task uses (e.g. "claude-sonnet-5-5", "demo"); views show it with `modelLabel`. */
  model: z.string().optional(),
});
export type TaskSummary = z.infer<typeof taskSummarySchema>;

/**
 * A task shown from the store rather than driven by this window: read-only until resumed.
 * `heldElsewhere` names the window or process that runs it (then only Take over is offered,
 * and it succeeds once that lock is stale).
 */
export const storedTaskStateSchema = z.object({
  status: historyStatusSchema,
  resumable: z.boolean(),
  heldElsewhere: z.string().optional(),
  otherWorkspace: z.string().optional(),
});
export type StoredTaskState = z.infer<typeof storedTaskStateSchema>;

/** Export formats of a stored task. */
export const exportFormatSchema = z.enum(['markdown', 'json']);
export type ExportFormat = z.infer<typeof exportFormatSchema>;

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
export const PAGES = ['chat', 'history', 'settings', 'loop', 'memory'] as const;
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
