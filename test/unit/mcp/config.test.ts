import { boundedDefinition } from '../../../src/core/mcp/modelTools';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeTarget, loadMcpConfig, readConfigFile } from '../../../src/core/mcp/config';
import { addServer, removeServer } from '../../../src/core/mcp/configEdit';
import { expandVars } from '../../../src/core/mcp/envExpand';
import { limitsFromEnv } from '../../../src/core/mcp/limits';
import { modelToolName, serverOfToolName } from '../../../src/core/mcp/names';
import { tempDir } from './helpers';

/** `.mcp.json` as Claude Code writes it, Keel's user file and --mcp-config files. */
function write(path: string, json: unknown): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
}

describe('${VAR} expansion', () => {
  it('expands set variables, defaults for unset or empty ones, and reports missing ones', () => {
    expect(expandVars('${A}/${B:-two}/${C:-three}/${D}', { A: 'one', C: '' })).toEqual({ value: 'one/two/three/', missing: ['D'], refused: [] });
    expect(expandVars('x${EMPTY}y', { EMPTY: '' }).value).toBe('xy');
    expect(expandVars('$A ${not valid} ${1X}', { A: 'a' }).value).toBe('$A ${not valid} ${1X}');
    expect(expandVars('${SECRET}', { SECRET: 's' }, (n) => n === 'SECRET')).toEqual({ value: '', missing: [], refused: ['SECRET'] });
  });
});

