import { isKeyVariable, PROVIDER_KEY_VARIABLES, toolEnvironment } from '../security/toolEnvironment';

/**
 * The environment of an MCP server process Keel starts: the shared tool-process environment
 * (`toolEnvironment()`: Keel's own without its provider keys, without any variable whose value
 * holds a key Keel holds, without the variables that would make the permission analysis unsound),
 * plus the variables the server's configuration names. A server configured by the person may name
 * a key explicitly in its `env` (user and `--mcp-config` files are trusted); a project file may
 * not (see `isProviderKeyName`, used by the config loader to refuse `${ANTHROPIC_API_KEY}` there).
 */
export { PROVIDER_KEY_VARIABLES };

/** True for the names of Keel's provider keys (never expanded from a project file). */
export function isProviderKeyName(name: string): boolean {
  return isKeyVariable(name);
}

/** `base` as every tool process gets it (toolEnvironment.ts). Pure. */
export function baseServerEnvironment(base: NodeJS.ProcessEnv, secretValues: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(toolEnvironment({ secretValues, passThrough: [] }, base))) if (value !== undefined) out[name] = value;
  return out;
}

/** The full environment for one server: the filtered base, then the server's own `env` on top. */
export function serverEnvironment(base: NodeJS.ProcessEnv, configured: Readonly<Record<string, string>>, secretValues: readonly string[] = []): Record<string, string> {
  return { ...baseServerEnvironment(base, secretValues), ...configured };
}
