import { z } from 'zod';
import type { ParseResult } from './toWebview';

/**
 * Messages from a chat webview to the extension host. Each is defined once, here, as data.
 * The webview only states intents; the host validates each one and decides what happens.
 */

/** Sent once per page load. `lastSeq` is the highest seq the page had applied before (diagnostic). */
export const readyMessageSchema = z.object({ type: z.literal('ready'), lastSeq: z.number().int().nonnegative().optional() });

/** Text the user sent: starts a task when none is open, else a follow-up to the open task. */
export const promptMessageSchema = z.object({ type: z.literal('prompt'), text: z.string().max(200_000).refine((s) => s.trim().length > 0, 'empty prompt') });

/** Close the current task (it keeps running in the background) and show the empty state. */
export const newTaskMessageSchema = z.object({ type: z.literal('newTask') });

/** Cancel the current task's request or tool. */
export const cancelMessageSchema = z.object({ type: z.literal('cancel') });

/** Send the last failed request of the current task again. */
export const retryMessageSchema = z.object({ type: z.literal('retry') });

/** The user clicked a link in the transcript; the host opens it only if it is http(s). */
export const openLinkMessageSchema = z.object({ type: z.literal('openLink'), href: z.string().max(8192) });

export const fromWebviewMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  promptMessageSchema,
  newTaskMessageSchema,
  cancelMessageSchema,
  retryMessageSchema,
  openLinkMessageSchema,
]);

export type ReadyMessage = z.infer<typeof readyMessageSchema>;
export type PromptMessage = z.infer<typeof promptMessageSchema>;
export type OpenLinkMessage = z.infer<typeof openLinkMessageSchema>;
export type FromWebviewMessage = z.infer<typeof fromWebviewMessageSchema>;
export type FromWebviewType = FromWebviewMessage['type'];

/** Validates untrusted data as a webview->host message. Never throws. */
export function parseFromWebview(data: unknown): ParseResult<FromWebviewMessage> {
  const r = fromWebviewMessageSchema.safeParse(data);
  return r.success ? { ok: true, message: r.data } : { ok: false, error: z.prettifyError(r.error) };
}
