import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createKeelMcpServer } from '../core/mcp/keelServer';
import { WorkspaceTrust } from '../core/trust/workspaceTrust';
import { defaultStorage } from './args';
import type { PermissionMode } from '../core/runtime/types';
import { VERSION } from './help';
import { exitOnSignals } from './signals';

const MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;

/**
 * `keel mcp serve --workspace DIR [--mode MODE]`: Keel's own tools over stdio for any MCP client
 * until the client closes stdin. Nothing but protocol goes to stdout; diagnostics go to stderr.
 * Exit codes: 0 when the client disconnects, 2 on bad usage, 128 + n on signal n. A client that
 * disconnects mid-call cancels the call (the SDK aborts it: its command's group gets SIGTERM, then
 * SIGKILL); a signal ends the process at once and its exit hook SIGKILLs the commands still running
 * (Node's default action would leave them, each in a process group of its own).
 */
export async function mcpServeCommand(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({ args: argv, options: { workspace: { type: 'string' }, mode: { type: 'string' } } }).values;
  } catch (err) {
    process.stderr.write(`keel mcp serve: ${(err as Error).message}\n`);
    return 2;
  }
  const workspace = resolve(values.workspace ?? process.cwd());
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) {
    process.stderr.write(`keel mcp serve: the workspace ${workspace} is not a folder\n`);
    return 2;
  }
  const mode = (values.mode ?? 'default') as PermissionMode;
  if (!(MODES as readonly string[]).includes(mode)) {
    process.stderr.write(`keel mcp serve: --mode must be one of ${MODES.join(', ')} (got "${values.mode}")\n`);
    return 2;
  }
  exitOnSignals(true);
  // The workspace's own allow rules count only as the person approved them (keel trust).
  const trust = new WorkspaceTrust({ workspace, keelHome: defaultStorage(process.env) });
  const held = trust.status().pending.filter((i) => i.kind === 'allow' || i.kind === 'directory');
  if (held.length) {
    process.stderr.write(`keel mcp serve: ${held.length} allow rule(s) or folder(s) of this workspace are held back until you approve them (keel trust show --workspace ${workspace})\n`);
  }
  const server = createKeelMcpServer({ workspace, mode, version: VERSION, trust, protectedFiles: () => trust.protectedFilesNow() });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((res) => {
    server.onclose = () => res();
  });
  await server.connect(transport);
  process.stderr.write(`keel mcp serve: serving Read, Write, Edit, Bash, Glob, Grep on ${workspace} (mode ${mode})\n`);
  await closed;
  return 0;
}
