import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { expandVars } from './envExpand';
import { isProviderKeyName } from './serverEnv';
import { splitProjectEnv } from '../trust/projectEnv';
import type { McpConfigProblem, McpConfigSet, McpScope, McpServerConfig, McpServerSpec } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Reads MCP server configuration in Claude Code's format:
 *
 *   {"mcpServers": {"name": {"type": "stdio", "command": "npx", "args": [...], "env": {...}},
 *                   "web":  {"type": "http", "url": "https://…", "headers": {...}}}}
 *
 * from the workspace's `.mcp.json` (scope `project`), the user's `<keel home>/mcp.json` (`user`)
 * and files named with `--mcp-config` (`cli`). `${VAR}` / `${VAR:-default}` are expanded in
 * command, args, env values, url and header values. Never throws: an unreadable or malformed file
 * is a problem and contributes no server; a bad entry is a problem and is skipped; an entry whose
 * variables are missing is kept (listed, with its problem) but cannot start.
 */

/** A server name must be usable in `mcp__<server>__<tool>` and in permission rules. */
export const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;
const MAX_NAME = 64;

const stringMap = z.record(z.string(), z.string());
const stdioEntry = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1, 'command must not be empty'),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
});
const remoteEntry = z.looseObject({
  type: z.enum(['http', 'sse']).optional(),
  url: z.string().min(1, 'url must not be empty'),
  headers: stringMap.optional(),
});
const fileSchema = z.looseObject({ mcpServers: z.record(z.string(), z.unknown()) });

const KNOWN_KEYS: Record<'stdio' | 'remote', ReadonlySet<string>> = {
  stdio: new Set(['type', 'command', 'args', 'env']),
  remote: new Set(['type', 'url', 'headers']),
};

export interface McpConfigSources {
  workspace: string;
  /** Keel's home (`$KEEL_HOME` or `~/.keel`); its `mcp.json` holds the user's servers. */
  keelHome: string;
  /** `--mcp-config` files, in the order given (a later file wins over an earlier one). */
  extraFiles?: string[];
  env?: Readonly<Record<string, string | undefined>>;
}

export function projectConfigPath(workspace: string): string {
  return join(workspace, '.mcp.json');
}

export function userConfigPath(keelHome: string): string {
  return join(keelHome, 'mcp.json');
}

/** Every configured server of a workspace, one per name: cli > project > user. Never throws. */
export function loadMcpConfig(sources: McpConfigSources): McpConfigSet {
  const env = sources.env ?? process.env;
  const problems: McpConfigProblem[] = [];
  const files: [string, McpScope][] = [
    [userConfigPath(sources.keelHome), 'user'],
    [projectConfigPath(sources.workspace), 'project'],
    ...(sources.extraFiles ?? []).map((f): [string, McpScope] => [resolve(sources.workspace, f), 'cli']),
  ];
  const byName = new Map<string, McpServerConfig>();
  for (const [path, scope] of files) {
    const parsed = readConfigFile(path, scope, env, scope === 'cli');
    problems.push(...parsed.problems);
    for (const server of parsed.servers) {
      const previous = byName.get(server.name);
      if (previous) problems.push({ source: previous.source, message: `server "${server.name}" is also defined in ${server.source} (${server.scope}), which wins` });
      byName.set(server.name, server);
    }
  }
  return { servers: [...byName.values()], problems };
}

/**
 * One file. `required`: a missing file is a problem (a `--mcp-config` the person named) rather
 * than simply no servers.
 */
export function readConfigFile(path: string, scope: McpScope, env: Readonly<Record<string, string | undefined>>, required = false): McpConfigSet {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !required) return { servers: [], problems: [] };
    return { servers: [], problems: [{ source: path, message: code === 'ENOENT' ? 'file not found' : `cannot read it (${errorMessage(err)})` }] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { servers: [], problems: [{ source: path, message: `not valid JSON (${errorMessage(err)})` }] };
  }
  const file = fileSchema.safeParse(json);
  if (!file.success) return { servers: [], problems: [{ source: path, message: 'expected {"mcpServers": {"<name>": {...}}}' }] };
  const servers: McpServerConfig[] = [];
  const problems: McpConfigProblem[] = [];
  for (const [name, entry] of Object.entries(file.data.mcpServers)) {
    const parsed = parseEntry(name, entry, scope, path, env);
    if ('error' in parsed) problems.push({ source: path, message: `server "${name}": ${parsed.error}` });
    else {
      servers.push(parsed);
      // What Keel ignores of a server it uses is said where the file's problems are (keel mcp list,
      // keel run's stderr and `mcp` lines), not only once the server fails (docs/mcp.md).
      for (const note of parsed.problems.filter((p) => p.startsWith('"'))) problems.push({ source: path, message: `server "${name}": ${note}` });
    }
  }
  return { servers, problems };
}

