import { homedir } from 'node:os';
import { mcpItem } from '../../core/trust/items';
import { WorkspaceTrust } from '../../core/trust/workspaceTrust';
import { describeTarget, loadMcpConfig, projectConfigPath, readConfigFile, userConfigPath } from '../../core/mcp/config';
import { addServer, McpConfigEditError, removeServer } from '../../core/mcp/configEdit';
import { McpHub } from '../../core/mcp/hub';
import { modelToolName } from '../../core/mcp/names';
import type { McpServerSpec, McpServerStatus } from '../../core/mcp/types';
import { defaultStorage, storageOption } from '../args';
import { MCP_HELP } from '../help';
import { existingPath, HelpRequested, parseCommandLine, reportUsage, UsageError } from '../usage';


/** The options of the `keel mcp` subcommands (`add` and `serve` parse their own), and which each takes. */
const MCP_OPTIONS = { workspace: { type: 'string' }, 'mcp-config': { type: 'string', multiple: true }, json: { type: 'boolean' }, scope: { type: 'string' }, storage: { type: 'string' } } as const;
const SUB_OPTIONS: Record<string, readonly (keyof typeof MCP_OPTIONS)[]> = {
  list: ['workspace', 'mcp-config', 'json', 'storage'],
  tools: ['workspace', 'mcp-config', 'json', 'storage'],
  remove: ['workspace', 'scope', 'storage'],
  approve: ['workspace', 'storage'],
  revoke: ['workspace', 'storage'],
  login: ['workspace', 'mcp-config', 'storage'],
  logout: ['workspace', 'mcp-config', 'storage'],
};
type Sub = 'list' | 'tools' | 'remove' | 'approve' | 'revoke' | 'login' | 'logout';
const isSub = (s: string): s is Sub => Object.hasOwn(SUB_OPTIONS, s);

/**
 * `keel mcp …`. Exit codes: 0 success, 1 a server could not be reached or a file could not be
 * written, 2 bad usage — one line, `keel mcp SUB: <problem> (see keel mcp --help)`, as every
 * command's: an unknown option, a missing name, a `--workspace` or `--mcp-config` that is not
 * there, a `--mcp-config` file that cannot be used (as `keel run` says).
 */
export async function mcpCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  // `keel mcp SUB --help` (before any `--`, after which words belong to the server's command line).
  const own = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (sub !== undefined && (own.includes('--help') || own.includes('-h') || sub === '-h')) {
    process.stdout.write(MCP_HELP);
    return 0;
  }
  if (sub === 'serve') return (await import('./serve')).mcpServeCommand(rest);
  if (sub === 'add') return addCommand(rest);
  if (sub === undefined || sub === 'help' || sub === '--help') {
    process.stdout.write(MCP_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (!isSub(sub)) return usage(undefined, sub.startsWith('-') ? 'the subcommand (list, tools, add, …) comes first' : `unknown subcommand "${sub}"`);
  let values: ReturnType<typeof parseCommandLine<typeof MCP_OPTIONS, true>>['values'];
  let name: string;
  let workspace: string;
  let extraFiles: string[];
  let keelHome: string;
  try {
    const parsed = parseCommandLine(rest, MCP_OPTIONS, true);
    values = parsed.values;
    const foreign = Object.keys(values).find((k) => !(SUB_OPTIONS[sub] as readonly string[]).includes(k));
    if (foreign) throw new UsageError(`unknown option --${foreign}`);
    const [first, extra] = parsed.positionals;
    if (sub === 'list' && first !== undefined) throw new UsageError(`unexpected argument "${first}"`);
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}" (${sub} takes one server name)`);
    if (sub !== 'list' && !first) throw new UsageError('needs a server name');
    name = first ?? '';
    workspace = values.workspace === undefined ? process.cwd() : existingPath('--workspace', values.workspace, 'folder');
    // Keel's home (the user's mcp.json, the approvals): --storage (a folder that exists), else $KEEL_HOME, else ~/.keel.
    keelHome = storageOption(values.storage, process.env);
    extraFiles = (values['mcp-config'] ?? []).map((f) => existingPath('--mcp-config', f, 'file'));
    // A file the person named that Keel cannot use is bad usage, as in keel run.
    for (const file of extraFiles) {
      const problems = readConfigFile(file, 'cli', process.env, true).problems;
      if (problems.length > 0) throw new UsageError(`--mcp-config ${file}: ${problems.map((p) => p.message).join('; ')}`);
    }
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(MCP_HELP);
      return 0;
    }
    if (err instanceof UsageError) return usage(sub, err.message);
    throw err;
  }
  switch (sub) {
    case 'list':
      return list(workspace, keelHome, extraFiles, Boolean(values.json));
    case 'tools':
      return tools(workspace, keelHome, extraFiles, name, Boolean(values.json));
    case 'remove': {
      const scope = values.scope;
      if (scope !== undefined && scope !== 'project' && scope !== 'user') return usage(sub, `--scope must be project or user (got "${scope}")`);
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
    case 'revoke':
      return await approval(sub, workspace, keelHome, name);
    case 'login':
    case 'logout': {
      const { mcpLoginCommand } = await import('./login');
      return mcpLoginCommand(sub, name, { workspace, keelHome, extraFiles, out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });
    }
  }
}

