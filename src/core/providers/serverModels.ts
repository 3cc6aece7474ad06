import OpenAI from 'openai';
import { DEFAULT_OPENAI_BASE_URL } from './openai';

/** What an OpenAI-compatible server said it serves, or why it could not be asked. */
export type ServerModels = { ok: true; models: string[] } | { ok: false; reason: string };

export interface ListServerModelsOptions {
  /** e.g. http://localhost:11434/v1 (default: Ollama's). */
  baseUrl?: string;
  /** Local servers need none. */
  apiKey?: string;
  /** Give up after this long (default 3 s): a picker must not hang on a server that is not there. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** At most this many ids are kept (a picker cannot show more usefully). */
const MAX_MODELS = 500;

/**
 * The model ids an OpenAI-compatible server lists (`GET {baseUrl}/models`, through the `openai`
 * SDK), sorted. Never throws: a server that is down, slow, refuses the key or answers nonsense
 * gives `{ ok: false, reason }`, in words a person can act on. No retries: the picker falls
 * back to typing an id.
 */
export async function listServerModels(opts: ListServerModelsOptions = {}): Promise<ServerModels> {
  const baseUrl = (opts.baseUrl || DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? 3_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  try {
    const client = new OpenAI({ apiKey: opts.apiKey || 'not-needed', baseURL: baseUrl, organization: null, project: null, maxRetries: 0, timeout: timeoutMs, logLevel: 'off' });
    const ids = new Set<string>();
    for await (const model of client.models.list({ signal })) {
      if (typeof model.id === 'string' && model.id.trim()) ids.add(model.id.trim());
      if (ids.size >= MAX_MODELS) break;
    }
    return { ok: true, models: [...ids].sort((a, b) => a.localeCompare(b)) };
  } catch (err) {
    if (deadline.aborted && !opts.signal?.aborted) return { ok: false, reason: `${baseUrl} did not answer within ${Math.max(1, Math.round(timeoutMs / 1000))} s.` };
    return { ok: false, reason: reasonOf(err, baseUrl, timeoutMs) };
  }
}

function reasonOf(err: unknown, baseUrl: string, timeoutMs: number): string {
  if (err instanceof OpenAI.APIError && err.status !== undefined) {
    if (err.status === 401 || err.status === 403) return `${baseUrl} refused the API key (HTTP ${err.status}).`;
    if (err.status === 404) return `${baseUrl} has no /models list (HTTP 404).`;
    return `${baseUrl} answered HTTP ${err.status}.`;
  }
  if (err instanceof OpenAI.APIConnectionTimeoutError) return `${baseUrl} did not answer within ${Math.max(1, Math.round(timeoutMs / 1000))} s.`;
  if (err instanceof OpenAI.APIUserAbortError) return 'cancelled';
  if (err instanceof OpenAI.APIConnectionError) return `nothing answers at ${baseUrl} (is the server running?).`;
  return `${baseUrl} gave an answer that is not a model list (${err instanceof Error ? err.message : String(err)}).`;
}
