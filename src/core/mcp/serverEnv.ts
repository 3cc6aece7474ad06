/**
 * The environment of an MCP server process Keel starts: Keel's own environment without Keel's
 * provider keys (and without any variable whose value holds a key Keel holds), plus the variables
 * the server's configuration names. A server configured by the person may name a key explicitly
 * in its `env` (user and `--mcp-config` files are trusted); a project file may not (see
 * `isProviderKeyName`, used by the config loader to refuse `${ANTHROPIC_API_KEY}` there).
 *
 * TODO(issue 9): replace `baseServerEnvironment` with `toolEnvironment()` from
 * src/core/security/toolEnvironment.ts (the shared function for every tool process: Bash,
 * hooks, MCP servers) once it lands; keep `isProviderKeyName` pointing at its
 * `PROVIDER_KEY_VARIABLES`.
 */
export const PROVIDER_KEY_VARIABLES: readonly string[] = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'];

const KEEL_SECRET_NAME = /^KEEL_.*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

/** Keys shorter than this are not matched by value (too many false positives). */
const MIN_SECRET_LENGTH = 8;

/** True for the names of Keel's provider keys (never expanded from a project file). */
export function isProviderKeyName(name: string): boolean {
  return PROVIDER_KEY_VARIABLES.includes(name) || KEEL_SECRET_NAME.test(name);
}

/** `base` without provider keys and without variables whose value contains one of `secretValues`. Pure. */
export function baseServerEnvironment(base: NodeJS.ProcessEnv, secretValues: readonly string[] = []): Record<string, string> {
  const secrets = secretValues.filter((s) => s.length >= MIN_SECRET_LENGTH);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || isProviderKeyName(name)) continue;
    if (secrets.some((s) => value.includes(s))) continue;
    out[name] = value;
  }
  return out;
}

/** The full environment for one server: the filtered base, then the server's own `env` on top. */
export function serverEnvironment(base: NodeJS.ProcessEnv, configured: Readonly<Record<string, string>>, secretValues: readonly string[] = []): Record<string, string> {
  return { ...baseServerEnvironment(base, secretValues), ...configured };
}
