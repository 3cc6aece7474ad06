import { z } from 'zod';
import {
  PROVIDER_IDS,
  pageSchema,
  pendingPermissionSchema,
  permissionChoiceSchema,
  permissionModeSchema,
  settingsStateSchema,
  storedTaskStateSchema,
  taskSummarySchema,
  transcriptMetaSchema,
} from './chatMessages';
import { taskEventSchema, taskTranscriptSchema } from './domainSchemas';
import { loopNameSchema, loopsStateSchema } from './loopMessages';
import { mcpStatusSchema } from './mcpMessages';
import { memoryFileSchema, memoryStateSchema } from './memoryMessages';
import { composerTextMessageSchema, rewindPlanMessageSchema } from './rewindMessages';

export { PERMISSION_MODES, PROVIDER_IDS } from './chatMessages';

/**
 * Messages from the extension host to a chat webview. Each is defined once, here, as data.
 *
 * Every message carries `seq`: a per-view sequence number that starts at 1 with the `snapshot`
 * answering a view's `ready` and grows by one per message. A view applies a message only if its
 * seq is higher than the last one it applied; a `snapshot` replaces everything the view shows.
 */

const seq = z.number().int().positive();

/** What the header shows about the configured provider (never a key). */
export const chatConfigSchema = z.object({
  provider: z.enum(PROVIDER_IDS),
  /** Human name of the provider, e.g. "Anthropic". */
  providerLabel: z.string(),
  /** The model label shown when no task says otherwise, e.g. "claude-sonnet-5-5" or "demo model". */
  model: z.string(),
  /** The permission mode the next task or message uses. */
  mode: permissionModeSchema,
});
export type ChatConfig = z.infer<typeof chatConfigSchema>;

/**
 * The worker process the shown task runs on, or last ran on (docs/workers.md): its id in the
 * pool, the worker machine's state (starting, ready, busy, shuttingDown) and its pid.
 */
export const taskWorkerSchema = z.object({ id: z.string().max(40), state: z.string().max(40), pid: z.number().int().nullable() });
export type TaskWorker = z.infer<typeof taskWorkerSchema>;

/**
 * The whole state a view shows: the current task's transcript (null: no task open), config, the
 * permission prompts waiting for an answer, and host-measured facts about the task.
 */
