import { z } from 'zod';
import { alwaysAllowSchema, exportFormatSchema, permissionChoiceSchema, permissionModeSchema, providerIdSchema } from './chatMessages';
import { LOOP_ACTIONS, loopNameSchema } from './loopMessages';
import { MCP_ACTIONS } from './mcpMessages';
import { MEMORY_ACTIONS, MEMORY_SETTINGS, memoryFileSchema } from './memoryMessages';
import { hunkChoiceSchema, rewindApplySchema, rewindCancelSchema, rewindOpenDiffSchema, rewindPreviewRequestSchema } from './rewindMessages';
import { MAX_THUMBNAIL_CHARS } from '../domain/promptImageLimits';
import type { ParseResult } from './toWebview';

/**
 * Messages from a chat webview to the extension host. Each is defined once, here, as data.
 * The webview only states intents; the host validates each one and decides what happens.
 */

/** Sent once per page load. `lastSeq` is the highest seq the page had applied before (diagnostic). */
export const readyMessageSchema = z.object({ type: z.literal('ready'), lastSeq: z.number().int().nonnegative().optional() });

/**
 * An image attached to a prompt (pasted, dropped or picked in the composer): its name and its
 * bytes as base64. The host checks each one (PNG, JPEG, GIF or WebP by its first bytes, at most
 * 5 MB) before anything is sent; the limits here only bound the message.
 */
export const promptImageSchema = z.object({
  name: z.string().min(1).max(300),
  data: z.string().max(Math.ceil((5 * 1024 * 1024) / 3) * 4 + 4),
  /** A small preview the composer made (a `data:` URL); the host keeps it only if it is a checked image. */
  thumbnail: z.string().max(MAX_THUMBNAIL_CHARS).optional(),
});
export type PromptImageMessage = z.infer<typeof promptImageSchema>;

/**
 * Text the user sent (with the images attached to it): starts a task when none is open, else a
 * follow-up to the open task (queued while a run is under way). Its `@` mentions
 * (domain/mentions.ts) are found and resolved by the host: the page sends the text as typed and
 * never reads what a mention names.
 */
export const promptMessageSchema = z.object({
  type: z.literal('prompt'),
  text: z.string().max(200_000).refine((s) => s.trim().length > 0, 'empty prompt'),
  images: z.array(promptImageSchema).max(20).optional(),
});

/** Cancel the shown task's queued message `id` before it is sent. */
export const withdrawQueuedMessageSchema = z.object({ type: z.literal('withdrawQueued'), id: z.string().min(1).max(200) });

/** Close the current task (it keeps running in the background) and show the empty state. */
export const newTaskMessageSchema = z.object({ type: z.literal('newTask') });

/** Cancel the current task's request or tool. */
export const cancelMessageSchema = z.object({ type: z.literal('cancel') });

/** Send the last failed request of the current task again. */
export const retryMessageSchema = z.object({ type: z.literal('retry') });

/**
 * Resume the current task after it was interrupted (reload, crash), or take over a task shown
 * read-only because another window held it (refused while that window is alive).
 */
export const resumeMessageSchema = z.object({ type: z.literal('resume') });

/** The user clicked a link in the transcript; the host opens http(s) and asks about anything else. */
export const openLinkMessageSchema = z.object({ type: z.literal('openLink'), href: z.string().max(8192) });

/** The user's answer to permission prompt `requestId`; the host checks the id is pending. */
export const permissionAnswerMessageSchema = z.object({
  type: z.literal('permissionAnswer'),
  requestId: z.string().min(1).max(200),
  decision: permissionChoiceSchema,
  feedback: z.string().max(10_000).optional(),
  /** With `allowAlways`: the rule(s) to save and where; absent, the host saves the first suggested rule locally. */
  always: alwaysAllowSchema.optional(),
  /** An Edit/Write reviewed change by change: each hunk's choice (the host builds what is written from the proposal). */
  review: z.object({ choices: z.array(hunkChoiceSchema).max(10_000) }).optional(),
});

/** The permission mode for the next task or message. */
export const setModeMessageSchema = z.object({ type: z.literal('setMode'), mode: permissionModeSchema });

/** What can be mentioned matching `query` (the `@` mention being typed): Keel's words, MCP resources, folders, files. */
export const mentionQueryMessageSchema = z.object({ type: z.literal('mentionQuery'), queryId: z.number().int().nonnegative(), query: z.string().max(500) });

/** Slash commands whose name contains `query` (the `/command` being typed at the start of the message). */
export const commandQueryMessageSchema = z.object({ type: z.literal('commandQuery'), queryId: z.number().int().nonnegative(), query: z.string().max(200) });

/** Open the change of tool call `toolCallId` (or of its pending permission prompt) in a diff editor. */
export const openDiffMessageSchema = z.object({ type: z.literal('openDiff'), toolCallId: z.string().max(200) });

/** Show the subtask started by the Task tool call `toolCallId`. */
export const openSubtaskMessageSchema = z.object({ type: z.literal('openSubtask'), toolCallId: z.string().max(200) });

/** Put `text` on the clipboard (a code block's Copy button). */
export const copyMessageSchema = z.object({ type: z.literal('copy'), text: z.string().max(2_000_000) });

/**
 * History page: list every stored task (and this window's live ones); show one (live, or stored
 * read-only); delete one from the store (the host asks to confirm); resume an interrupted,
 * failed or aborted one; export one to a file (the host shows a save dialog).
 */