/**
 * `keel mcp list`: every server with its state. A configuration file that cannot be used (not
 * readable, not JSON, not `{"mcpServers": …}`) is named as broken, never passed over as "no
 * servers", and the exit status is 1; problems with single entries are listed too (exit 0).
 */
async function list(workspace: string, keelHome: string, extraFiles: string[], json: boolean): Promise<number> {
  const trust = new WorkspaceTrust({ workspace, keelHome });
  const hub = new McpHub({ workspace, keelHome, extraConfigFiles: extraFiles, log: quietLog, trust });
  try {
    await hub.start();
    const servers = hub.status();
    // A problem of a whole file (an entry's problems name their server).
    const broken = [...new Set(hub.problems.filter((p) => !p.message.startsWith('server "')).map((p) => p.source))];
    if (json) {
      process.stdout.write(`${JSON.stringify({ servers, problems: hub.problems, broken })}\n`);
      return broken.length > 0 ? 1 : 0;
    }
    for (const p of hub.problems) process.stderr.write(`keel mcp: ${p.source}: ${p.message}\n`);
    for (const s of servers) process.stdout.write(`${line(s)}\n`);
    if (broken.length > 0) {
      const files = broken.join(', ');
      const one = broken.length === 1;
      const lead = servers.length === 0 ? 'No MCP server could be read: ' : '';
      process.stdout.write(`${lead}${files} ${one ? 'is' : 'are'} broken (see above); ${one ? 'its' : 'their'} servers are not listed.\n`);
      return 1;
    }
    if (servers.length === 0) process.stdout.write(`No MCP servers configured (looked in ${projectConfigPath(workspace)} and ${userConfigPath(keelHome)}).\n`);
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
    const { trustCommand } = await import('../trust');
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

const ADD_OPTIONS = {
  transport: { type: 'string', short: 't' },
  scope: { type: 'string', short: 's' },
  env: { type: 'string', short: 'e', multiple: true },
  header: { type: 'string', short: 'H', multiple: true },
  workspace: { type: 'string' },
} as const;

/** `keel mcp add`: everything after `--` is the server's command line, untouched. */
async function addCommand(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const head = dash >= 0 ? argv.slice(0, dash) : argv;
  const commandLine = dash >= 0 ? argv.slice(dash + 1) : [];
  let parsed;
  let workspace: string;
  try {
    parsed = parseCommandLine(head, ADD_OPTIONS, true);
    workspace = parsed.values.workspace === undefined ? process.cwd() : existingPath('--workspace', parsed.values.workspace, 'folder');
  } catch (err) {
    if (err instanceof UsageError) return usage('add', err.message);
    throw err;
  }
  const { values, positionals } = parsed;
  const [name, ...more] = positionals;
  if (!name) return usage('add', 'needs a server name: keel mcp add NAME -- COMMAND [ARGS...]');
  const transport = values.transport ?? 'stdio';
  const scope = values.scope ?? 'project';
  if (scope !== 'project' && scope !== 'user') return usage('add', `--scope must be project or user (got "${scope}")`);
  const keelHome = defaultStorage(process.env);
  let spec: McpServerSpec;
  if (transport === 'stdio') {
    const words = [...more, ...commandLine];
    if (words.length === 0) return usage('add', `needs the server's command: keel mcp add ${name} -- COMMAND [ARGS...]`);
    if (values.header) return usage('add', '-H/--header is for http and sse servers');
    const env: Record<string, string> = {};
    for (const kv of values.env ?? []) {
      const eq = kv.indexOf('=');
      if (eq <= 0) return usage('add', `-e needs KEY=VALUE (got "${kv}")`);
      env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    spec = { transport: 'stdio', command: words[0]!, args: words.slice(1), env };
  } else if (transport === 'http' || transport === 'sse') {
    if (more.length !== 1 || commandLine.length > 0) return usage('add', `--transport ${transport} takes a name and exactly one URL: keel mcp add --transport ${transport} NAME URL`);
    if (values.env) return usage('add', '-e/--env is for stdio servers');
    const headers: Record<string, string> = {};
    for (const h of values.header ?? []) {
      const colon = h.indexOf(':');
      if (colon <= 0) return usage('add', `-H needs 'Name: value' (got "${h}")`);
      headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
    }
    try {
      const u = new URL(more[0]!);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return usage('add', `the URL must be http or https (got ${u.protocol})`);
    } catch {
      return usage('add', `"${more[0]}" is not a URL`);
    }
    spec = { transport, url: more[0]!, headers };
  } else {
    return usage('add', `--transport must be stdio, http or sse (got "${transport}")`);
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

/** A usage error of `keel mcp [SUB]`: one line and a pointer to the help, exit 2 (as every command's). */
function usage(sub: string | undefined, msg: string): number {
  return reportUsage(sub ? `mcp ${sub}` : 'mcp', new UsageError(msg));
}
