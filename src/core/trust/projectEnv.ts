import { removalReason } from '../security/toolEnvironment';

/**
 * Environment variables a workspace may never set — in a project `.mcp.json` server's `env`, in
 * the `env` of a workspace settings file — approved or not (docs/permissions.md, "Trust"): the
 * ones Keel strips from every tool process (toolEnvironment.ts: provider keys, `NODE_OPTIONS`,
 * `LD_PRELOAD`, `BASH_ENV`, `PYTHONSTARTUP`, `GIT_CONFIG*`, …), and those that decide which code
 * a program loads or which certificates it trusts (`PATH`, `LD_*`, `DYLD_*`, `PYTHONPATH`,
 * `NODE_PATH`, `JAVA_TOOL_OPTIONS`, `NODE_EXTRA_CA_CERTS`, `HOME`, …): with them an approved
 * `node tools/server.mjs` would run code the approval never showed. Names are compared in upper
 * case (Windows' environment ignores case). The person's own files (`~/.keel/mcp.json`,
 * `~/.keel/settings.json`, `--mcp-config`) may set them. Pure.
 */
const CODE_LOADING = new Set([
  'PATH',
  'HOME',
  'XDG_CONFIG_HOME',
  'NODE_PATH',
  'NODE_EXTRA_CA_CERTS',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PYTHONEXECUTABLE',
  'PYTHONBREAKPOINT',
  'PERL5LIB',
  'PERLLIB',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'CLASSPATH',
  'DENO_DIR',
  'NPM_CONFIG_PREFIX',
  'SHELL',
]);
const CODE_PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_', 'GIT_CONFIG', 'NPM_CONFIG_NODE_OPTIONS'];

/** Why a workspace may not set `name`, or null when it may (with the person's approval). */
export function forbiddenProjectVariable(name: string): string | null {
  const upper = name.toUpperCase();
  const reason = removalReason(upper, '', []);
  if (reason === 'provider key') return "it names one of Keel's provider keys";
  if (reason) return 'Keel removes it from every process it starts (it changes what commands do)';
  if (CODE_LOADING.has(upper) || CODE_PREFIXES.some((p) => upper.startsWith(p))) return 'it decides which code a program loads';
  return null;
}

/** Splits a workspace's `env` into what may be used (after approval) and what is always dropped. */
export function splitProjectEnv(env: Readonly<Record<string, string>>): { kept: Record<string, string>; dropped: { name: string; why: string }[] } {
  const kept: Record<string, string> = {};
  const dropped: { name: string; why: string }[] = [];
  for (const [name, value] of Object.entries(env)) {
    const why = forbiddenProjectVariable(name);
    if (why) dropped.push({ name, why });
    else kept[name] = value;
  }
  return { kept, dropped };
}