export const snapshotMessageSchema = z.object({
  type: z.literal('snapshot'),
  seq,
  transcript: taskTranscriptSchema.nullable(),
  config: chatConfigSchema,
  permissions: z.array(pendingPermissionSchema).optional(),
  meta: transcriptMetaSchema.optional(),
  /** Set when the task is shown from the store (read-only until resumed); absent for a live task. */
  stored: storedTaskStateSchema.optional(),
  /** The shown task's worker (workers on: `keel.workers.max` > 0); absent when it has none. */
  worker: taskWorkerSchema.optional(),
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

/** A tool call asks for permission: show a card until `permissionResolved` with the same id. */
export const permissionRequestMessageSchema = z.object({ type: z.literal('permissionRequest'), seq, request: pendingPermissionSchema });

/** The prompt `requestId` was answered (here, in another view, or in the notification) or withdrawn. */
export const permissionResolvedMessageSchema = z.object({
  type: z.literal('permissionResolved'),
  seq,
  requestId: z.string(),
  decision: permissionChoiceSchema,
  /** Where the answer came from: a chat card, the notification, the diff editor, the modal dialog, or the task (cancelled). */
  source: z.enum(['card', 'notification', 'editor', 'dialog', 'task']),
});

/** The host measured how long a message thought (for "Thought for N s"). */
export const thinkingTimeMessageSchema = z.object({ type: z.literal('thinkingTime'), seq, messageId: z.string(), ms: z.number().nonnegative() });

/** This window's tasks for the history page (answers `listTasks`, and after a change). */
export const taskListMessageSchema = z.object({ type: z.literal('taskList'), seq, tasks: z.array(taskSummarySchema) });

/** The settings page's state (answers `getSettings` and follows every change). */
export const settingsMessageSchema = z.object({ type: z.literal('settings'), seq, settings: settingsStateSchema });

/**
 * The answer to `saveSettings`: saved (`ok`, with what now applies) or refused (`ok` false, with
 * why: an invalid base URL, or VS Code could not write the settings). Shown on the settings page.
 */
export const settingsSavedMessageSchema = z.object({ type: z.literal('settingsSaved'), seq, ok: z.boolean(), message: z.string() });

/**
 * One suggestion for the `@` mention being typed: what it is, the text that goes after `@`
 * (`insert`; `partial`: the person goes on typing it, e.g. `https://`), and how the list shows it.
 */
export const mentionItemSchema = z.object({
  kind: z.enum(['file', 'folder', 'problems', 'terminal', 'git', 'url', 'resource']),
  insert: z.string().min(1).max(2000),
  label: z.string().max(2000),
  detail: z.string().max(400).optional(),
  partial: z.boolean().optional(),
});
export type MentionItem = z.infer<typeof mentionItemSchema>;

/** What can be mentioned matching the `@` being typed (answers `mentionQuery` with the same id), best first. */
export const mentionResultsMessageSchema = z.object({
  type: z.literal('mentionResults'),
  seq,
  queryId: z.number().int().nonnegative(),
  items: z.array(mentionItemSchema).max(200),
});

/**
 * One slash command the composer can suggest (docs/commands.md): Keel's built-ins (`/clear`,
 * `/compact`, …), the custom commands of `.claude/commands/` and `.keel/commands/` (the person's
 * and the approved ones of the workspace), and the prompts of ready MCP servers,
 * `mcp__<server>__<prompt>`, with their argument names (a server wrote them: bounded, shown as
 * text). `hint` is a command's `argument-hint` as written; `source` says where it comes from
 * ("built-in", "user", "project:frontend", "MCP server x").
 */
export const slashCommandSchema = z.object({
  name: z.string().max(200).regex(/^\S+$/),
  description: z.string().max(400),
  arguments: z.array(z.object({ name: z.string().max(100), required: z.boolean() })).max(20),
  hint: z.string().max(200).optional(),
  source: z.string().max(300).optional(),
});
export type SlashCommand = z.infer<typeof slashCommandSchema>;

/** Slash commands matching the `/command` being typed (answers `commandQuery` with the same id). */
export const commandResultsMessageSchema = z.object({
  type: z.literal('commandResults'),
  seq,
  queryId: z.number().int().nonnegative(),
  commands: z.array(slashCommandSchema).max(100),
});

/** The MCP servers and their live state (answers `getMcpStatus`, then follows every change). */
export const mcpStatusMessageSchema = z.object({ type: z.literal('mcpStatus'), seq, status: mcpStatusSchema });

/** Show a page (e.g. "Keel: Show History" from the palette); on the loop page, `loop` selects that loop. */
export const navigateMessageSchema = z.object({ type: z.literal('navigate'), seq, page: pageSchema, loop: loopNameSchema.optional() });

/** The workspace's loops (answers `getLoops`, then follows every change while the page is shown). */
export const loopsMessageSchema = z.object({ type: z.literal('loops'), seq, state: loopsStateSchema });

/** The workspace's memories (answers `getMemories`, then follows every change of the folder). */
export const memoriesMessageSchema = z.object({ type: z.literal('memories'), seq, state: memoryStateSchema });

/** The memories matching a search, best first (answers `searchMemories` with the same id). */
export const memorySearchMessageSchema = z.object({
  type: z.literal('memorySearch'),
  seq,
  queryId: z.number().int().nonnegative(),
  files: z.array(memoryFileSchema).max(200),
});

/** Something the user should read that is not an error (e.g. "Resume is not available yet"). */
export const noticeMessageSchema = z.object({ type: z.literal('notice'), seq, message: z.string() });

/** Show the chat page and put the focus in the message box (Keel: Focus Chat). */
export const focusComposerMessageSchema = z.object({ type: z.literal('focusComposer'), seq });

/** The shown task moved to another worker, or its worker changed state or went away (null). */
export const taskWorkerMessageSchema = z.object({ type: z.literal('taskWorker'), seq, taskId: z.string().max(200), worker: taskWorkerSchema.nullable() });

export const toWebviewMessageSchema = z.discriminatedUnion('type', [
  snapshotMessageSchema,
  eventMessageSchema,
  hostErrorMessageSchema,
  permissionRequestMessageSchema,
  permissionResolvedMessageSchema,
  thinkingTimeMessageSchema,
  taskListMessageSchema,
  settingsMessageSchema,
  settingsSavedMessageSchema,
  mentionResultsMessageSchema,
  commandResultsMessageSchema,
  navigateMessageSchema,
  noticeMessageSchema,
  mcpStatusMessageSchema,
  loopsMessageSchema,
  memoriesMessageSchema,
  memorySearchMessageSchema,
  taskWorkerMessageSchema,
  rewindPlanMessageSchema,
  composerTextMessageSchema,
  focusComposerMessageSchema,
]);

export type SnapshotMessage = z.infer<typeof snapshotMessageSchema>;
export type EventMessage = z.infer<typeof eventMessageSchema>;
export type HostErrorMessage = z.infer<typeof hostErrorMessageSchema>;
export type ToWebviewMessage = z.infer<typeof toWebviewMessageSchema>;
export type ToWebviewType = ToWebviewMessage['type'];

/**
 * Messages that only describe what a snapshot also holds (or answer a question the reloaded page
 * asks again): an outbox may drop them while the view is not ready.
 */
export const COVERED_BY_SNAPSHOT: ReadonlySet<ToWebviewType> = new Set<ToWebviewType>([
  'snapshot',
  'event',
  'permissionRequest',
  'permissionResolved',
  'thinkingTime',
  'taskList',
  'settings',
  'mentionResults',
  'commandResults',
  'mcpStatus',
  'loops',
  'memories',
  'memorySearch',
  'taskWorker',
]);

/** A host->webview message before the outbox numbers it. */
export type ToWebviewPayload = ToWebviewMessage extends infer M ? (M extends { seq: number } ? Omit<M, 'seq'> : never) : never;

export type ParseResult<T> = { ok: true; message: T } | { ok: false; error: string };

/** Validates untrusted data as a host->webview message. Never throws. */
export function parseToWebview(data: unknown): ParseResult<ToWebviewMessage> {
  const r = toWebviewMessageSchema.safeParse(data);
  return r.success ? { ok: true, message: r.data } : { ok: false, error: z.prettifyError(r.error) };
}
