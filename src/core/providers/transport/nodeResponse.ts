import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * The `Response` that `nodeFetch` resolves with: status, headers (the global `Headers` class —
 * in a worker the lean one, leanGlobals.ts) and a body that is a web `ReadableStream` fed by the
 * socket as the server writes it: each chunk is enqueued as it arrives (nothing is buffered
 * beyond one chunk: the socket is paused until the reader asks for more), so an SSE answer
 * streams event by event. The body methods (`text`, `json`, …) read that stream to its end.
 */
export class NodeResponse implements Response {
  readonly type: ResponseType = 'basic';
  readonly headers: Headers;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly redirected: boolean;
  #body: ReadableStream<Uint8Array<ArrayBuffer>> | null;
  #used = false;

  constructor(init: { status: number; statusText: string; headers: Headers; url: string; redirected: boolean; body: ReadableStream<Uint8Array<ArrayBuffer>> | null }) {
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
    this.redirected = init.redirected;
    this.#body = init.body;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.#body;
  }

  /** True once a body method ran or a reader holds the body (Node's streams do not expose "disturbed"). */
  get bodyUsed(): boolean {
    return this.#used || (this.#body?.locked ?? false);
  }

  async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    if (this.bodyUsed) throw new TypeError('Body is unusable: it has already been read');
    this.#used = true;
    if (!this.#body) return new Uint8Array(new ArrayBuffer(0));
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = this.#body.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      chunks.push(r.value);
      size += r.value.byteLength;
    }
    const out = new Uint8Array(new ArrayBuffer(size));
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get('content-type') ?? '' });
  }

  formData(): Promise<FormData> {
    return Promise.reject(new TypeError('nodeFetch: reading a response as FormData is not supported'));
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: the body has already been read');
    let body: ReadableStream<Uint8Array<ArrayBuffer>> | null = null;
    if (this.#body) {
      const [mine, theirs] = this.#body.tee();
      this.#body = mine;
      body = theirs;
    }
    return new NodeResponse({ status: this.status, statusText: this.statusText, headers: new Headers(this.headers), url: this.url, redirected: this.redirected, body });
  }
}

/** Statuses whose response has no body (Fetch standard, "null body status"). */
export function isNullBodyStatus(status: number): boolean {
  return status === 101 || status === 103 || status === 204 || status === 205 || status === 304;
}

/** The response's headers as a `Headers` (repeated fields appended, as fetch does). */
export function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

/**
 * How a body that breaks off fails, shaped as undici's: `TypeError('terminated')` whose cause is
 * the socket's error (its `code`, e.g. ECONNRESET, is what providers/failures.ts reads).
 */
export function terminated(cause: unknown): TypeError {
  return new TypeError('terminated', { cause });
}

/**
 * A web stream of `source`'s bytes, as they arrive. `source` is the response itself or its
 * decoder (content-encoding). `release` is called once when the stream ends, fails or is
 * cancelled; a cancel (the reader gave up) also destroys the socket: it is not reused.
 */
export function bodyStream(source: Readable, destroy: () => void, release: () => void): { stream: ReadableStream<Uint8Array<ArrayBuffer>>; fail(reason: unknown): void } {
  let finished = false;
  let controller!: ReadableStreamDefaultController<Uint8Array<ArrayBuffer>>;
  const finish = (): boolean => {
    if (finished) return false;
    finished = true;
    source.removeAllListeners('data');
    release();
    return true;
  };
  const fail = (reason: unknown): void => {
    if (!finish()) return;
    controller.error(reason);
    destroy();
  };
  const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
    start(c) {
      controller = c;
      source.pause();
      source.on('data', (chunk: Buffer) => {
        if (finished) return;
        // A copy into a plain Uint8Array (what fetch gives), not Node's pooled Buffer view.
        const bytes = new Uint8Array(new ArrayBuffer(chunk.byteLength));
        bytes.set(chunk);
        c.enqueue(bytes);
        if ((c.desiredSize ?? 0) <= 0) source.pause();
      });
      source.once('end', () => {
        if (finish()) c.close();
      });
      source.once('error', (err) => fail(terminated(err)));
      // A response that closes without 'end' (the socket went away) is cut off too.
      source.once('close', () => fail(terminated(Object.assign(new Error('the connection closed before the body ended'), { code: 'ECONNRESET' }))));
    },
    pull() {
      if (!finished) source.resume();
    },
    cancel() {
      if (finish()) destroy();
    },
  });
  return { stream, fail };
}
