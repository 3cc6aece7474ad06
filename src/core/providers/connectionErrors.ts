import type { KeelError } from '../../shared/domain/errors';
import type { ProviderError } from './types';

/**
 * What a failed connection (no HTTP response at all) means for retrying. Some failures cannot
 * succeed by trying again — nothing listens on the port, the host name does not exist, fetch
 * refuses the port, the URL is not http(s), the TLS handshake fails — and are final, with a
 * message that names the URL and what to check. The rest (a reset, a timeout, an unreachable
 * network, a temporary DNS failure) may pass and are retryable.
 */

/** Why a base URL cannot be used, or undefined when it can. */
export function baseUrlProblem(baseUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `The base URL “${baseUrl}” is not a valid URL; it should look like https://api.anthropic.com or http://localhost:11434/v1.`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `The base URL “${baseUrl}” uses ${url.protocol.replace(/:$/, '')}://; only http:// and https:// are supported.`;
  }
  return undefined;
}

/** The base URL check as a `KeelError`, for code that builds providers from settings. */
export function baseUrlError(baseUrl: string): KeelError | undefined {
  const problem = baseUrlProblem(baseUrl);
  return problem ? { code: 'invalid_input', message: problem, retryable: false } : undefined;
}

const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_|EPROTO$|ERR_OSSL_)/;

/** The user-facing error for a connection that produced no response. */
export function connectionError(f: { code?: string; detail: string }, baseUrl: string): ProviderError {
  const final = (code: ProviderError['code'], message: string): ProviderError => ({ code, message, phase: 'connect', retryable: false });
  const { code, detail } = f;
  if (code === 'ECONNREFUSED') {
    return final('connection_refused', `Could not connect to ${baseUrl}: connection refused (nothing is listening there). Check that the server is running and that the base URL is right.`);
  }
  if (code === 'ENOTFOUND') {
    return final('connection_refused', `Could not connect to ${baseUrl}: the host name was not found. Check the base URL.`);
  }
  if (detail === 'bad port') {
    return final('connection_refused', `Could not connect to ${baseUrl}: fetch refuses ${portOf(baseUrl)} (a port reserved for other protocols). Use another port.`);
  }
  if (code === 'ERR_INVALID_URL' || detail === 'unknown scheme' || detail.startsWith('not implemented')) {
    return final('invalid_input', baseUrlProblem(baseUrl) ?? `The base URL “${baseUrl}” cannot be used (${detail}).`);
  }
  if (code && TLS_CODE.test(code)) {
    return final(
      'connection_refused',
      `Could not make a secure connection to ${baseUrl}: ${detail.replace(/\s+/g, ' ').trim()} (${code}). Check the URL (http or https) and the server's certificate.`,
    );
  }
  if (code === 'EAI_AGAIN') {
    return { code: 'connection_refused', message: `Could not connect to ${baseUrl}: the host name could not be looked up right now (EAI_AGAIN).`, phase: 'connect', retryable: true };
  }
  return { code: 'connection_reset', message: `Could not connect to ${baseUrl} (${code ?? detail}).`, phase: 'connect', retryable: true };
}

function portOf(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `port ${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return 'its port';
  }
}
