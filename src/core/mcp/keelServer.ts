import { randomUUID } from 'node:crypto';
import type { TrustView } from '../trust/items';
import { Server } from '@modelcontextprotocol/server';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/server';
import { createActor, fromPromise, toPromise } from 'xstate';
import { LockManager } from '../locks/lockManager';
import { permissionMachine } from '../machines/permission/permission.machine';
import { unattendedDenial } from '../permissions/gate';
import { whatWouldAllow } from '../permissions/whatWouldAllow';
import { lazyEngine } from '../runtime/permissionDecider';
import type { PermissionMode } from '../runtime/types';
import type { PermissionDecider } from '../runtime/wiring';
import { invokeTool, parseToolInput } from '../tools/execute';
import { createToolRegistry, toolInputJsonSchema, type ToolRegistry } from '../tools/registry';
import { bashTool } from '../tools/bash';
import { editTool } from '../tools/edit';
import { globTool } from '../tools/glob';
import { grepTool } from '../tools/grep';
import { readTool } from '../tools/read';
import { writeTool } from '../tools/write';

/**
 * Keel as an MCP server (`keel mcp serve`): its Read, Write, Edit, Bash, Glob and Grep tools for
 * any MCP client, on the official SDK's server side. Every call goes through the same decision
 * path as a headless `keel run`: input validation, then the permission machine (plan mode's
 * read-only rule, the engine's deny/ask/allow rules and the mode). Nobody can be asked over MCP,
 * so what would ask is refused, with the reason and what would allow it; a refusal and a tool
 * failure are results with `isError`, never protocol errors.
 */
export interface KeelServerOptions {
  workspace: string;
  mode: PermissionMode;
  /** Default: the permission engine for `workspace` (its settings files, as `trust` allows them). */
  permissions?: PermissionDecider;
  /** The person's approvals of the workspace (docs/permissions.md, "Trust"). */
  trust: TrustView;
  /** Files whose writes ask in every mode (the scripts of the workspace's hooks and MCP servers). */
  protectedFiles?: () => ReadonlyMap<string, string>;
  ripgrepPath?: string;
  version?: string;
}

export const SERVED_TOOLS = [readTool, writeTool, editTool, bashTool, globTool, grepTool];

export function createKeelMcpServer(opts: KeelServerOptions): Server {
  const registry = createToolRegistry(SERVED_TOOLS);
  const decider = opts.permissions ?? lazyEngine({ workspace: opts.workspace, trust: opts.trust, ...(opts.protectedFiles ? { protectedFiles: opts.protectedFiles } : {}) });
  const locks = new LockManager();
  const instructions = `Keel's tools on the workspace ${opts.workspace}. Permission mode: ${opts.mode}.`;
  const server = new Server({ name: 'keel', version: opts.version ?? '0.1.0' }, { capabilities: { tools: {} }, instructions });
  const tools: McpTool[] = SERVED_TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: toolInputJsonSchema(t) as McpTool['inputSchema'],
    annotations: { readOnlyHint: t.readOnly, destructiveHint: !t.readOnly, openWorldHint: t.name === 'Bash' },
  }));
  server.setRequestHandler('tools/list', async () => ({ tools }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const name = request.params.name;
    const args = request.params.arguments ?? {};
    const progressToken = ctx.mcpReq._meta?.progressToken;
    let chunks = 0;
    return callKeelTool(registry, decider, opts, locks, name, args, ctx.mcpReq.signal, (chunk) => {
      if (progressToken === undefined) return;
      void ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: ++chunks, message: chunk } }).catch(() => undefined);
    });
  });
  return server;
}

async function callKeelTool(
  registry: ToolRegistry,
  decider: PermissionDecider,
  opts: KeelServerOptions,
  locks: LockManager,
  name: string,
  args: unknown,
  signal: AbortSignal,
  onOutput: (chunk: string) => void,
): Promise<CallToolResult> {
  const parsed = parseToolInput(registry, name, args);
  if (!parsed.ok) return errorResult(parsed.result.content);
  const subject = parsed.tool.subject(parsed.input as never, { workspace: opts.workspace });
  const machine = permissionMachine.provide({
    actors: {
      evaluate: fromPromise(({ input }) => decider.decide(input.call, input.mode)),
      // Nobody to ask over MCP: denied, saying what would really allow it (a mode, allow rules).
      askUser: fromPromise(async ({ input }) => {
        const { suggestRules } = await import('../permissions/persist');
        const suggested = suggestRules({ tool: input.tool, subject: input.subject, workspace: opts.workspace });
        const allowedBy = await whatWouldAllow(decider.decide.bind(decider), { tool: input.tool, input: input.input, subject: input.subject, readOnly: input.readOnly }, opts.mode, suggested);
        return { decision: 'deny' as const, deniedBecause: unattendedDenial({ reason: input.reason, allowedBy }, 'keel mcp serve has nobody to ask') };
      }),
    },
  });
  const requestId = randomUUID();
  const actor = createActor(machine, { input: { taskId: 'mcp-serve', requestId, toolCallId: requestId, tool: name, input: parsed.input, subject, readOnly: parsed.tool.readOnly, mode: opts.mode } });
  actor.start();
  const outcome = await toPromise(actor);
  if (outcome.decision !== 'allow') return errorResult(`Permission denied: ${outcome.decision === 'deny' ? outcome.reason : 'invalid call'}.`);
  const r = await invokeTool(parsed.tool, parsed.input, {
    taskId: 'mcp-serve',
    workspace: opts.workspace,
    signal,
    locks,
    ...(opts.ripgrepPath ? { ripgrepPath: opts.ripgrepPath } : {}),
    searchExclusions: (root) => decider.searchExclusions(root),
    onOutput,
  });
  return { content: [{ type: 'text', text: r.content }], ...(r.isError ? { isError: true } : {}) };
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
