import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveModel } from '../core/machines/modelSelection/modelSelection.machine';
import type { ProviderConfig } from '../core/providers/types';
import { DEFAULT_MODELS, PROVIDER_IDS } from '../shared/domain/models';
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from '../shared/domain/permissionModes';
import { checkPassEnvNames } from '../core/security/passEnv';
import { memoryOffByEnv } from '../core/memory/settings';
import { parseCommandLine, UsageError } from './usage';

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
  /** `--workers N` (default `KEEL_WORKERS`, else 0): run turn loops in a pool of N worker processes (0: in this process). */
  workers: number;
  /** `--image FILE` (repeatable, `keel run` only): images attached to the prompt, resolved from the current folder. */
  images: string[];
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
  image: { type: 'string', multiple: true },
} as const;

/**
 * Parses `keel run` arguments. Throws UsageError (a message for people, without the `keel run`
 * prefix) on bad input, HelpRequested for `--help`.
 */
export function parseRunArgs(argv: string[], env: NodeJS.ProcessEnv): RunArgs {
  const { values, positionals } = parseCommandLine(argv, RUN_OPTIONS, true);
  const prompt = positionals.join(' ').trim();
  const resume = values.resume?.trim() || undefined;
  if (values.resume !== undefined && !resume) throw new UsageError('--resume needs a task id (keel tasks list shows them)');
  if (!prompt && !resume) throw new UsageError('no prompt given');
  const images = (values.image ?? []).map((f) => resolve(f));
  if (images.length > 0 && !prompt) throw new UsageError('--image needs a prompt to go with it');
  return { ...runArgsFrom(values, prompt, resume, env), images };
}

/** The options of `keel run` that describe how tasks run (all but --resume): `keel loop` takes them too. */
export const TASK_OPTIONS = (({ resume: _resume, image: _image, ...rest }) => rest)(RUN_OPTIONS);

type TaskOptionValues = { [K in keyof typeof TASK_OPTIONS]?: (typeof TASK_OPTIONS)[K] extends { multiple: true } ? string[] : (typeof TASK_OPTIONS)[K] extends { type: 'boolean' } ? boolean : string };

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
  // KEEL_WORKERS=N is the default of --workers (e.g. to run a whole test suite on workers).
  const workersText = values.workers ?? (env.KEEL_WORKERS !== undefined && env.KEEL_WORKERS !== '' ? env.KEEL_WORKERS : undefined);
  let workers = 0;
  if (workersText !== undefined) {
    workers = Number(workersText);
    const source = values.workers !== undefined ? '--workers' : 'KEEL_WORKERS';
    if (!/^\d+$/.test(workersText.trim()) || workers > 64) throw new UsageError(`${source} must be an integer from 0 to 64 (got "${workersText}")`);
  }
  const passEnv = checkPassEnvNames(values['pass-env'] ?? [], '--pass-env');
  if (passEnv.problems.length > 0) throw new UsageError(passEnv.problems[0] as string);
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
    },
    models,
    mode,
    outputFormat,
    maxTurns,
    storage: values.storage ? resolve(values.storage) : defaultStorage(env),
    mcpConfig: (values['mcp-config'] ?? []).map((f) => resolve(f)),
    passEnv: passEnv.names,
    memory: !values['no-memory'] && !memoryOffByEnv(env),
    approveProjectHooks: Boolean(values['approve-project-hooks']),
    workers,
    images: [],
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
