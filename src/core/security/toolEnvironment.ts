import { MIN_KNOWN_SECRET_LENGTH } from './secrets';

/**
 * The environment of every process Keel starts on the model's behalf (Bash, ripgrep for Glob and
 * Grep; hooks and MCP servers use it too): Keel's own environment without
 *
 * 1. **Keel's provider keys** — `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `OPENAI_API_KEY`,
 *    `CLAUDE_CODE_OAUTH_TOKEN`, and any `KEEL_*` variable whose name says it is a secret
 *    (`KEEL_*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`, `*AUTH*`);
 * 2. **any variable holding a key Keel holds** — whose value contains one of `secretValues` (the
 *    keys read from SecretStorage or the environment), whatever its name (`MY_KEY=$ANTHROPIC_API_KEY`);
 * 3. **variables that would make the permission analysis unsound**: they make a command that the
 *    engine judged read-only run code, or read or change a place its command line does not name —
 *    see `ANALYSIS_VARIABLES` and `ANALYSIS_PREFIXES`;
 *
 * except the names in `passThrough`, which the person chose (from a place a repository cannot
 * write: an application-scoped VS Code setting (user settings only), `--pass-env`, `~/.keel/settings.json`). Pure.
 */
export interface ToolEnvironmentPolicy {
  /** Values of keys Keel holds; a variable whose value contains one is removed. */
  secretValues?: Iterable<string>;
  /** Names kept even if a rule above would remove them. */
  passThrough?: Iterable<string>;
}

/** The keys Keel reads for its providers (and Claude Code's, which a person may have set too). */
export const PROVIDER_KEY_VARIABLES: readonly string[] = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'];

const KEEL_SECRET_NAME = /^KEEL_.*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

/** A provider key's name, or a `KEEL_*` name that says it holds a secret. */
export function isKeyVariable(name: string): boolean {
  return PROVIDER_KEY_VARIABLES.includes(name) || KEEL_SECRET_NAME.test(name);
}

/**
 * Variables that change what a command the engine can allow does, without showing on its command
 * line. Each is read by bash itself or by a program the read-only allowlist or a typical rule
 * covers:
 * - bash: `BASH_ENV` and `ENV` (a file run before every `bash -c`/`sh -c`), `CDPATH` (where `cd`
 *   goes), `SHELLOPTS`/`BASHOPTS` (e.g. `cdable_vars`, `extglob`, `xtrace` to a chosen fd),
 *   `GLOBIGNORE`, `IFS`, `PROMPT_COMMAND`, `PS4`, `BASH_XTRACEFD`, `EXECIGNORE`; exported
 *   functions (`BASH_FUNC_name%%`, see ANALYSIS_PREFIXES) replace commands such as `ls` by code;
 * - programs' own configuration by environment: `RIPGREP_CONFIG_PATH` (`--pre=sh`), `GIT_CONFIG*`
 *   (any config: `core.pager`, `core.fsmonitor`, …), `GIT_DIR`/`GIT_WORK_TREE`/`GIT_INDEX_FILE`/
 *   `GIT_OBJECT_DIRECTORY`/`GIT_COMMON_DIR` (another repository), the programs git runs
 *   (`GIT_EXTERNAL_DIFF`, `GIT_PAGER`, `GIT_EDITOR`, `GIT_SEQUENCE_EDITOR`, `GIT_SSH`,
 *   `GIT_SSH_COMMAND`, `GIT_ASKPASS`, `GIT_PROXY_COMMAND`, `GIT_EXEC_PATH`, `GIT_TEMPLATE_DIR`),
 *   `PAGER`, `MANPAGER`, `MANOPT`, `EDITOR`, `VISUAL`, `LESSOPEN`, `LESSCLOSE`, `LESSKEYIN`,
 *   `TAR_OPTIONS` (`--to-command`), `GREP_OPTIONS`, `GZIP`, `XZ_OPT` (options a command line does
 *   not show);
 * - code loaded into every program or interpreter: `LD_PRELOAD`, `LD_AUDIT`, `NODE_OPTIONS`
 *   (`--require`), `PERL5OPT`, `RUBYOPT`, `PYTHONSTARTUP`, `PYTHONINSPECT`.
 * Library search paths (`PATH`, `LD_LIBRARY_PATH`, `PYTHONPATH`, `NODE_PATH`) are kept: ordinary
 * work needs them, and they name places, not code to run.
 */
export const ANALYSIS_VARIABLES: ReadonlySet<string> = new Set([
  'BASH_ENV',
  'ENV',
  'CDPATH',
  'SHELLOPTS',
  'BASHOPTS',
  'GLOBIGNORE',
  'IFS',
  'PROMPT_COMMAND',
  'PS4',
  'BASH_XTRACEFD',
  'EXECIGNORE',
  'RIPGREP_CONFIG_PATH',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'GIT_PROXY_COMMAND',
  'GIT_EXEC_PATH',
  'GIT_TEMPLATE_DIR',
  'PAGER',
  'MANPAGER',
  'MANOPT',
  'EDITOR',
  'VISUAL',
  'LESSOPEN',
  'LESSCLOSE',
  'LESSKEYIN',
  'TAR_OPTIONS',
  'GREP_OPTIONS',
  'GZIP',
  'XZ_OPT',
  'LD_PRELOAD',
  'LD_AUDIT',
  'NODE_OPTIONS',
  'PERL5OPT',
  'RUBYOPT',
  'PYTHONSTARTUP',
  'PYTHONINSPECT',
]);

/** Prefixes of the same kind: exported bash functions, and every way to pass git configuration. */
export const ANALYSIS_PREFIXES: readonly string[] = ['BASH_FUNC_', 'GIT_CONFIG'];

/** What a person may name to pass through: an environment variable name. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `name=value` is kept out of tool processes, or null when it is passed on. */
export function removalReason(name: string, value: string, secretValues: readonly string[]): 'provider key' | 'holds a key Keel holds' | 'changes what commands do' | null {
  if (isKeyVariable(name)) return 'provider key';
  if (secretValues.some((s) => value.includes(s))) return 'holds a key Keel holds';
  if (ANALYSIS_VARIABLES.has(name) || ANALYSIS_PREFIXES.some((p) => name.startsWith(p))) return 'changes what commands do';
  return null;
}

/** The environment for a tool process: `base` (default: Keel's own) filtered as described above. */
export function toolEnvironment(policy: ToolEnvironmentPolicy = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const keep = new Set(policy.passThrough ?? []);
  const secrets = [...(policy.secretValues ?? [])].filter((s) => s.length >= MIN_KNOWN_SECRET_LENGTH);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (keep.has(name) || removalReason(name, value, secrets) === null) env[name] = value;
  }
  return env;
}
