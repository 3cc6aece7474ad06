import { McpHub } from '../../core/mcp/hub';
import { errorMessage } from '../../shared/domain/errors';

/**
 * `keel mcp login NAME` / `keel mcp logout NAME`: OAuth for one remote server of the workspace's
 * configuration. Login prints the authorization URL (Keel opens no browser from a terminal) and
 * waits, at most 5 minutes or until Ctrl-C, for the browser to come back to Keel's loopback
 * listener; the tokens go to `$KEEL_HOME/mcp-oauth.json` (0600), under the server's URL; then it
 * connects once and says how many tools the server offers. Exit codes: 0 done, 1 failed.
 */
export async function mcpLoginCommand(
  sub: 'login' | 'logout',
  name: string,
  opts: { workspace: string; keelHome: string; extraFiles: string[]; out: (s: string) => void; err: (s: string) => void; timeoutMs?: number },
): Promise<number> {
  const hub = new McpHub({ workspace: opts.workspace, keelHome: opts.keelHome, extraConfigFiles: opts.extraFiles, log: () => {} });
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  try {
    const status = hub.status().find((s) => s.name === name);
    if (!status) return fail(opts, `no MCP server named "${name}"`);
    if (status.transport === 'stdio') return fail(opts, `"${name}" runs a local command (stdio): there is nothing to sign in to`);
    if (sub === 'logout') {
      const had = await hub.signOut(name);
      opts.out(had ? `signed out of "${name}": Keel forgot its tokens for ${status.target}\n` : `Keel kept no sign-in for "${name}" (${status.target})\n`);
      return 0;
    }
    if (status.approval === 'pending') return fail(opts, `"${name}" comes from .mcp.json and is not approved in this workspace: keel mcp approve ${name}`);
    // 'rejected': Keel cannot tell what the server runs, so no approval can cover it (keel trust show says why).
    if (status.approval === 'rejected') return fail(opts, `"${name}" cannot be approved: Keel cannot tell which files it runs (keel trust show)`);
    const result = await hub.signIn(
      name,
      (url) => {
        opts.out(`The MCP server "${name}" (${status.target}) asks you to sign in.\nOpen this address in your browser and allow access:\n\n  ${url.href}\n\n`);
        opts.out('Waiting for the browser to come back to Keel (127.0.0.1)… (Ctrl-C to stop)\n');
      },
      { signal: abort.signal, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) },
    );
    opts.out(result === 'already' ? `already signed in to "${name}"\n` : `signed in to "${name}"\n`);
    await hub.start([name]);
    const now = hub.status().find((s) => s.name === name)!;
    if (now.phase !== 'ready') return fail(opts, `signed in, but "${name}" is ${now.phase}${now.lastError ? `: ${now.lastError}` : ''}`);
    opts.out(`"${name}" is ready: ${now.tools.length} tool${now.tools.length === 1 ? '' : 's'}\n`);
    return 0;
  } catch (err) {
    return fail(opts, `sign-in to "${name}" failed: ${errorMessage(err)}`);
  } finally {
    process.off('SIGINT', onSigint);
    await hub.dispose();
  }
}

function fail(opts: { err: (s: string) => void }, msg: string): number {
  opts.err(`keel mcp: ${msg}\n`);
  return 1;
}
