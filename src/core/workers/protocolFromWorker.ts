import { z } from 'zod';
import { permissionRequestSchema, fullTaskEventSchema, keelErrorSchema, turnOutputSchema } from './replySchemas';
import { wireIdSchema as id } from './domainSchemas';

/**
 * The worker → parent half of the host ↔ worker protocol (protocol.ts has the other half, the
 * common parts and the rules): `ready`, `session`, `message`, `complete`, `error`, `shutdown_ack`,
 * `health_ok`, and what must go up to the owner of the task — `permission_request` /
 * `permission_cancel`, `durable_request`, `subtask_start`. Only the host validates these
 * (`fromWorkerSchema`); a worker imports this file for its types only, so its bundle never builds
 * these schemas.
 */

export const readyMessageSchema = z.object({ type: z.literal('ready'), pid: z.number().int().positive(), protocol: z.number().int() });
/** The worker took the query: `warm` when it had served this task before (its caches are hot). */
export const sessionMessageSchema = z.object({ type: z.literal('session'), queryId: id, sessionId: id, warm: z.boolean() });
export const eventMessageSchema = z.object({ type: z.literal('message'), queryId: id, event: fullTaskEventSchema });
export const completeMessageSchema = z.object({ type: z.literal('complete'), queryId: id, output: turnOutputSchema });
/** The worker could not run the query at all (not a model failure: those are in `complete`'s output). */
export const errorMessageSchema = z.object({ type: z.literal('error'), queryId: id.optional(), error: keelErrorSchema });
export const shutdownAckMessageSchema = z.object({ type: z.literal('shutdown_ack') });
export const healthOkMessageSchema = z.object({
  type: z.literal('health_ok'),
  id,
  uptime: z.number().nonnegative(),
  queriesProcessed: z.number().int().nonnegative(),
  rssBytes: z.number().int().nonnegative(),
});
export const permissionRequestMessageSchema = z.object({ type: z.literal('permission_request'), queryId: id, promptId: id, request: permissionRequestSchema });
export const permissionCancelMessageSchema = z.object({ type: z.literal('permission_cancel'), queryId: id, promptId: id });
export const durableRequestMessageSchema = z.object({ type: z.literal('durable_request'), queryId: id, requestId: id });
export const subtaskStartMessageSchema = z.object({ type: z.literal('subtask_start'), queryId: id, toolCallId: id, description: z.string(), prompt: z.string() });

export const fromWorkerSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  sessionMessageSchema,
  eventMessageSchema,
  completeMessageSchema,
  errorMessageSchema,
  shutdownAckMessageSchema,
  healthOkMessageSchema,
  permissionRequestMessageSchema,
  permissionCancelMessageSchema,
  durableRequestMessageSchema,
  subtaskStartMessageSchema,
]);
export type FromWorker = z.infer<typeof fromWorkerSchema>;

