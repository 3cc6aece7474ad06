import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defaultStorage } from '../args';

/**
 * Whether any MCP configuration may apply to a run (cheap: it only checks that files exist), so
 * that the MCP SDK is loaded only when it can be needed.
 */
export function mayHaveMcpServers(args: { workspace: string; mcpConfig: readonly string[] }, env: NodeJS.ProcessEnv): boolean {
  return args.mcpConfig.length > 0 || existsSync(join(args.workspace, '.mcp.json')) || existsSync(join(defaultStorage(env), 'mcp.json'));
}
