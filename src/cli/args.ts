import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveModel } from '../core/machines/modelSelection/modelSelection.machine';
import type { ProviderConfig } from '../core/providers/types';
import type { PermissionMode } from '../core/runtime/types';

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
  provider: ProviderConfig;
  mode: PermissionMode;
  outputFormat: 'text' | 'stream-json';
  maxTurns: number | undefined;
  /** The store root: --storage, else $KEEL_HOME, else ~/.keel. */
  storage: string;
  /** `--mcp-config FILE` (repeatable): MCP servers for this run, trusted like the user's own. */
  mcpConfig: string[];
}

/** The store root when --storage is not given: $KEEL_HOME, else ~/.keel. */
export function defaultStorage(env: NodeJS.ProcessEnv): string {
  return resolve(env.KEEL_HOME || join(homedir(), '.keel'));
}

const PROVIDERS = ['anthropic', 'openai-compatible', 'demo'] as const;
const MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;
export const DEFAULT_MODELS: Record<(typeof PROVIDERS)[number], string> = {
  anthropic: 'claude-sonnet-5-5',
  'openai-compatible': 'llama3.1',
  demo: 'demo',
};

export class UsageError extends Error {}

/** Parses `keel run` arguments. Throws UsageError with a message for people on bad input. */
export function parseRunArgs(argv: string[], env: NodeJS.ProcessEnv): RunArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        workspace: { type: 'string' },
        provider: { type: 'string' },
        'base-url': { type: 'string' },
        model: { type: 'string' },
        mode: { type: 'string' },
        'output-format': { type: 'string' },
        'max-turns': { type: 'string' },
        storage: { type: 'string' },
        resume: { type: 'string' },
        'mcp-config': { type: 'string', multiple: true },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const prompt = positionals.join(' ').trim();
  const resume = values.resume?.trim() || undefined;
  if (values.resume !== undefined && !resume) throw new UsageError('--resume needs a task id (see keel tasks list)');
  if (!prompt && !resume) throw new UsageError('keel run needs a prompt: keel run "<prompt>"');
  const provider = (values.provider ?? 'anthropic') as (typeof PROVIDERS)[number];
  if (!PROVIDERS.includes(provider)) throw new UsageError(`--provider must be one of ${PROVIDERS.join(', ')} (got "${values.provider}")`);
  const mode = (values.mode ?? 'default') as PermissionMode;
  if (!(MODES as readonly string[]).includes(mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')} (got "${values.mode}")`);
  const outputFormat = values['output-format'] ?? 'text';
  if (outputFormat !== 'text' && outputFormat !== 'stream-json') throw new UsageError(`--output-format must be text or stream-json (got "${outputFormat}")`);
  let maxTurns: number | undefined;
  if (values['max-turns'] !== undefined) {
    maxTurns = Number(values['max-turns']);
    if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new UsageError(`--max-turns must be a positive integer (got "${values['max-turns']}")`);
  }
  const apiKey = provider === 'anthropic' ? env.ANTHROPIC_API_KEY : provider === 'openai-compatible' ? env.OPENAI_API_KEY : undefined;
  const baseUrl = values['base-url'];
  return {
    prompt,
    resume,
    workspaceGiven: values.workspace !== undefined,
    modelGiven: values.model !== undefined,
    workspace: resolve(values.workspace ?? process.cwd()),
    provider: {
      provider,
      // The model-selection machine: --model (this run's override) > $KEEL_MODEL (the user's
      // standing choice) > the provider's default; in plan mode $KEEL_PLAN_MODEL when set.
      model:
        provider === 'demo'
          ? DEFAULT_MODELS.demo
          : resolveModel({ envModel: values.model ?? null, userModel: env.KEEL_MODEL ?? null, planModel: env.KEEL_PLAN_MODEL ?? null, planMode: mode === 'plan', providerDefault: DEFAULT_MODELS[provider] }),
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiKey ? { apiKey } : {}),
    },
    mode,
    outputFormat,
    maxTurns,
    storage: values.storage ? resolve(values.storage) : defaultStorage(env),
    mcpConfig: (values['mcp-config'] ?? []).map((f) => resolve(f)),
  };
}