function parseEntry(name: string, entry: unknown, scope: McpScope, source: string, env: Readonly<Record<string, string | undefined>>): McpServerConfig | { error: string } {
  if (!SERVER_NAME.test(name) || name.length > MAX_NAME) {
    return { error: `the name may hold only letters, digits, "-" and single "_" (no "__"), at most ${MAX_NAME} characters` };
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return { error: 'expected an object' };
  const type = (entry as { type?: unknown }).type;
  const problems: string[] = [];
  let template: McpServerSpec;
  let known: ReadonlySet<string>;
  if (type === undefined ? 'command' in entry : type === 'stdio') {
    const r = stdioEntry.safeParse(entry);
    if (!r.success) return { error: describeZodError(r.error) };
    template = { transport: 'stdio', command: r.data.command, args: r.data.args ?? [], env: r.data.env ?? {} };
    known = KNOWN_KEYS.stdio;
  } else if (type === undefined || type === 'http' || type === 'sse') {
    const r = remoteEntry.safeParse(entry);
    if (!r.success) return { error: describeZodError(r.error) };
    template = { transport: r.data.type ?? 'http', url: r.data.url, headers: r.data.headers ?? {} };
    known = KNOWN_KEYS.remote;
  } else {
    return { error: `unknown type ${JSON.stringify(type)} (expected "stdio", "http" or "sse")` };
  }
  for (const key of Object.keys(entry)) if (!known.has(key)) problems.push(unsupportedKey(key, name));
  const expanded = expandSpec(template, env, scope === 'project');
  problems.push(...expanded.problems);
  let spec = expanded.spec;
  // A repository's server never gets what Keel strips from every tool process (NODE_OPTIONS,
  // LD_PRELOAD, BASH_ENV…) nor what decides which code it loads (PATH, PYTHONPATH…): dropped,
  // approved or not, and said (docs/mcp.md, "Trust").
  if (scope === 'project' && spec.transport === 'stdio') {
    const { kept, dropped } = splitProjectEnv(spec.env);
    for (const d of dropped) problems.push(`env ${d.name} ignored: a project's server may not set it (${d.why})`);
    spec = { ...spec, env: kept };
  }
  const blocking = expanded.problems.length > 0;
  return { name, scope, source, template, resolved: blocking ? null : spec, problems };
}

/**
 * Expands `${VAR}` in every field that may hold it. In a project file (a repository's), Keel's
 * provider keys are never expanded: a cloned repository must not be able to hand them to a
 * server it names.
 */
export function expandSpec(template: McpServerSpec, env: Readonly<Record<string, string | undefined>>, fromProject: boolean): { spec: McpServerSpec; problems: string[] } {
  const missing = new Set<string>();
  const refused = new Set<string>();
  const x = (s: string): string => {
    const r = expandVars(s, env, fromProject ? isProviderKeyName : undefined);
    r.missing.forEach((m) => missing.add(m));
    r.refused.forEach((m) => refused.add(m));
    return r.value;
  };
  const map = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, x(v)]));
  const spec: McpServerSpec =
    template.transport === 'stdio'
      ? { transport: 'stdio', command: x(template.command), args: template.args.map(x), env: map(template.env) }
      : { transport: template.transport, url: x(template.url), headers: map(template.headers) };
  const problems: string[] = [];
  if (missing.size > 0) problems.push(`environment variable${missing.size > 1 ? 's' : ''} ${[...missing].join(', ')} ${missing.size > 1 ? 'are' : 'is'} not set (use \${NAME:-default} for a default)`);
  if (refused.size > 0) {
    const many = refused.size > 1;
    problems.push(`a project file may not use Keel's provider key${many ? 's' : ''} ${[...refused].join(', ')}; name ${many ? 'them' : 'it'} in ~/.keel/mcp.json instead`);
  }
  if (spec.transport !== 'stdio' && problems.length === 0) {
    try {
      const u = new URL(spec.url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') problems.push(`url must be http or https (got ${u.protocol})`);
    } catch {
      problems.push(`url "${spec.url}" is not a valid URL`);
    }
  }
  return { spec, problems };
}

/** The exact thing a person approves: the command line or the URL, as it will run. */
export function describeTarget(spec: McpServerSpec): string {
  if (spec.transport !== 'stdio') return spec.url;
  return [spec.command, ...spec.args].map(shellQuote).join(' ');
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function describeZodError(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
}

/**
 * What Keel says of a key it does not use, in words that tell what to do instead for the keys
 * people copy from Claude Code and Cline (`cwd`, `alwaysAllow`, `disabledTools`).
 */
function unsupportedKey(key: string, server: string): string {
  switch (key) {
    case 'cwd':
      return `"cwd" is not supported by Keel and was ignored: the server starts in the workspace folder`;
    case 'alwaysAllow':
      return `"alwaysAllow" is not supported by Keel and was ignored: allow a tool with a permission rule (mcp__${server}__<tool>)`;
    case 'disabledTools':
      return `"disabledTools" is not supported by Keel and was ignored: deny a tool with a permission rule (mcp__${server}__<tool>)`;
    default:
      return `"${key}" is not supported by Keel and was ignored`;
  }
}
