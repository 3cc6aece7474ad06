import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomicSync } from '../store/atomicFile';
import { SERVER_NAME } from './config';
import type { McpServerSpec } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Adds and removes servers in a `.mcp.json`-format file, as `claude mcp add` / `remove` do: the
 * rest of the file is kept as it is; a file that is not valid JSON is never overwritten (an
 * error says so). Writes are atomic. Throws McpConfigEditError with a message for people.
 */
export class McpConfigEditError extends Error {}

/** The file entry for a spec, in Claude Code's format. */
export function entryOf(spec: McpServerSpec): Record<string, unknown> {
  if (spec.transport === 'stdio') return { type: 'stdio', command: spec.command, args: spec.args, ...(Object.keys(spec.env).length ? { env: spec.env } : {}) };
  return { type: spec.transport, url: spec.url, ...(Object.keys(spec.headers).length ? { headers: spec.headers } : {}) };
}

export function addServer(path: string, name: string, spec: McpServerSpec): void {
  if (!SERVER_NAME.test(name)) throw new McpConfigEditError(`"${name}" is not a valid server name: use letters, digits, "-" and single "_"`);
  const file = readFile(path);
  const servers = serversOf(file, path);
  if (name in servers) throw new McpConfigEditError(`a server named "${name}" already exists in ${path}; remove it first`);
  servers[name] = entryOf(spec);
  write(path, { ...file, mcpServers: servers });
}

/** Removes `name`; false when the file does not define it. */
export function removeServer(path: string, name: string): boolean {
  const file = readFile(path);
  const servers = serversOf(file, path);
  if (!(name in servers)) return false;
  delete servers[name];
  write(path, { ...file, mcpServers: servers });
  return true;
}

function readFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new McpConfigEditError(`cannot read ${path}: ${errorMessage(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new McpConfigEditError(`${path} is not valid JSON (${errorMessage(err)}); fix it first, Keel will not overwrite it`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new McpConfigEditError(`${path} does not hold a JSON object; Keel will not overwrite it`);
  return json as Record<string, unknown>;
}

function serversOf(file: Record<string, unknown>, path: string): Record<string, unknown> {
  const servers = file.mcpServers ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new McpConfigEditError(`"mcpServers" in ${path} is not an object; Keel will not overwrite it`);
  return { ...(servers as Record<string, unknown>) };
}

function write(path: string, file: Record<string, unknown>): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomicSync(path, `${JSON.stringify(file, null, 2)}\n`);
  } catch (err) {
    throw new McpConfigEditError(`cannot write ${path}: ${errorMessage(err)}`);
  }
}
