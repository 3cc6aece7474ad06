import { readConfigFile } from '../../core/mcp/config';
import { McpHub } from '../../core/mcp/hub';
import type { McpServerStatus } from '../../core/mcp/types';
import type { WorkspaceTrust } from '../../core/trust/workspaceTrust';

/**
 * What `keel run` tells about its MCP servers, once each: a `stream-json` line
 * (`{"type":"mcp","taskId",...}`) and, for everything but `ready`, a line on stderr.
 * - `ready`: the server started (`tools`: how many it offers).
 * - `failed`: it could not start, or it stopped (`message`: why); its tools are not offered while
 *   it is down (the hub retries with backoff: a later `ready` may follow).
 * - `needs_sign_in`: a remote server wants an OAuth sign-in, which a run cannot wait for.
 * - `not_approved`: a project server that waits for the workspace's approval (it does not start).
 * - `config_problem`: a configuration file (`file`) or an entry in it cannot be used (`message`).
 * A failed server is a warning, not a failed run (as in Claude Code): the run goes on without its
 * tools, and its exit status is the task's (docs/cli.md, "MCP servers").
 */
export type McpReport =
  | { status: 'ready'; server: string; tools: number }
  | { status: 'failed'; server: string; message: string }
  | { status: 'needs_sign_in'; server: string; message: string }
  | { status: 'not_approved'; server: string; message: string }
  | { status: 'config_problem'; file: string; message: string };

/**
 * The MCP hub of one `keel run`: the workspace's `.mcp.json`, the user's `mcp.json` and the
 * `--mcp-config` files. Its servers start at once, in parallel with the run's own start (the first
 * model request waits for them at most the startup wait: hub.ts). Headless there is nobody to
 * approve a project server, so one that is not approved as it is now does not start: the run's
 * trust notice says so on stderr (cliTrust.ts), and `report` gives stream-json its `not_approved`
 * line. Every configuration problem and every server that fails, or needs a sign-in, is reported
 * (`report`, and `warn` for stderr) — a broken `.mcp.json` too, even when it leaves no server at
 * all. Returns `{ hub: undefined }` when no server is configured, `{ error }` when a
 * `--mcp-config` file cannot be used (bad usage: the person named it).
 */
export function cliMcpHub(
  workspace: string,
  mcpConfig: readonly string[],
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void,
  trust: WorkspaceTrust,
  keelHome: string,
  report: (r: McpReport) => void = () => {},
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
  for (const p of hub.problems) {
    warn(`keel: MCP configuration ${p.source}: ${p.message}\n`);
    report({ status: 'config_problem', file: p.source, message: p.message });
  }
  if (hub.empty) {
    void hub.dispose();
    return {};
  }
  for (const s of hub.status()) {
    // Said on stderr once, by the run's trust notice (cliTrust.ts), with what approves it.
    if (s.approval === 'pending') {
      const message = `from .mcp.json waits for the approval of this workspace and will not start (${s.target}); review: keel trust show; approve: keel trust approve`;
      report({ status: 'not_approved', server: s.name, message });
    } else if (s.approval === 'rejected') {
      report({ status: 'not_approved', server: s.name, message: `from .mcp.json cannot be approved: Keel cannot tell which files it runs (${s.target}; keel trust show)` });
    }
  }
  watchServers(hub, warn, report);
  // Start now, in parallel with the run's own start; nothing waits here.
  void hub.start();
  return { hub };
}

/** Reports each server's start, failure (each new one), recovery and sign-in need, once each. */
function watchServers(hub: McpHub, warn: (line: string) => void, report: (r: McpReport) => void): void {
  const told = new Map<string, string>();
  const everReady = new Set<string>();
  const tell = (s: McpServerStatus, what: string, r: McpReport, line?: string) => {
    if (told.get(s.name) === what) return;
    told.set(s.name, what);
    if (line) warn(line);
    report(r);
  };
  const look = () => {
    for (const s of hub.status()) {
      if (s.phase === 'ready') {
        const recovered = told.has(s.name) && told.get(s.name) !== 'ready';
        tell(s, 'ready', { status: 'ready', server: s.name, tools: s.tools.length }, recovered ? `keel: MCP server "${s.name}" is ready again (${s.tools.length} tools)\n` : undefined);
        everReady.add(s.name);
      } else if ((s.phase === 'error' || s.phase === 'restarting') && s.lastError) {
        const what = everReady.has(s.name) ? 'stopped' : 'failed to start';
        const retry = s.phase === 'restarting' ? `; Keel tries again${s.restartInMs !== null ? ` in ${Math.ceil(s.restartInMs / 1000)} s` : ''}` : '';
        const message = `${what}: ${s.lastError}`;
        const line = `keel: MCP server "${s.name}" ${message}; its tools are not available while it is down${retry} (keel mcp list shows it)\n`;
        tell(s, `error:${s.lastError}`, { status: 'failed', server: s.name, message }, line);
      } else if (s.phase === 'needsAuthorization') {
        const message = `needs you to sign in (${s.target}); its tools are not available in this run. Sign in with: keel mcp login ${s.name}`;
        tell(s, 'sign-in', { status: 'needs_sign_in', server: s.name, message }, `keel: MCP server "${s.name}" ${message}\n`);
      }
    }
  };
  hub.subscribe(look);
}
