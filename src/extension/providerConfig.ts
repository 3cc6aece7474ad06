import { resolveModel } from '../core/providers/modelChoice';
import type { ProviderConfig } from '../core/providers/types';
import {
  DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS,
  DEFAULT_OPENAI_HEADER_TIMEOUT_MS,
  DEFAULT_STALL_TIMEOUT_MS,
  secondsToMs,
  TIMEOUT_SECONDS_WANTED,
  timeoutSecondsFromSetting,
} from '../core/providers/timeouts';
import { formatDuration } from '../shared/domain/duration';
import { atLeastAsStrict } from '../core/permissions/defaultMode';
import { isPermissionMode, type PermissionMode } from '../shared/domain/permissionModes';
import { DEFAULT_MODELS, DEMO_MODEL_LABEL, PROVIDER_IDS, type UserProviderId } from '../shared/domain/models';
import type { ChatConfig } from '../shared/protocol/toWebview';

/**
 * Turning Keel's settings into a `ProviderConfig` and into what the chat header shows. Pure and
 * free of 'vscode' (providerSettings.ts reads the values); keys are passed in, never stored here.
 */

export type { UserProviderId } from '../shared/domain/models';

/** The raw values of the `keel.*` settings, unvalidated. */
export interface KeelSettings {
  provider: unknown;
  model: unknown;
  /** `keel.planModel`: the model for runs in plan mode (empty: the same as the others). */
  planModel?: unknown;
  anthropicBaseUrl: unknown;
  openaiBaseUrl: unknown;
  defaultMode: unknown;
  /** `keel.timeouts.stallSeconds` from the user settings (undefined or null: the default). */
  stallSeconds?: unknown;
  /** `keel.timeouts.responseSeconds` from the user settings (undefined or null: the provider's default). */
  responseSeconds?: unknown;
}

export const PROVIDER_LABELS: Record<UserProviderId, string> = {
  anthropic: 'Anthropic',
  'openai-compatible': 'OpenAI-compatible',
  demo: 'Demo',
};

/** The SecretStorage key holding a provider's API key (the demo provider has none). */
export const SECRET_KEYS = {
  anthropic: 'keel.apiKey.anthropic',
  'openai-compatible': 'keel.apiKey.openai-compatible',
} as const;
export type KeyedProviderId = keyof typeof SECRET_KEYS;

/** The environment variable used when SecretStorage has no key. */
export const ENV_KEYS: Record<KeyedProviderId, string> = {
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'OPENAI_API_KEY',
};

function str(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

export function providerOf(settings: KeelSettings): UserProviderId {
  const p = str(settings.provider);
  return (PROVIDER_IDS as readonly string[]).includes(p) ? (p as UserProviderId) : 'anthropic';
}

export function permissionModeOf(settings: KeelSettings): PermissionMode {
  const m = str(settings.defaultMode);
  return isPermissionMode(m) ? m : 'default';
}

/** The `keel.permissions.defaultMode` setting as VS Code's `inspect` reports it (where it is set). */
export interface InspectedSetting {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
  defaultValue?: unknown;
}

/**
 * The value of `defaultMode` in `KeelSettings`. The person's own choice: the setting in their user
 * settings; else the mode the settings files settle on (`fromFiles`: a workspace file may only
 * make it stricter, core/permissions/defaultMode.ts); else the setting's default. Then the
 * setting's workspace and folder values (`.vscode/settings.json`, a `.code-workspace` file): they
 * come with the repository like `.claude/settings.json` does, so each applies only when it is at
 * least as strict as the mode so far; a looser one is ignored and told through `notice`. An
 * invalid value is ignored the same way. Pure but for `fromFiles` (called only when the user
 * settings do not choose) and `notice`.
 */
export function defaultModeSetting(
  inspected: InspectedSetting | undefined,
  fromFiles: () => PermissionMode | undefined,
  notice: (message: string) => void = () => undefined,
): unknown {
  const user = inspected?.globalValue;
  let mode: PermissionMode;
  if (isPermissionMode(user)) mode = user;
  else {
    if (user !== undefined) notice(`keel.permissions.defaultMode "${String(user)}" in the user settings is not a permission mode; ignored`);
    const files = fromFiles();
    const fallback = inspected?.defaultValue;
    mode = files ?? (isPermissionMode(fallback) ? fallback : 'default');
  }
  for (const [where, value] of [
    ['workspace', inspected?.workspaceValue],
    ['workspace folder', inspected?.workspaceFolderValue],
  ] as const) {
    if (value === undefined) continue;
    if (isPermissionMode(value) && atLeastAsStrict(value, mode)) mode = value;
    else {
      const hint = 'set a looser mode in your user settings, or choose it in the chat';
      notice(`keel.permissions.defaultMode "${String(value)}" in the ${where} settings ignored: a workspace may only make the mode stricter than "${mode}" (${hint})`);
    }
  }
  return mode;
}

/** Environment variables that choose a model for the whole window (set where VS Code was started). */
export const MODEL_ENV = { model: 'KEEL_MODEL', planModel: 'KEEL_PLAN_MODEL' } as const;

/**
 * The model a run uses, chosen by the model-selection machine with the catalog's precedence
 * (env override > user selected > default): `KEEL_MODEL` in VS Code's environment > `keel.model`
 * (what the person selected; Select Model writes it) > the provider's default (one table:
 * src/shared/domain/models.ts); a run in plan mode uses `KEEL_PLAN_MODEL`, else `keel.planModel`,
 * when one is set. Ids are normalised (the aliases sonnet, opus, haiku; Claude ids lower-cased).
 * The demo provider has its one model. `mode` defaults to the mode setting. Pure.
 */
export function modelOf(settings: KeelSettings, env: Record<string, string | undefined> = {}, mode: PermissionMode = permissionModeOf(settings)): string {
  const provider = providerOf(settings);
  if (provider === 'demo') return DEFAULT_MODELS.demo;
  return resolveModel({
    envModel: str(env[MODEL_ENV.model]) || null,
    userModel: str(settings.model) || null,
    planModel: str(env[MODEL_ENV.planModel]) || str(settings.planModel) || null,
    planMode: mode === 'plan',
    providerDefault: DEFAULT_MODELS[provider],
  });
}

/**
 * The provider config a run in `mode` starts with (the model: `modelOf`; the waits:
 * `providerTimeouts`, whose `notice` says what is wrong with a timeout setting). `secretKey` (from
 * SecretStorage) wins over the environment. A missing Anthropic key is not an error here: the
 * task reports `no_api_key`.
 */
export function resolveProviderConfig(
  settings: KeelSettings,
  secretKey: string | undefined,
  env: Record<string, string | undefined>,
  mode?: PermissionMode,
  notice: (message: string) => void = () => undefined,
): ProviderConfig {
  const provider = providerOf(settings);
  const model = modelOf(settings, env, mode);
  if (provider === 'demo') return { provider, model };
  const apiKey = secretKey || env[ENV_KEYS[provider]] || undefined;
  const baseUrl = str(provider === 'anthropic' ? settings.anthropicBaseUrl : settings.openaiBaseUrl) || undefined;
  return { provider, model, ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}), ...providerTimeouts(settings, provider, notice) };
}