export const listTasksMessageSchema = z.object({ type: z.literal('listTasks') });
export const openTaskMessageSchema = z.object({ type: z.literal('openTask'), taskId: z.string().max(200) });
export const deleteTaskMessageSchema = z.object({ type: z.literal('deleteTask'), taskId: z.string().max(200) });
export const resumeTaskMessageSchema = z.object({ type: z.literal('resumeTask'), taskId: z.string().max(200) });
export const exportTaskMessageSchema = z.object({ type: z.literal('exportTask'), taskId: z.string().max(200), format: exportFormatSchema });

/** Settings page: read; save the non-secret settings; store (or, empty, remove) an API key. */
export const getSettingsMessageSchema = z.object({ type: z.literal('getSettings') });
export const saveSettingsMessageSchema = z.object({
  type: z.literal('saveSettings'),
  provider: providerIdSchema,
  model: z.string().max(200),
  baseUrl: z.string().max(2000),
});
export const setApiKeyMessageSchema = z.object({
  type: z.literal('setApiKey'),
  provider: z.enum(['anthropic', 'openai-compatible']),
  key: z.string().max(1000),
});

/** MCP section of the settings page: read the servers' state (and follow it); act on one server. */
export const getMcpStatusMessageSchema = z.object({ type: z.literal('getMcpStatus') });
export const mcpActionMessageSchema = z.object({ type: z.literal('mcpAction'), action: z.enum(MCP_ACTIONS), server: z.string().min(1).max(64) });

/**
 * Loop page: read the workspace's loops (and follow them); act on one loop. `restore` names the
 * checkpoint's commit (the host checks it is one of that loop's iterations and asks to confirm).
 */
export const getLoopsMessageSchema = z.object({ type: z.literal('getLoops') });
export const loopActionMessageSchema = z.object({
  type: z.literal('loopAction'),
  action: z.enum(LOOP_ACTIONS),
  name: loopNameSchema,
  commit: z.string().regex(/^[0-9a-f]{40,64}$/, 'not a commit id').optional(),
});

/**
 * Memory page: read the workspace's memories (and follow them); search them as a run would; open
 * one in an editor or delete one (the host checks the name is a file in `.keel/memory/` and asks
 * to confirm in a modal); turn `keel.memory.enabled` / `keel.memory.autoSave` on or off.
 */
export const getMemoriesMessageSchema = z.object({ type: z.literal('getMemories') });
export const searchMemoriesMessageSchema = z.object({ type: z.literal('searchMemories'), queryId: z.number().int().nonnegative(), query: z.string().max(2000) });
export const memoryActionMessageSchema = z.object({ type: z.literal('memoryAction'), action: z.enum(MEMORY_ACTIONS), file: memoryFileSchema });
export const setMemorySettingMessageSchema = z.object({ type: z.literal('setMemorySetting'), setting: z.enum(MEMORY_SETTINGS), value: z.boolean() });

export const fromWebviewMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  promptMessageSchema,
  withdrawQueuedMessageSchema,
  newTaskMessageSchema,
  cancelMessageSchema,
  retryMessageSchema,
  resumeMessageSchema,
  openLinkMessageSchema,
  permissionAnswerMessageSchema,
  setModeMessageSchema,
  mentionQueryMessageSchema,
  commandQueryMessageSchema,
  openDiffMessageSchema,
  openSubtaskMessageSchema,
  copyMessageSchema,
  listTasksMessageSchema,
  openTaskMessageSchema,
  deleteTaskMessageSchema,
  resumeTaskMessageSchema,
  exportTaskMessageSchema,
  getSettingsMessageSchema,
  saveSettingsMessageSchema,
  setApiKeyMessageSchema,
  getMcpStatusMessageSchema,
  mcpActionMessageSchema,
  getLoopsMessageSchema,
  loopActionMessageSchema,
  getMemoriesMessageSchema,
  searchMemoriesMessageSchema,
  memoryActionMessageSchema,
  setMemorySettingMessageSchema,
  rewindPreviewRequestSchema,
  rewindApplySchema,
  rewindCancelSchema,
  rewindOpenDiffSchema,
]);

export type ReadyMessage = z.infer<typeof readyMessageSchema>;
export type PromptMessage = z.infer<typeof promptMessageSchema>;
export type OpenLinkMessage = z.infer<typeof openLinkMessageSchema>;
export type PermissionAnswerMessage = z.infer<typeof permissionAnswerMessageSchema>;
export type SaveSettingsMessage = z.infer<typeof saveSettingsMessageSchema>;
export type McpActionMessage = z.infer<typeof mcpActionMessageSchema>;
export type LoopActionMessage = z.infer<typeof loopActionMessageSchema>;
export type MemoryActionMessage = z.infer<typeof memoryActionMessageSchema>;
export type SearchMemoriesMessage = z.infer<typeof searchMemoriesMessageSchema>;
export type SetMemorySettingMessage = z.infer<typeof setMemorySettingMessageSchema>;
export type FromWebviewMessage = z.infer<typeof fromWebviewMessageSchema>;
export type FromWebviewType = FromWebviewMessage['type'];

/** Validates untrusted data as a webview->host message. Never throws. */
export function parseFromWebview(data: unknown): ParseResult<FromWebviewMessage> {
  const r = fromWebviewMessageSchema.safeParse(data);
  return r.success ? { ok: true, message: r.data } : { ok: false, error: z.prettifyError(r.error) };
}
