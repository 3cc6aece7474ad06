import { homedir } from 'node:os';
import { parseBudgetUsd } from '../core/runtime/taskBudget';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveModel } from '../core/providers/modelChoice';
import type { ProviderConfig } from '../core/providers/types';
import { secondsToMs, TIMEOUT_SECONDS_WANTED, timeoutSecondsFromText } from '../core/providers/timeouts';
import { DEFAULT_MODELS, PROVIDER_IDS } from '../shared/domain/models';
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from '../shared/domain/permissionModes';
import { ENV_NAME } from '../core/security/toolEnvironment';
import { memoryOffByEnv } from '../core/memory/settings';
import { existingPath, parseCommandLine, UsageError } from './usage';

export { UsageError } from './usage';

export interface RunArgs {
  /** The prompt; with `resume`, the follow-up (may be empty). */
  prompt: string;
  /** `--resume ID`: continue a stored task instead of starting one. */
  resume: string | undefined;
  /** `--workspace` as given (a resumed task defaults to its own workspace). */
  workspaceGiven: boolean;
  /** `--model` as given (a resumed task defaults to its own model). */
  modelGiven: boolean;
  workspace: string;
  /** The provider for a task in `mode` (its model: `providerFor`). */
  provider: ProviderConfig;
  /**
   * The models a task may use: `other` for every mode but plan (--model > $KEEL_MODEL > the
   * provider's default; a resumed task's own), `plan` in plan mode ($KEEL_PLAN_MODEL, null when
   * unset). The mode a task starts in is known only later (settings files, a batch line's own).
   */
  models: { other: string; plan: string | null };
  /** `--mode`, else `default`; without `--mode` the settings files' `defaultMode` may change it (`CliRuntime.mode`). */
  mode: PermissionMode;
  /** `--mode` as given: it wins over the settings files' `defaultMode`. */
  modeGiven: boolean;
  outputFormat: 'text' | 'stream-json';
  maxTurns: number | undefined;
  /** The store root: --storage, else $KEEL_HOME, else ~/.keel. */
  storage: string;
  /** `--mcp-config FILE` (repeatable): MCP servers for this run, trusted like the user's own. */
  mcpConfig: string[];
  /** `--pass-env NAME` (repeatable): variables tool processes keep although Keel would remove them. */
  passEnv: string[];
  /** Project memory for this run: off with `--no-memory` or `KEEL_MEMORY=off`. */
  memory: boolean;
  /** `--approve-project-hooks`: approve the workspace's own hooks before the run (docs/hooks.md). */
  approveProjectHooks: boolean;
  /** `--workers N` (default `KEEL_WORKERS`, else DEFAULT_WORKERS): run turn loops in a pool of at most N worker processes (0: in this process). */
  workers: number;
  /** `--max-budget-usd N`: the task's (a loop's: the whole loop's) budget cap in US dollars; absent: the settings' or none. */
  maxBudgetUsd?: number;
  /** `--image FILE` (repeatable, `keel run` only): images attached to the prompt, resolved from the current folder. */
  images: string[];
  /** `--workers` as given (not from KEEL_WORKERS). */
  workersGiven: boolean;
}

/** The provider a task started in `mode` uses: in plan mode the plan model when one is set. */
export function providerFor(args: Pick<RunArgs, 'provider' | 'models'>, mode: PermissionMode): ProviderConfig {
  const model = mode === 'plan' && args.models.plan ? args.models.plan : args.models.other;
  return model === args.provider.model ? args.provider : { ...args.provider, model };
}

/** The store root when --storage is not given: $KEEL_HOME, else ~/.keel. */
export function defaultStorage(env: NodeJS.ProcessEnv): string {
  return resolve(env.KEEL_HOME || join(homedir(), '.keel'));
}

const PROVIDERS = PROVIDER_IDS;
export { DEFAULT_MODELS } from '../shared/domain/models';

