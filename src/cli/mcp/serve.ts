import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createKeelMcpServer } from '../../core/mcp/keelServer';
import { WorkspaceTrust } from '../../core/trust/workspaceTrust';
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from '../../shared/domain/permissionModes';
import { defaultStorage } from '../args';
import { MCP_HELP, VERSION } from '../help';
import { exitOnSignals } from '../signals';
import { existingPath, HelpRequested, parseCommandLine, reportUsage, UsageError } from '../usage';

/**
 * `keel mcp serve --workspace DIR [--mode MODE]`: Keel's own tools over stdio for any MCP client
 * until the client closes stdin. Nothing but protocol goes to stdout; diagnostics go to stderr.
 * Exit codes: 0 when the client disconnects, 2 on bad usage, 128 + n on signal n. A client that
 * disconnects mid-call cancels the call (the SDK aborts it: its command's group gets SIGTERM, then
 * SIGKILL); a signal ends the process at once and its exit hook SIGKILLs the commands still running
 * (Node's default action would leave them, each in a process group of its own).
 */
export async function mcpServeCommand(argv: string[]): Promise<number> {
  let workspace: string;
  let mode: PermissionMode;
  try {
    const { values } = parseCommandLine(argv, { workspace: { type: 'string' }, mode: { type: 'string' } }, false);
    workspace = values.workspace === undefined ? process.cwd() : existingPath('--workspace', values.workspace, 'folder');
    const given = values.mode ?? 'default';
    if (!isPermissionMode(given)) throw new UsageError(`--mode must be one of ${PERMISSION_MODES.join(', ')} (got "${given}")`);
    mode = given;
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(MCP_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('mcp serve', err);
    throw err;
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
