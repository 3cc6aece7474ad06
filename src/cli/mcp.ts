import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mcpItem } from '../core/trust/items';
import { WorkspaceTrust } from '../core/trust/workspaceTrust';
import { describeTarget, loadMcpConfig, projectConfigPath, userConfigPath } from '../core/mcp/config';
import { addServer, McpConfigEditError, removeServer } from '../core/mcp/configEdit';
import { McpHub } from '../core/mcp/hub';
import { modelToolName } from '../core/mcp/names';
import type { McpServerSpec, McpServerStatus } from '../core/mcp/types';
import { defaultStorage } from './args';

export const MCP_HELP = `Usage:
  keel mcp list [--json]                     configured servers, connected to show their state
  keel mcp tools NAME [--json]               the tools of one server, as the model sees them
  keel mcp add [--scope project|user] [-e KEY=VALUE]... NAME -- COMMAND [ARGS...]
  keel mcp add --transport http|sse [--scope project|user] [-H 'Name: value']... NAME URL
  keel mcp remove NAME [--scope project|user]
  keel mcp approve NAME                      approve the workspace (keel trust approve: everything it
                                             provides, NAME's server included)
  keel mcp revoke NAME                       forget the approval of NAME (held back until approved again)
  keel mcp login NAME                        sign in to a remote server with OAuth (prints the
                                             address to open; tokens in $KEEL_HOME/mcp-oauth.json)
  keel mcp logout NAME                       forget the tokens Keel keeps for that server
  keel mcp serve [--workspace DIR] [--mode MODE]
                                             Keel's Read, Write, Edit, Bash, Glob, Grep as an
                                             MCP server over stdio
Options: --workspace DIR (default: current directory), --mcp-config FILE (list, tools, login, logout; repeatable),
--storage DIR (Keel's home: your mcp.json and the approvals; default $KEEL_HOME, else ~/.keel).
Project servers come from DIR/.mcp.json, user servers from $KEEL_HOME/mcp.json (default ~/.keel).
`;

/**
 * `keel mcp …`. Exit codes: 0 success, 1 a server could not be reached or a file could not be
 * written, 2 bad usage.
 */
export async function mcpCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  // `keel mcp SUB --help` (before any `--`, after which words belong to the server's command line).
  const own = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (sub !== undefined && (own.includes('--help') || own.includes('-h') || sub === '-h')) {
    process.stdout.write(MCP_HELP);
    return 0;
  }
  if (sub === 'serve') return (await import('./mcpServe')).mcpServeCommand(rest);
  if (sub === 'add') return addCommand(rest);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { workspace: { type: 'string' }, json: { type: 'boolean' }, scope: { type: 'string' }, 'mcp-config': { type: 'string', multiple: true }, storage: { type: 'string' } },
    });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  const workspace = resolve(values.workspace ?? process.cwd());
  // Keel's home (the user's mcp.json, the approvals): --storage, else $KEEL_HOME, else ~/.keel.
  const keelHome = values.storage ? resolve(values.storage) : defaultStorage(process.env);
  const extraFiles = values['mcp-config'] ?? [];
  switch (sub) {
    case 'list':
      return list(workspace, keelHome, extraFiles, Boolean(values.json));
    case 'tools':
      if (!positionals[0]) return usage('keel mcp tools needs a server name');
      return tools(workspace, keelHome, extraFiles, positionals[0], Boolean(values.json));
    case 'remove': {
      const name = positionals[0];
      if (!name) return usage('keel mcp remove needs a server name');
      const scope = values.scope;
      if (scope !== undefined && scope !== 'project' && scope !== 'user') return usage('--scope must be project or user');
      const files = scope === 'user' ? [userConfigPath(keelHome)] : scope === 'project' ? [projectConfigPath(workspace)] : [projectConfigPath(workspace), userConfigPath(keelHome)];
      try {
        for (const file of files) {
          if (removeServer(file, name)) {
            process.stdout.write(`removed MCP server "${name}" from ${file}\n`);
            return 0;
          }
        }
      } catch (err) {
        if (err instanceof McpConfigEditError) return fail(err.message);
        throw err;
      }
      return fail(`no MCP server named "${name}" in ${files.join(' or ')}`);
    }
    case 'approve':
    case 'revoke': {
      const name = positionals[0];
      if (!name) return usage(`keel mcp ${sub} needs a server name`);
      return await approval(sub, workspace, keelHome, name);
    }
    case 'login':
    case 'logout': {
      const name = positionals[0];
      if (!name) return usage(`keel mcp ${sub} needs a server name`);
      const { mcpLoginCommand } = await import('./mcpLogin');
      return mcpLoginCommand(sub, name, { workspace, keelHome, extraFiles, out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });
    }
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(MCP_HELP);
      return sub === undefined ? 2 : 0;
    default:
      return usage(`unknown mcp subcommand "${sub}"`);
  }
}

