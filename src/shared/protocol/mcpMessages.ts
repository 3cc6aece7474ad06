import { z } from 'zod';

/**
 * The MCP section of the chat's settings page, as data: every configured server with its live
 * state (from the host's hub), and what the person can do about one. The host builds these from
 * untrusted server output, so every string and list is bounded here (the host cuts before it
 * sends).
 */

export const MCP_PHASES = ['disconnected', 'connecting', 'stdio', 'streamableHttp', 'sse', 'initializing', 'ready', 'error', 'restarting', 'needsAuthorization', 'disabled'] as const;
export const MCP_ACTIONS = ['restart', 'enable', 'disable', 'approve', 'reject', 'revoke', 'signIn', 'signOut'] as const;

const text = (max: number) => z.string().max(max);

export const mcpServerViewSchema = z.object({
  name: text(64),
  scope: z.enum(['project', 'user', 'cli']),
  transport: z.enum(['stdio', 'http', 'sse']),
  via: z.enum(['stdio', 'streamableHttp', 'sse']).nullable(),
  /** The exact command line or URL. */
  target: text(4000),
  phase: z.enum(MCP_PHASES),
  /** `ready.toolCall` etc. */
  state: text(64),
  approval: z.enum(['approved', 'rejected', 'pending', 'not-needed']),
  lastError: text(4000).nullable(),
  stderrTail: z.array(text(600)).max(20),
  attempts: z.number().int().nonnegative(),
  /** Epoch ms of the next restart while restarting (the page counts down). */
  restartAt: z.number().nullable(),
  tools: z.array(z.object({ name: text(200), description: text(400) })).max(500),
  resources: z.array(z.object({ uri: text(1000), name: text(200) })).max(500),
  prompts: z.array(z.object({ name: text(200), description: text(400) })).max(500),
});
export type McpServerView = z.infer<typeof mcpServerViewSchema>;

export const mcpStatusSchema = z.object({
  servers: z.array(mcpServerViewSchema).max(200),
  /** Configuration problems (unreadable files, bad entries), one line each. */
  problems: z.array(text(1000)).max(50),
  /** False when no folder is open (MCP needs a workspace). */
  available: z.boolean(),
});
export type McpStatus = z.infer<typeof mcpStatusSchema>;
export type McpAction = (typeof MCP_ACTIONS)[number];
