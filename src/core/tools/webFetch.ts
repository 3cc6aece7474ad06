import { errorMessage } from '../../shared/domain/errors';
import * as z from 'zod/mini';
import { described } from './described';
import { truncateText } from './cappedText';
import { htmlToText } from './htmlToText';

import type { Tool, ToolResult } from './types';

export const WEBFETCH_TIMEOUT_MS = 30_000;
/** Bytes of response body read at most. */
export const WEBFETCH_MAX_BYTES = 5 * 1024 * 1024;
/** Characters of text returned at most. */
export const WEBFETCH_MAX_CHARS = 100_000;
const MAX_REDIRECTS = 5;

const inputSchema = z.object({
  url: described(z.string().check(z.minLength(1)), 'The http(s) URL to fetch'),
  prompt: described(z.optional(z.string()), 'What you want to learn from the page (kept with the result as context)'),
});
export type WebFetchInput = z.infer<typeof inputSchema>;

const description = `Fetches a URL and returns its content as readable text (HTML is converted to plain text).
- Only http and https URLs. Redirects to the same host are followed; a redirect to another host is reported so you can fetch that URL explicitly.
- Large pages are truncated (${WEBFETCH_MAX_CHARS} characters). Binary content (images, PDFs, archives) is not returned.
- prompt, if given, is kept with the result to say what to look for.`;

export interface WebFetchOptions {
  timeoutMs?: number;
  maxBytes?: number;
  maxChars?: number;
}

/** Builds the WebFetch tool; the limits are options so tests can make them small. */
export function createWebFetchTool(opts: WebFetchOptions = {}): Tool<WebFetchInput> {
  const timeoutMs = opts.timeoutMs ?? WEBFETCH_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? WEBFETCH_MAX_BYTES;
  const maxChars = opts.maxChars ?? WEBFETCH_MAX_CHARS;
  return {
    name: 'WebFetch',
    description,
    inputSchema,
    readOnly: true,
    subject(input) {
      const url = parseHttpUrl(input.url);
      const href = url.ok ? url.url.href : input.url;
      return { kind: 'network', tool: 'WebFetch', url: href, summary: `Fetch ${href}` };
    },
    async invoke(input, ctx) {
      const parsed = parseHttpUrl(input.url);
      if (!parsed.ok) return { content: parsed.message, isError: true, summary: 'invalid URL' };
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      let url = parsed.url;
      try {
        let res = await fetch(url, { redirect: 'manual', signal, headers: { 'user-agent': 'Keel/0.1 (coding agent)', accept: 'text/html,text/plain,application/json,*/*;q=0.5' } });
        for (let hops = 0; isRedirect(res.status); hops++) {
          const location = res.headers.get('location');
          await res.body?.cancel();
          if (!location) break;
          const next = new URL(location, url);
          if (next.host !== url.host || (next.protocol !== 'http:' && next.protocol !== 'https:')) {
            return {
              content: `${url.href} redirects (HTTP ${res.status}) to a different host: ${next.href}\nTo read it, call WebFetch again with that URL.`,
              isError: false,
              summary: `redirect to ${next.host}`,
            };
          }
          if (hops >= MAX_REDIRECTS) return { content: `Too many redirects (more than ${MAX_REDIRECTS}) starting from ${parsed.url.href}.`, isError: true, summary: 'too many redirects' };
          url = next;
          res = await fetch(url, { redirect: 'manual', signal, headers: { 'user-agent': 'Keel/0.1 (coding agent)' } });
        }
        const contentType = res.headers.get('content-type') ?? '';
        if (!isTextual(contentType)) {
          await res.body?.cancel();
          const content = `${url.href} returned ${contentType || 'an unknown content type'}, which is not text; WebFetch only returns text and HTML.`;
          return { content, isError: true, summary: `HTTP ${res.status}, not text` };
        }
        const body = await readCapped(res, maxBytes);
        const isHtml = /html|xhtml/i.test(contentType) || (!contentType && /^\s*<(!doctype|html)/i.test(body.text));
        const text = truncateText(isHtml ? htmlToText(body.text) : body.text, maxChars, 'the page is longer');
        const header = [`URL: ${url.href}`, `Status: ${res.status} ${res.statusText}`.trim(), `Content-Type: ${contentType || 'unknown'}`];
        if (body.truncated) header.push(`[Body truncated after ${maxBytes} bytes]`);
        if (input.prompt) header.push(`Prompt: ${input.prompt}`);
        const content = `${header.join('\n')}\n\n${text}`;
        if (!res.ok) return { content, isError: true, summary: `HTTP ${res.status}` };
        return { content, isError: false, summary: `Fetched ${url.host} (HTTP ${res.status}, ${text.length} chars)` };
      } catch (err) {
        return failure(err, url, ctx.signal, timeoutMs);
      }
    },
  };
}

export const webFetchTool: Tool<WebFetchInput> = createWebFetchTool();

type ParsedUrl = { ok: true; url: URL } | { ok: false; message: string };

function parseHttpUrl(raw: string): ParsedUrl {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, message: `Invalid URL: ${raw}. Give a full http:// or https:// URL.` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, message: `Unsupported URL scheme "${url.protocol}" in ${raw}: only http and https URLs can be fetched.` };
  return { ok: true, url };
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function isTextual(contentType: string): boolean {
  if (!contentType) return true;
  return /^text\/|json|xml|javascript|ecmascript|x-www-form-urlencoded|yaml|toml|csv|markdown/i.test(contentType);
}

/** Reads at most `maxBytes` of the body, then stops the download. */
async function readCapped(res: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const charset = /charset=([^;]+)/i.exec(res.headers.get('content-type') ?? '')?.[1]?.trim().replace(/^"|"$/g, '') ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return { text: decoder.decode(Buffer.concat(chunks)), truncated };
}

function failure(err: unknown, url: URL, signal: AbortSignal, timeoutMs: number): ToolResult {
  if (signal.aborted) return { content: `Fetching ${url.href} was cancelled.`, isError: true, summary: 'cancelled' };
  const name = err instanceof Error ? err.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') return { content: `Fetching ${url.href} timed out after ${timeoutMs} ms.`, isError: true, summary: 'timed out' };
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return { content: `Could not fetch ${url.href}: ${errorMessage(err)}${cause}`, isError: true, summary: 'fetch failed' };
}
