import { readConfigFile } from '../core/mcp/config';
import { McpHub } from '../core/mcp/hub';
import type { WorkspaceTrust } from '../core/trust/workspaceTrust';

/**
 * The MCP hub of one `keel run`: the workspace's `.mcp.json`, the user's `mcp.json` and the
 * `--mcp-config` files. Headless there is nobody to approve a project server, so one that is not
 * approved as it is now does not start (the run's trust notice lists it: cliTrust.ts). Returns
 * `{ hub: undefined }` when no server is configured, `{ error }` when a `--mcp-config` file
 * cannot be used (bad usage: the person named it).
 */
export function cliMcpHub(
  workspace: string,
  mcpConfig: readonly string[],
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void,
  trust: WorkspaceTrust,
  keelHome: string,
): { hub?: McpHub; error?: string } {
  for (const file of mcpConfig) {
    const problems = readConfigFile(file, 'cli', env, true).problems;
    if (problems.length > 0) return { error: `--mcp-config ${file}: ${problems.map((p) => p.message).join('; ')}` };
  }
  const hub = new McpHub({
    workspace,
    keelHome,
    extraConfigFiles: [...mcpConfig],
    env,
    trust,
    log: (level, message) => {
      if (level !== 'info') warn(`keel: ${message}\n`);
    },
  });
  // A remote server that wants an OAuth sign-in: nobody can answer a browser during a run.
  const told = new Set<string>();
  hub.subscribe(() => {
    for (const s of hub.status()) {
      if (s.phase !== 'needsAuthorization' || told.has(s.name)) continue;
      told.add(s.name);
      warn(`keel: MCP server "${s.name}" needs you to sign in (${s.target}); its tools are not available in this run. Sign in with: keel mcp login ${s.name}\n`);
    }
  });
  if (hub.empty) {
    void hub.dispose();
    return {};
  }
  for (const p of hub.problems) warn(`keel: MCP configuration ${p.source}: ${p.message}\n`);
  for (const s of hub.status()) {
    if (s.approval !== 'pending' && s.approval !== 'rejected' && s.lastError && !s.state.startsWith('disconnected')) warn(`keel: MCP server "${s.name}": ${s.lastError}\n`);
  }
  return { hub };
}
