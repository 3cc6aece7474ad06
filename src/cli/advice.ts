import type { ErrorCode } from '../shared/domain/errors';
import type { ProviderConfig } from '../core/providers/types';

const KEY_VARIABLE: Partial<Record<ProviderConfig['provider'], string>> = {
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'OPENAI_API_KEY',
};

/**
 * What `keel` tells a person after a failure they can fix, in the CLI's terms: environment
 * variables and flags (the extension gives its own advice: commands and settings). Appended to
 * the task's `error` message by the runtime (TaskRuntimeOptions.advise).
 */
export function cliAdvice(failure: { code: ErrorCode; provider: ProviderConfig['provider']; taskId?: string }): string | undefined {
  const variable = KEY_VARIABLE[failure.provider];
  switch (failure.code) {
    case 'no_api_key':
      return `Set ${variable ?? 'ANTHROPIC_API_KEY'}=… in the environment, or try Keel without a key: --provider demo (a local OpenAI-compatible server: --provider openai-compatible --base-url URL).`;
    case 'auth_failed':
      return variable ? `Set ${variable}=… to a key this server accepts (and check --base-url).` : undefined;
    case 'connection_refused':
      // The provider's message already says what to check (running? the right URL? the port,
      // the certificate); the CLI only adds where the address comes from.
      return 'The address is the one --base-url gives (else the provider\'s default).';
    case 'worker_lost':
      return failure.taskId ? `Resume it with: keel run --resume ${failure.taskId}` : undefined;
    default:
      return undefined;
  }
}
