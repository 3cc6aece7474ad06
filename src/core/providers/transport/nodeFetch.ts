import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import type { Readable } from 'node:stream';
import { httpModule, zlibModule } from './nodeModules';
import { bodyStream, headersOf, isNullBodyStatus, NodeResponse } from './nodeResponse';

/** The `fetch` signature the SDKs accept as their `fetch` option. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * `fetch` on `node:http` / `node:https`, for the providers of a pool's worker process: Node's own
 * `fetch` is undici, which costs an idle worker ~10 MB resident once loaded (docs/workers.md,
 * "Memory"). The SDKs keep doing everything else (request building, errors, SSE decoding); this
 * only moves bytes, and behaves as `fetch` does where they and Keel look:
 *
 * - **Response**: status, status text, headers (`retry-after`, `request-id`…; repeated fields
 *   joined as fetch joins them) and a body streamed chunk by chunk as the server sends it
 *   (nodeResponse.ts); a gzip, deflate or br `content-encoding` is decoded, as fetch does (none
 *   is asked for: no `accept-encoding` is sent).
 * - **Abort**: an aborted `signal` rejects with its reason (an `AbortError` unless given one)
 *   before the response, or errors the body after it; either way the request and its socket are
 *   destroyed. Cancelling the body (`reader.cancel()`) destroys the socket too.
 * - **Errors** are shaped as undici's, because providers/failures.ts reads them: a request that
 *   got no response rejects with `TypeError('fetch failed')` whose `cause` is the socket's, DNS's
 *   or TLS's own error (ECONNREFUSED, ENOTFOUND, EAI_AGAIN, DEPTH_ZERO_SELF_SIGNED_CERT…); a
 *   port fetch forbids is the cause "bad port", a scheme other than http(s) "unknown scheme"; a
 *   body that breaks off errors with `TypeError('terminated')` caused by the socket's error.
 * - **Redirects** (`redirect: 'follow'`, the default) are followed up to 20 times only within
 *   the same origin (scheme, host and port) and only while the body can be sent again; a
 *   redirect to another origin is not followed: it fails as a connection error that names the
 *   target (the request's headers carry the API key). `manual` returns the 3xx response;
 *   `error` fails on any redirect.
 * - **TLS and proxies** are Node's: `node:https` with its default agent trusts the same CAs as
 *   fetch (Node's bundled roots plus `NODE_EXTRA_CA_CERTS`); neither honours `HTTP(S)_PROXY`
 *   (Node 20's fetch does not either). Connections are kept alive by Node's global agents.
 *
 * Request bodies: a string, bytes (`ArrayBuffer`, a typed array, `Blob`), `URLSearchParams`, or a
 * `ReadableStream` / async iterable of bytes (sent chunked, never followed through a redirect).
 * A `FormData` body is refused with a TypeError (neither SDK sends one for what Keel asks).
 */
export const nodeFetch: FetchFunction = async (input, init = {}) => {
  const first = typeof input === 'string' || input instanceof URL ? { url: String(input) } : { url: input.url, method: input.method, headers: input.headers };
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortReason(signal);
  const url = parseUrl(first.url);
  const headers = outgoingHeaders(init.headers ?? first.headers);
  let method = normalizeMethod(init.method ?? first.method ?? 'GET');
  let body = await requestBody(init.body, headers);
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) throw new TypeError(`nodeFetch: a ${method} request cannot have a body`);
  const redirect = init.redirect ?? 'follow';
  let current = url;
  for (let hop = 0; ; hop++) {
    const res = await send(current, method, headers, body, signal);
    const location = res.statusCode && REDIRECTS.has(res.statusCode) ? res.headers.location : undefined;
    if (location === undefined || redirect === 'manual') return respond(res, method, current, hop > 0, signal);
    discard(res);
    const next = new URL(location, current);
    if (redirect === 'error') throw fetchFailed(new Error(`unexpected redirect to ${next.href}`));
    if (hop >= 20) throw fetchFailed(new Error('redirect count exceeded'));
    if (next.origin !== current.origin) throw fetchFailed(new Error(`a redirect to another origin (${next.origin}) was not followed`));
    if (res.statusCode === 303 ? method !== 'HEAD' : (res.statusCode === 301 || res.statusCode === 302) && method === 'POST') {
      method = 'GET';
      body = undefined;
      for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
    } else if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw fetchFailed(new Error('a redirect asked to send a streamed body again'));
    }
    current = next;
  }
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Ports fetch refuses to connect to (Fetch standard, "bad port"). */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512,
  513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679,
  6697, 10080,
]);

