import type { ProviderConfig } from '../core/providers/types';
import type { PermissionMode } from '../core/runtime/types';
import { DEFAULT_MODELS, DEMO_MODEL_LABEL, PROVIDER_IDS, type UserProviderId } from '../shared/domain/models';
import { type ChatConfig, PERMISSION_MODES } from '../shared/protocol/toWebview';

/**
 * Turning Keel's settings into a `ProviderConfig` and into what the chat header shows. Pure and
 * free of 'vscode' (providerSettings.ts reads the values); keys are passed in, never stored here.
 */

export type { UserProviderId } from '../shared/domain/models';

/** The raw values of the `keel.*` settings, unvalidated. */
export interface KeelSettings {
  provider: unknown;
  model: unknown;
  anthropicBaseUrl: unknown;
  openaiBaseUrl: unknown;
  defaultMode: unknown;
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
  return (PERMISSION_MODES as readonly string[]).includes(m) ? (m as PermissionMode) : 'default';
}

/** The model id a task uses: the `keel.model` setting, else the provider's default. */
export function modelOf(settings: KeelSettings): string {
  return str(settings.model) || DEFAULT_MODELS[providerOf(settings)];
}

/**
 * The provider config a task starts with. `secretKey` (from SecretStorage) wins over the
 * environment. A missing Anthropic key is not an error here: the task reports `no_api_key`.
 */
export function resolveProviderConfig(
  settings: KeelSettings,
  secretKey: string | undefined,
  env: Record<string, string | undefined>,
): ProviderConfig {
  const provider = providerOf(settings);
  const model = modelOf(settings);
  if (provider === 'demo') return { provider, model };
  const apiKey = secretKey || env[ENV_KEYS[provider]] || undefined;
  const baseUrl = str(provider === 'anthropic' ? settings.anthropicBaseUrl : settings.openaiBaseUrl) || undefined;
  return { provider, model, ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}) };
}

/** What the chat header shows about the configuration. Contains no key. */
export function chatConfigOf(settings: KeelSettings): ChatConfig {
  const provider = providerOf(settings);
  return {
    provider,
    providerLabel: PROVIDER_LABELS[provider],
    model: provider === 'demo' ? DEMO_MODEL_LABEL : modelOf(settings),
    mode: permissionModeOf(settings),
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