const RUN_OPTIONS = {
  workspace: { type: 'string' },
  provider: { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  mode: { type: 'string' },
  'output-format': { type: 'string' },
  'max-turns': { type: 'string' },
  storage: { type: 'string' },
  resume: { type: 'string' },
  'pass-env': { type: 'string', multiple: true },
  'no-memory': { type: 'boolean' },
  'mcp-config': { type: 'string', multiple: true },
  'approve-project-hooks': { type: 'boolean' },
  workers: { type: 'string' },
  'max-budget-usd': { type: 'string' },
  'stall-timeout': { type: 'string' },
  'response-timeout': { type: 'string' },
  image: { type: 'string', multiple: true },
} as const;

/**
 * Parses `keel run` arguments. Throws UsageError (a message for people, without the `keel run`
 * prefix) on bad input, HelpRequested for `--help`. The prompt is one argument: more words are
 * bad usage (a forgotten pair of quotes; or a flag with a typo's value), never joined into it.
 * `keel batch` parses the same options with its FILE where the prompt is (`what`).
 */
export function parseRunArgs(argv: string[], env: NodeJS.ProcessEnv, what: 'prompt' | 'batch file' = 'prompt'): RunArgs {
  const { values, positionals } = parseCommandLine(argv, RUN_OPTIONS, true);
  const [first = '', extra] = positionals;
  const prompt = first.trim();
  const resume = values.resume?.trim() || undefined;
  if (values.resume !== undefined && !resume) throw new UsageError('--resume needs a task id (keel tasks list shows them)');
  if (extra !== undefined) throw new UsageError(extraWord(positionals, what));
  if (!prompt && !resume) throw new UsageError(`no ${what} given`);
  const images = (values.image ?? []).map((f) => resolve(f));
  if (images.length > 0 && !prompt) throw new UsageError('--image needs a prompt to go with it');
  return { ...runArgsFrom(values, prompt, resume, env), images };
}

/** The problem with more than one positional argument of run, batch and loop (`words`: all of them). */
export function extraWord(words: readonly string[], what: 'prompt' | 'goal' | 'batch file'): string {
  const extra = JSON.stringify(words[1] ?? '');
  if (what === 'batch file') return `unexpected argument ${extra}: keel batch takes one file`;
  return `unexpected argument ${extra}: the ${what} is one argument, so put it in quotes: ${JSON.stringify(words.join(' '))}`;
}

/**
 * `--storage DIR`: it must exist (a typo would otherwise start an empty store in which a
 * person's tasks seem gone). Only Keel's default storage, $KEEL_HOME or ~/.keel, is created when
 * needed. Something there that cannot hold tasks (a file, a folder under a file, a folder this
 * user cannot read) is the store's to report: exit 3.
 */
export function storageOption(value: string | undefined, env: NodeJS.ProcessEnv): string {
  if (value === undefined) return defaultStorage(env);
  const path = resolve(value);
  try {
    statSync(path);
    return path;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return path;
  }
  throw new UsageError(`--storage ${value}: no such folder; create it first (mkdir -p ${value}), or leave --storage out to use $KEEL_HOME or ~/.keel`);
}

/** The options of `keel run` that describe how tasks run (all but --resume): `keel loop` takes them too. */
export const TASK_OPTIONS = (({ resume: _resume, image: _image, ...rest }) => rest)(RUN_OPTIONS);

type TaskOptionValues = { [K in keyof typeof TASK_OPTIONS]?: (typeof TASK_OPTIONS)[K] extends { multiple: true } ? string[] : (typeof TASK_OPTIONS)[K] extends { type: 'boolean' } ? boolean : string };

/**
 * The CLI's default pool, the same as VS Code's (`keel.workers.max` 4): one execution path for both
 * hosts, so what the CLI suite tests is what the extension runs (docs/workers.md, "One default").
 * Workers start only when a task needs one.
 */
export const DEFAULT_WORKERS = 4;

/** Checks the task options (shared by run and loop). Throws UsageError. */
export function runArgsFrom(values: TaskOptionValues, prompt: string, resume: string | undefined, env: NodeJS.ProcessEnv): RunArgs {
  const provider = (values.provider ?? 'anthropic') as (typeof PROVIDERS)[number];
  if (!PROVIDERS.includes(provider)) throw new UsageError(`--provider must be one of ${PROVIDERS.join(', ')} (got "${values.provider}")`);
  const mode = values.mode ?? 'default';
  if (!isPermissionMode(mode)) throw new UsageError(`--mode must be one of ${PERMISSION_MODES.join(', ')} (got "${values.mode}")`);
  const outputFormat = values['output-format'] ?? 'text';
  if (outputFormat !== 'text' && outputFormat !== 'stream-json') throw new UsageError(`--output-format must be text or stream-json (got "${outputFormat}")`);
  let maxTurns: number | undefined;
  if (values['max-turns'] !== undefined) {
    maxTurns = Number(values['max-turns']);
    if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new UsageError(`--max-turns must be a positive integer (got "${values['max-turns']}")`);
  }
  // KEEL_WORKERS=N is the default of --workers (KEEL_WORKERS=0: every run of a suite in process).
  const workersText = values.workers ?? (env.KEEL_WORKERS !== undefined && env.KEEL_WORKERS !== '' ? env.KEEL_WORKERS : undefined);
  let workers = DEFAULT_WORKERS;
  if (workersText !== undefined) {
    workers = Number(workersText);
    const source = values.workers !== undefined ? '--workers' : 'KEEL_WORKERS';
    if (!/^\d+$/.test(workersText.trim()) || workers > 64) throw new UsageError(`${source} must be an integer from 0 to 64 (got "${workersText}")`);
  }
  let maxBudgetUsd: number | undefined;
  if (values['max-budget-usd'] !== undefined) {
    const cap = parseBudgetUsd(values['max-budget-usd']);
    if (cap === null) throw new UsageError(`--max-budget-usd must be a positive number of US dollars, such as 5 or 0.50 (got "${values['max-budget-usd']}")`);
    maxBudgetUsd = cap;
  }
  const stallTimeoutMs = timeoutOption('--stall-timeout', values['stall-timeout']);
  const headerTimeoutMs = timeoutOption('--response-timeout', values['response-timeout']);
  const passEnv = [...new Set(values['pass-env'] ?? [])];
  const badName = passEnv.find((name) => !ENV_NAME.test(name));
  if (badName !== undefined) throw new UsageError(`--pass-env: ${JSON.stringify(badName)} is not an environment variable name (letters, digits and _, not starting with a digit)`);
  const apiKey = provider === 'anthropic' ? env.ANTHROPIC_API_KEY : provider === 'openai-compatible' ? env.OPENAI_API_KEY : undefined;
  const baseUrl = values['base-url'];
  if (baseUrl !== undefined && !isHttpUrl(baseUrl)) throw new UsageError(`--base-url must be an http:// or https:// URL (got "${baseUrl}")`);
  // The model-selection machine: --model (this run's override) > $KEEL_MODEL (the user's
  // standing choice) > the provider's default; in plan mode $KEEL_PLAN_MODEL when set.
  const choice = { envModel: values.model ?? null, userModel: env.KEEL_MODEL ?? null, planModel: env.KEEL_PLAN_MODEL || null, providerDefault: DEFAULT_MODELS[provider] };
  const models =
    provider === 'demo'
      ? { other: DEFAULT_MODELS.demo, plan: null }
      : { other: resolveModel({ ...choice, planMode: false }), plan: choice.planModel ? resolveModel({ ...choice, planMode: true }) : null };
  return {
    prompt,
    resume,
    workspaceGiven: values.workspace !== undefined,
    modelGiven: values.model !== undefined,
    modeGiven: values.mode !== undefined,
    workspace: resolve(values.workspace ?? process.cwd()),
    provider: {
      provider,
      model: mode === 'plan' && models.plan ? models.plan : models.other,
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(stallTimeoutMs !== undefined ? { stallTimeoutMs } : {}),
      ...(headerTimeoutMs !== undefined ? { headerTimeoutMs } : {}),
    },
    models,
    mode,
    outputFormat,
    maxTurns,
    storage: storageOption(values.storage, env),
    mcpConfig: (values['mcp-config'] ?? []).map((f) => existingPath('--mcp-config', f, 'file')),
    passEnv,
    memory: !values['no-memory'] && !memoryOffByEnv(env),
    approveProjectHooks: Boolean(values['approve-project-hooks']),
    workers,
    ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}),
    images: [],
    workersGiven: values.workers !== undefined,
  };
}

/**
 * `--stall-timeout S` / `--response-timeout S`: seconds (timeouts.ts says which figures are
 * valid) as the provider's milliseconds; absent: undefined (the provider's default). Throws
 * UsageError for anything else, so a run never starts with a figure the person did not mean.
 */
function timeoutOption(option: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = timeoutSecondsFromText(text);
  if (seconds === null) throw new UsageError(`${option} must be ${TIMEOUT_SECONDS_WANTED}, such as 120 (got "${text}")`);
  return secondsToMs(seconds);
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