describe('loading configuration', () => {
  it("reads Claude Code's format: stdio (type optional), http with headers, sse", () => {
    const ws = tempDir();
    write(join(ws, '.mcp.json'), {
      mcpServers: {
        files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '${HOME:-/home}'], env: { LEVEL: '${LOG_LEVEL:-info}' } },
        api: { type: 'http', url: 'https://api.example.com/mcp?k=${API_KEY}', headers: { Authorization: 'Bearer ${API_KEY}' } },
        legacy: { type: 'sse', url: 'http://localhost:9000/sse' },
      },
      other: 'ignored',
    });
    const set = loadMcpConfig({ workspace: ws, keelHome: tempDir(), env: { HOME: '/h', API_KEY: 'k1' } });
    expect(set.problems).toEqual([]);
    expect(set.servers.map((s) => [s.name, s.scope, s.resolved])).toEqual([
      ['files', 'project', { transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/h'], env: { LEVEL: 'info' } }],
      ['api', 'project', { transport: 'http', url: 'https://api.example.com/mcp?k=k1', headers: { Authorization: 'Bearer k1' } }],
      ['legacy', 'project', { transport: 'sse', url: 'http://localhost:9000/sse', headers: {} }],
    ]);
    expect(set.servers[0]!.template).toMatchObject({ args: ['-y', '@modelcontextprotocol/server-filesystem', '${HOME:-/home}'] });
    expect(describeTarget(set.servers[0]!.resolved!)).toBe('npx -y @modelcontextprotocol/server-filesystem /h');
  });

  it('a server whose variables are missing is listed with the problem and cannot start', () => {
    const ws = tempDir();
    write(join(ws, '.mcp.json'), { mcpServers: { gh: { type: 'http', url: 'https://x/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } } } });
    const [gh] = loadMcpConfig({ workspace: ws, keelHome: tempDir(), env: {} }).servers;
    expect(gh!.resolved).toBeNull();
    expect(gh!.problems).toEqual(['environment variable GITHUB_TOKEN is not set (use ${NAME:-default} for a default)']);
  });

  it("a project file cannot hand Keel's provider keys to a server; the user's own file can", () => {
    const ws = tempDir();
    const home = tempDir();
    const entry = { command: 'srv', env: { KEY: '${ANTHROPIC_API_KEY}', OTHER: '${OPENAI_API_KEY:-none}' } };
    write(join(ws, '.mcp.json'), { mcpServers: { fromRepo: entry } });
    write(join(home, 'mcp.json'), { mcpServers: { mine: entry } });
    const env = { ANTHROPIC_API_KEY: 'sk-ant-secret', OPENAI_API_KEY: 'sk-openai' };
    const servers = loadMcpConfig({ workspace: ws, keelHome: home, env }).servers;
    const repo = servers.find((s) => s.name === 'fromRepo')!;
    expect(repo.resolved).toBeNull();
    expect(repo.problems.join(' ')).toContain("a project file may not use Keel's provider keys ANTHROPIC_API_KEY, OPENAI_API_KEY");
    expect(servers.find((s) => s.name === 'mine')!.resolved).toMatchObject({ env: { KEY: 'sk-ant-secret', OTHER: 'sk-openai' } });
  });

  it('bad files and entries are problems, never crashes; good entries beside them still load', () => {
    const ws = tempDir();
    write(join(ws, '.mcp.json'), '{ "mcpServers": { oops');
    expect(loadMcpConfig({ workspace: ws, keelHome: tempDir(), env: {} })).toMatchObject({ servers: [], problems: [{ message: expect.stringContaining('not valid JSON') }] });
    write(join(ws, '.mcp.json'), { servers: {} });
    expect(loadMcpConfig({ workspace: ws, keelHome: tempDir(), env: {} }).problems[0]!.message).toContain('expected {"mcpServers"');
    write(join(ws, '.mcp.json'), {
      mcpServers: {
        'a__b': { command: 'x' },
        'a.b': { command: 'x' },
        weird: { type: 'websocket', url: 'ws://x' },
        nocmd: { type: 'stdio', command: '' },
        ftp: { type: 'http', url: 'ftp://x/y' },
        args: { command: 'x', args: 'not-a-list' },
        extra: { command: 'x', cwd: '/tmp', headersHelper: 'sh -c evil' },
        good: { command: 'ok' },
      },
    });
    const set = loadMcpConfig({ workspace: ws, keelHome: tempDir(), env: {} });
    expect(set.servers.map((s) => s.name)).toEqual(['ftp', 'extra', 'good']);
    expect(set.servers.find((s) => s.name === 'ftp')).toMatchObject({ resolved: null, problems: ['url must be http or https (got ftp:)'] });
    const ignored = ['"cwd" is not supported by Keel and was ignored: the server starts in the workspace folder', '"headersHelper" is not supported by Keel and was ignored'];
    expect(set.servers.find((s) => s.name === 'extra')!.problems).toEqual(ignored);
    expect(set.problems.map((p) => p.message)).toEqual([
      expect.stringContaining('server "a__b": the name may hold only'),
      expect.stringContaining('server "a.b": the name may hold only'),
      'server "weird": unknown type "websocket" (expected "stdio", "http" or "sse")',
      expect.stringContaining('server "nocmd": command: command must not be empty'),
      expect.stringContaining('server "args": args'),
      // What is ignored of a server that loads is a problem of its file too (keel mcp list, keel run say it).
      ...ignored.map((m) => `server "extra": ${m}`),
    ]);
  });

  it('--mcp-config wins over the project, which wins over the user; a missing --mcp-config is a problem', () => {
    const ws = tempDir();
    const home = tempDir();
    write(join(home, 'mcp.json'), { mcpServers: { s: { command: 'user' }, u: { command: 'u' } } });
    write(join(ws, '.mcp.json'), { mcpServers: { s: { command: 'project' } } });
    const cli = write(join(tempDir(), 'extra.json'), { mcpServers: { s: { command: 'cli' } } });
    const set = loadMcpConfig({ workspace: ws, keelHome: home, extraFiles: [cli], env: {} });
    expect(set.servers.map((s) => [s.name, s.scope, s.resolved && s.resolved.transport === 'stdio' ? s.resolved.command : null])).toEqual([
      ['s', 'cli', 'cli'],
      ['u', 'user', 'u'],
    ]);
    expect(set.problems.map((p) => p.message)).toEqual([expect.stringContaining('also defined in'), expect.stringContaining('also defined in')]);
    expect(readConfigFile(join(ws, 'missing.json'), 'cli', {}, true).problems[0]!.message).toBe('file not found');
    expect(readConfigFile(join(ws, 'missing.json'), 'project', {}).problems).toEqual([]);
  });
});

describe('editing .mcp.json like claude mcp add/remove', () => {
  it('adds and removes entries, keeps the rest of the file, refuses to overwrite a broken file', () => {
    const file = join(tempDir(), '.mcp.json');
    write(file, { mcpServers: { keep: { command: 'k' } }, note: 'kept' });
    addServer(file, 'files', { transport: 'stdio', command: 'npx', args: ['-y', 'x'], env: { A: '1' } });
    addServer(file, 'web', { transport: 'http', url: 'https://x/mcp', headers: {} });
    expect(() => addServer(file, 'web', { transport: 'sse', url: 'https://y', headers: {} })).toThrow('already exists');
    const set = readConfigFile(file, 'project', {});
    expect(set.servers.map((s) => s.name)).toEqual(['keep', 'files', 'web']);
    expect(removeServer(file, 'files')).toBe(true);
    expect(removeServer(file, 'files')).toBe(false);
    expect(readConfigFile(file, 'project', {}).servers.map((s) => s.name)).toEqual(['keep', 'web']);
    write(file, '{broken');
    expect(() => addServer(file, 'x', { transport: 'stdio', command: 'c', args: [], env: {} })).toThrow('will not overwrite');
  });
});

describe('names and limits', () => {
  it('gives provider-safe, stable, distinct tool names', () => {
    expect(modelToolName('gh', 'create_issue')).toBe('mcp__gh__create_issue');
    const dotted = modelToolName('gh', 'repo.list');
    expect(dotted).toBe('mcp__gh__repo_list');
    const clash = modelToolName('gh', 'repo_list', new Set([dotted]));
    expect(clash).toMatch(/^mcp__gh__repo_list_[0-9a-f]{8}$/);
    const long = modelToolName('server', 'x'.repeat(100));
    expect(long.length).toBe(64);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(serverOfToolName('mcp__my-server__tool__with__underscores')).toBe('my-server');
  });

  it('honours MCP_TIMEOUT, MCP_TOOL_TIMEOUT and MAX_MCP_OUTPUT_TOKENS; ignores bad values with a warning', () => {
    expect(limitsFromEnv({ MCP_TIMEOUT: '5000', MCP_TOOL_TIMEOUT: '1000', MAX_MCP_OUTPUT_TOKENS: '50000' }).limits).toMatchObject({ connectTimeoutMs: 5000, toolTimeoutMs: 1000, maxOutputTokens: 50000 });
    const bad = limitsFromEnv({ MCP_TIMEOUT: 'soon', MAX_MCP_OUTPUT_TOKENS: '-1' });
    expect(bad.limits).toMatchObject({ connectTimeoutMs: 30_000, toolTimeoutMs: 600_000, maxOutputTokens: 25_000 });
    expect(bad.problems).toEqual(['MCP_TIMEOUT=soon is not a positive integer; using 30000', 'MAX_MCP_OUTPUT_TOKENS=-1 is not a positive integer; using 25000']);
  });
});

describe('what a server may put into every model request is bounded', () => {
  it('cuts long descriptions, drops huge or non-object schemas with a note, keeps sane ones', () => {
    const tool = (description: string, inputSchema: Record<string, unknown>) => ({ name: 't', description, inputSchema, readOnlyHint: false });
    const sane = boundedDefinition('mcp__s__t', 's', tool('adds', { type: 'object', properties: { a: { type: 'number' } } }));
    expect(sane).toEqual({ name: 'mcp__s__t', description: 'adds', input_schema: { type: 'object', properties: { a: { type: 'number' } } } });
    const long = boundedDefinition('mcp__s__t', 's', tool('d'.repeat(10_000), { type: 'object' }));
    expect(long.description.length).toBeLessThanOrEqual(2049);
    const huge = boundedDefinition('mcp__s__t', 's', tool('adds', { type: 'object', properties: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(20) }])) }));
    expect(huge.input_schema).toEqual({ type: 'object', properties: {} });
    expect(huge.description).toContain('too large');
    expect(boundedDefinition('mcp__s__t', 's', tool('', { type: 'array' }))).toEqual({ name: 'mcp__s__t', description: 't (MCP server s)', input_schema: { type: 'object', properties: {} } });
  });
});
