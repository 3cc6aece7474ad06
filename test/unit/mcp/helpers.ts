import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { McpHub, type McpHubOptions } from '../../../src/core/mcp/hub';
import type { McpConfigSet, McpServerConfig, McpServerSpec } from '../../../src/core/mcp/types';

/** Paths of the reference servers installed as devDependencies (never downloaded at test time). */
export const ROOT = resolve(__dirname, '../../..');
export const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const FAULTY = join(ROOT, 'test/fixtures/mcp/faultyServer.mjs');

export function tempDir(prefix = 'keel-mcp-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function server(name: string, spec: McpServerSpec, scope: McpServerConfig['scope'] = 'user'): McpServerConfig {
  return { name, scope, source: `/test/${name}.json`, template: spec, resolved: spec, problems: [] };
}

export function stdio(command: string, args: string[], env: Record<string, string> = {}): McpServerSpec {
  return { transport: 'stdio', command, args, env };
}

export function nodeServer(script: string, args: string[] = [], env: Record<string, string> = {}): McpServerSpec {
  return stdio(process.execPath, [script, ...args], env);
}

/** A hub over the given servers, in a throwaway workspace and Keel home. */
export function hubOf(servers: McpServerConfig[], opts: Partial<McpHubOptions> = {}): { hub: McpHub; workspace: string; keelHome: string; logs: string[] } {
  const workspace = opts.workspace ?? tempDir('keel-mcp-ws-');
  const keelHome = opts.keelHome ?? tempDir('keel-mcp-home-');
  const logs: string[] = [];
  const config: McpConfigSet = { servers, problems: [] };
  const hub = new McpHub({ workspace, keelHome, config, env: { ...process.env }, log: (level, m) => logs.push(`${level}: ${m}`), ...opts });
  return { hub, workspace, keelHome, logs };
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => res(port));
    });
  });
}