async function list(workspace: string, keelHome: string, extraFiles: string[], json: boolean): Promise<number> {
  const trust = new WorkspaceTrust({ workspace, keelHome });
  const hub = new McpHub({ workspace, keelHome, extraConfigFiles: extraFiles, log: quietLog, trust });
  try {
    await hub.start();
    const servers = hub.status();
    if (json) {
      process.stdout.write(`${JSON.stringify({ servers, problems: hub.problems })}\n`);
      return 0;
    }
    for (const p of hub.problems) process.stderr.write(`keel mcp: ${p.source}: ${p.message}\n`);
    if (servers.length === 0) {
      process.stdout.write(`No MCP servers configured (looked in ${projectConfigPath(workspace)} and ${userConfigPath(keelHome)}).\n`);
      return 0;
    }
    for (const s of servers) process.stdout.write(`${line(s)}\n`);
    return 0;
  } finally {
    await hub.dispose();
    trust.dispose();
  }
}

function line(s: McpServerStatus): string {
  const state =
    s.approval === 'pending'
      ? 'waits for the approval of this workspace — review: keel trust show; approve: keel trust approve'
      : s.approval === 'rejected'
        ? 'cannot be approved: Keel cannot tell which files it runs (keel trust show)'
        : s.phase === 'ready'
          ? `ready (${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}${s.via === 'sse' && s.transport === 'http' ? ', via SSE' : ''})`
          : s.phase === 'needsAuthorization'
            ? `needs you to sign in — run: keel mcp login ${s.name}`
            : `${s.phase}${s.lastError ? `: ${s.lastError}` : ''}`;
  return `${s.name}  [${s.scope}, ${s.transport}]  ${state}\n    ${s.target}`;
}

async function tools(workspace: string, keelHome: string, extraFiles: string[], name: string, json: boolean): Promise<number> {
  const trust = new WorkspaceTrust({ workspace, keelHome });
  const hub = new McpHub({ workspace, keelHome, extraConfigFiles: extraFiles, log: quietLog, trust });
  try {
    const status = hub.status().find((s) => s.name === name);
    if (!status) return fail(`no MCP server named "${name}"`);
    if (status.approval === 'pending') return fail(`"${name}" comes from ${projectConfigPath(workspace)} and waits for the approval of this workspace (keel trust show; keel trust approve)`);
    if (status.approval === 'rejected') return fail(`"${name}" cannot be approved: Keel cannot tell which files it runs (keel trust show)`);
    await hub.start([name]);
    const now = hub.status().find((s) => s.name === name)!;
    if (now.phase !== 'ready') return fail(`MCP server "${name}" is ${now.phase}${now.lastError ? `: ${now.lastError}` : ''}`);
    const taken = new Set<string>();
    const rows = [...now.tools]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((t) => {
        const modelName = modelToolName(name, t.name, taken);
        taken.add(modelName);
        return { name: t.name, modelName, description: t.description, readOnlyHint: t.readOnlyHint, inputSchema: t.inputSchema };
      });
    if (json) process.stdout.write(`${JSON.stringify({ server: name, tools: rows })}\n`);
    else for (const r of rows) process.stdout.write(`${r.modelName}\n    ${r.description.split('\n')[0] ?? ''}\n`);
    return 0;
  } finally {
    await hub.dispose();
    trust.dispose();
  }
}

/**
 * `keel mcp approve NAME` is the workspace's one approval (`keel trust approve`: everything it
 * provides, shown as it is approved); `keel mcp revoke NAME` forgets the approval of that server.
 */