/**
 * The settings of the waits on the model server (the CLI's `--stall-timeout` and
 * `--response-timeout`). Not under `keel.provider.`: that key is a string, and VS Code ignores a
 * setting nested under a key that holds a value.
 */
export const TIMEOUT_SETTINGS = { stall: 'keel.timeouts.stallSeconds', response: 'keel.timeouts.responseSeconds' } as const;

/**
 * The waits the person set, in the provider's milliseconds; a setting left unset (or null) is
 * left out, so the provider's default applies. A value that is not a number of seconds from 1 to
 * 3600 is not used: `notice` says so, and that the default applies (as an invalid
 * `keel.permissions.defaultMode` is told and ignored). Pure but for `notice`.
 */
export function providerTimeouts(settings: KeelSettings, provider: Exclude<UserProviderId, 'demo'>, notice: (message: string) => void): Pick<ProviderConfig, 'stallTimeoutMs' | 'headerTimeoutMs'> {
  const headerDefault = provider === 'anthropic' ? DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS : DEFAULT_OPENAI_HEADER_TIMEOUT_MS;
  const read = (key: string, value: unknown, defaultMs: number): number | undefined => {
    if (value === undefined || value === null) return undefined;
    const seconds = timeoutSecondsFromSetting(value);
    if (seconds !== null) return secondsToMs(seconds);
    notice(`${key} ${JSON.stringify(value)} is not ${TIMEOUT_SECONDS_WANTED}; Keel waits the default, ${formatDuration(defaultMs)}, until you correct it`);
    return undefined;
  };
  const stallTimeoutMs = read(TIMEOUT_SETTINGS.stall, settings.stallSeconds, DEFAULT_STALL_TIMEOUT_MS);
  const headerTimeoutMs = read(TIMEOUT_SETTINGS.response, settings.responseSeconds, headerDefault);
  return { ...(stallTimeoutMs !== undefined ? { stallTimeoutMs } : {}), ...(headerTimeoutMs !== undefined ? { headerTimeoutMs } : {}) };
}

/**
 * Why `provider` cannot be used now, or undefined when it can: only Anthropic needs a key (from
 * SecretStorage or the environment); an OpenAI-compatible server may need none.
 */
export function keyProblem(provider: UserProviderId, secretKey: string | undefined, env: Record<string, string | undefined>): string | undefined {
  if (provider !== 'anthropic' || secretKey || env[ENV_KEYS.anthropic]) return undefined;
  return 'no Anthropic API key: run "Keel: Set API Key", set ANTHROPIC_API_KEY, or choose the demo provider';
}

/** What the chat header shows about the configuration: the model a run in `mode` would use. Contains no key. */
export function chatConfigOf(settings: KeelSettings, env: Record<string, string | undefined> = {}, mode?: PermissionMode): ChatConfig {
  const provider = providerOf(settings);
  return {
    provider,
    providerLabel: PROVIDER_LABELS[provider],
    model: provider === 'demo' ? DEMO_MODEL_LABEL : modelOf(settings, env, mode),
    mode: mode ?? permissionModeOf(settings),
  };
}

/**
 * What the extension tells a person after a failure they can fix, in VS Code's terms (the Set API
 * Key command, the keel.* settings). Appended to the task's `error` message by the runtime
 * (TaskRuntimeOptions.advise); the CLI gives its own advice.
 */
export function extensionAdvice(failure: { code: string; provider: string }): string | undefined {
  const variable = failure.provider === 'anthropic' || failure.provider === 'openai-compatible' ? ENV_KEYS[failure.provider] : 'ANTHROPIC_API_KEY';
  switch (failure.code) {
    case 'no_api_key':
      return `Run “Keel: Set API Key” or set ${variable}, or choose the demo provider to try Keel without a key.`;
    case 'auth_failed':
      return `Set it with “Keel: Set API Key” or ${variable}.`;
    default:
      return undefined;
  }
}