/** fetch's rejection for a request that got no response: the real error is its `cause`. */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function parseUrl(href: string): URL {
  let url: URL;
  try {
    url = new URL(href);
  } catch (err) {
    throw new TypeError(`nodeFetch: invalid URL ${href}`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fetchFailed(new Error('unknown scheme'));
  if (BAD_PORTS.has(Number(url.port))) throw fetchFailed(new Error('bad port'));
  return url;
}

const STANDARD_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH']);

function normalizeMethod(method: string): string {
  const upper = method.toUpperCase();
  return STANDARD_METHODS.has(upper) ? upper : method;
}

/** Request headers as a plain object with lower-case names (what `http.request` takes). */
function outgoingHeaders(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
  };
  if (Array.isArray(init)) {
    for (const [name, value] of init as [string, string][]) add(name, value);
  } else if (typeof (init as Headers).forEach === 'function' && typeof (init as Headers).get === 'function') {
    (init as Headers).forEach((value, name) => add(name, value));
  } else {
    for (const [name, value] of Object.entries(init as Record<string, string>)) add(name, value);
  }
  return out;
}

type SendableBody = string | Uint8Array | AsyncIterable<Uint8Array> | undefined;

/** The body to send, with the content type fetch would add when none is set. */
async function requestBody(body: BodyInit | null | undefined, headers: Record<string, string>): Promise<SendableBody> {
  if (body === null || body === undefined) return undefined;
  const type = (t: string) => {
    if (headers['content-type'] === undefined && t) headers['content-type'] = t;
  };
  if (typeof body === 'string') {
    type('text/plain;charset=UTF-8');
    return body;
  }
  if (body instanceof URLSearchParams) {
    type('application/x-www-form-urlencoded;charset=UTF-8');
    return body.toString();
  }
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof Blob) {
    type(body.type);
    return new Uint8Array(await body.arrayBuffer());
  }
  // Tested by tag, not `instanceof FormData`: in a worker that would load undici (leanGlobals.ts).
  if (Object.prototype.toString.call(body) === '[object FormData]') throw new TypeError('nodeFetch: FormData bodies are not supported');
  if (typeof body === 'object' && Symbol.asyncIterator in body) return body as AsyncIterable<Uint8Array>;
  type('text/plain;charset=UTF-8');
  return String(body);
}

/** One request; resolves with the response head, rejects as fetch does when there is none. */
async function send(url: URL, method: string, headers: Record<string, string>, body: SendableBody, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  // Loaded on the first request, and node:https (with TLS) only for an https URL: a worker that
  // has not asked a model anything yet holds neither.
  const transport = await httpModule(url.protocol === 'https:');
  // (An abort while the module loaded: the listener below would never hear it.)
  if (signal?.aborted) throw abortReason(signal);
  return new Promise<IncomingMessage>((resolve, reject) => {
    const fixed = typeof body === 'string' ? Buffer.byteLength(body) : body instanceof Uint8Array ? body.byteLength : undefined;
    const options: RequestOptions = { method, headers: fixed === undefined ? headers : { ...headers, 'content-length': String(fixed) } };
    let req: ClientRequest;
    try {
      req = transport.request(url, options);
    } catch (err) {
      // An invalid header name or value (Node checks them as fetch does).
      reject(new TypeError(`nodeFetch: ${(err as Error).message}`, { cause: err }));
      return;
    }
    const onAbort = () => {
      req.destroy();
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.once('response', (res) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(res);
    });
    // `on`, not `once`: after the response a socket error reaches the body (nodeResponse.ts),
    // and an 'error' with no listener would throw in the worker.
    req.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(signal?.aborted ? abortReason(signal) : fetchFailed(err));
    });
    if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) {
      req.end(body);
      return;
    }
    void (async () => {
      try {
        for await (const chunk of body) if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
        req.end();
      } catch (err) {
        req.destroy(err as Error);
      }
    })();
  });
}

/** Reads and drops a response that is not returned (a redirect), so its socket can be reused. */
function discard(res: IncomingMessage): void {
  res.resume();
}

async function respond(res: IncomingMessage, method: string, url: URL, redirected: boolean, signal: AbortSignal | undefined): Promise<Response> {
  const status = res.statusCode ?? 0;
  const init = { status, statusText: res.statusMessage ?? '', headers: headersOf(res), url: url.href, redirected };
  if (isNullBodyStatus(status) || method === 'HEAD') {
    res.resume();
    return new NodeResponse({ ...init, body: null });
  }
  const source = await decoded(res);
  const destroy = () => {
    res.destroy();
    res.socket?.destroy();
  };
  const onAbort = () => body.fail(abortReason(signal!));
  const body = bodyStream(source, destroy, () => signal?.removeEventListener('abort', onAbort));
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return new NodeResponse({ ...init, body: body.stream });
}

/** The response's bytes, through a decoder when it has a content-encoding fetch decodes. */
async function decoded(res: IncomingMessage): Promise<Readable> {
  const coding = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== 'deflate' && coding !== 'br') return res;
  // zlib only for a compressed answer (none is asked for).
  const zlib = await zlibModule();
  const decoder = coding === 'br' ? zlib.createBrotliDecompress() : coding === 'deflate' ? zlib.createInflate() : zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH });
  res.once('error', (err) => decoder.destroy(err));
  res.once('close', () => {
    if (!res.complete) decoder.destroy(Object.assign(new Error('the connection closed before the body ended'), { code: 'ECONNRESET' }));
  });
  res.pipe(decoder);
  return decoder;
}