async function approval(sub: 'approve' | 'revoke', workspace: string, keelHome: string, name: string): Promise<number> {
  const config = loadMcpConfig({ workspace, keelHome });
  const server = config.servers.find((s) => s.name === name);
  if (sub === 'approve') {
    if (!server) return fail(`no MCP server named "${name}" in ${projectConfigPath(workspace)}`);
    if (server.scope !== 'project') {
      process.stdout.write(`"${name}" is a ${server.scope} server; it needs no approval\n`);
      return 0;
    }
    const { trustCommand } = await import('./trust');
    return trustCommand(['approve', '--workspace', workspace, '--storage', keelHome], `keel mcp approve ${name}`);
  }
  const trust = new WorkspaceTrust({ workspace, keelHome });
  try {
    const had = (await trust.revoke([`mcp:${name}`])) > 0;
    process.stdout.write(had ? `forgot the approval of "${name}" in ${workspace}; it waits for approval again\n` : `nothing was approved about "${name}" in ${workspace}\n`);
    return 0;
  } finally {
    trust.dispose();
  }
}

/** `keel mcp add`: everything after `--` is the server's command line, untouched. */
async function addCommand(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const head = dash >= 0 ? argv.slice(0, dash) : argv;
  const commandLine = dash >= 0 ? argv.slice(dash + 1) : [];
  let parsed;
  try {
    parsed = parseArgs({
      args: head,
      allowPositionals: true,
      options: {
        transport: { type: 'string', short: 't' },
        scope: { type: 'string', short: 's' },
        env: { type: 'string', short: 'e', multiple: true },
        header: { type: 'string', short: 'H', multiple: true },
        workspace: { type: 'string' },
      },
    });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  const [name, ...more] = positionals;
  if (!name) return usage('keel mcp add needs a server name');
  const transport = values.transport ?? 'stdio';
  const scope = values.scope ?? 'project';
  if (scope !== 'project' && scope !== 'user') return usage('--scope must be project or user');
  const workspace = resolve(values.workspace ?? process.cwd());
  const keelHome = defaultStorage(process.env);
  let spec: McpServerSpec;
  if (transport === 'stdio') {
    const words = [...more, ...commandLine];
    if (words.length === 0) return usage('keel mcp add NAME -- COMMAND [ARGS...] needs a command');
    if (values.header) return usage('-H/--header is for http and sse servers');
    const env: Record<string, string> = {};
    for (const kv of values.env ?? []) {
      const eq = kv.indexOf('=');
      if (eq <= 0) return usage(`-e needs KEY=VALUE (got "${kv}")`);
      env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    spec = { transport: 'stdio', command: words[0]!, args: words.slice(1), env };
  } else if (transport === 'http' || transport === 'sse') {
    if (more.length !== 1 || commandLine.length > 0) return usage(`keel mcp add --transport ${transport} NAME URL takes exactly one URL`);
    if (values.env) return usage('-e/--env is for stdio servers');
    const headers: Record<string, string> = {};
    for (const h of values.header ?? []) {
      const colon = h.indexOf(':');
      if (colon <= 0) return usage(`-H needs 'Name: value' (got "${h}")`);
      headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
    }
    try {
      const u = new URL(more[0]!);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return usage(`the URL must be http or https (got ${u.protocol})`);
    } catch {
      return usage(`"${more[0]}" is not a URL`);
    }
    spec = { transport, url: more[0]!, headers };
  } else {
    return usage(`--transport must be stdio, http or sse (got "${transport}")`);
  }
  const file = scope === 'user' ? userConfigPath(keelHome) : projectConfigPath(workspace);
  try {
    addServer(file, name, spec);
  } catch (err) {
    if (err instanceof McpConfigEditError) return fail(err.message);
    throw err;
  }
  // The person typed this command themselves: a project server they add is approved as written.
  if (scope === 'project') {
    const added = loadMcpConfig({ workspace, keelHome }).servers.find((s) => s.name === name && s.scope === 'project');
    if (added) {
      const trust = new WorkspaceTrust({ workspace, keelHome });
      try {
        await trust.recordOwn([mcpItem(added, '.mcp.json', { workspace, home: homedir(), ...(process.env.PATH !== undefined ? { pathEnv: process.env.PATH } : {}) })]);
      } finally {
        trust.dispose();
      }
    }
  }
  process.stdout.write(`added MCP server "${name}" (${spec.transport}) to ${file}\n    ${describeTarget(spec)}\n`);
  return 0;
}

const quietLog = (level: 'info' | 'warn' | 'error', message: string) => {
  if (level !== 'info') process.stderr.write(`keel: ${message}\n`);
};

function fail(msg: string): number {
  process.stderr.write(`keel mcp: ${msg}\n`);
  return 1;
}

function usage(msg: string): number {
  process.stderr.write(`keel mcp: ${msg}\n\n${MCP_HELP}`);
  return 2;
}
