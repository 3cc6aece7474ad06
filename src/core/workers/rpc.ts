import * as z from 'zod/mini';

/**
 * A typed request/notification layer over one worker channel: every message of the host ↔ worker
 * protocol is declared once (protocol.ts: its method, its params, for a request its result and
 * progress), and correlation, cancellation, progress and validation are done here, once, for
 * both ends (until 27 Nov 2026 each end matched prompt ids, request ids and call ids by hand).
 *
 * On the wire (one JSON object per line, channel.ts):
 *   { kind: 'request',  id, method, params }   a request; ids increase on each side
 *   { kind: 'result',   id, result }           its answer
 *   { kind: 'failure',  id, message }          the handler failed (a refusal, not a crash)
 *   { kind: 'cancel',   id }                   the requester no longer needs it (the handler's
 *                                              signal aborts; it still answers once)
 *   { kind: 'progress', id, value }            a step of a request still running
 *   { kind: 'notify',   method, params }       a notification (no answer)
 *
 * What the peer may not do breaks the connection (`onViolation`, once): an undeclared method,
 * params or a result that do not match the declaration, an answer or progress for a request
 * that is not waiting, a request id that does not increase. Contract: a request's promise settles
 * exactly once — with its result, rejecting with `RpcFailure` (the peer's handler failed) or with
 * `RpcClosed` (the endpoint closed first); nothing is delivered after `close`.
 */
type Schema<T> = z.core.$ZodType<T>;

export interface RequestDecl<P, R, G> {
  kind: 'request';
  params: Schema<P>;
  result: Schema<R>;
  progress: Schema<G> | null;
}

export interface NotificationDecl<P> {
  kind: 'notification';
  params: Schema<P>;
}

export type Decl = RequestDecl<unknown, unknown, unknown> | NotificationDecl<unknown>;
export type Declarations = Record<string, Decl>;

/** A request answered with `result`, optionally reporting `progress` on the way. */
export function request<P, R, G = never>(params: Schema<P>, result: Schema<R>, progress?: Schema<G>): RequestDecl<P, R, G> {
  return { kind: 'request', params, result, progress: progress ?? null };
}

/** A message with no answer. */
export function notification<P>(params: Schema<P>): NotificationDecl<P> {
  return { kind: 'notification', params };
}

export type RequestNames<D extends Declarations> = { [K in keyof D]: D[K] extends RequestDecl<unknown, unknown, unknown> ? K : never }[keyof D] & string;
export type NotificationNames<D extends Declarations> = { [K in keyof D]: D[K] extends NotificationDecl<unknown> ? K : never }[keyof D] & string;
export type ParamsOf<D extends Declarations, M extends keyof D> = D[M] extends { params: Schema<infer P> } ? P : never;
export type ResultOf<D extends Declarations, M extends keyof D> = D[M] extends RequestDecl<unknown, infer R, unknown> ? R : never;
export type ProgressOf<D extends Declarations, M extends keyof D> = D[M] extends RequestDecl<unknown, unknown, infer G> ? G : never;

/** What a request's handler gets besides its params. */
export interface RequestContext<G> {
  /** Aborts when the requester cancels or the endpoint closes. */
  signal: AbortSignal;
  /** Sends one step of progress (nothing once the request is answered). */
  progress(value: G): void;
}

/** Handlers for every method of `D` (requests return their result; a throw answers `failure`). */
export type Handlers<D extends Declarations> = {
  [M in keyof D]: D[M] extends RequestDecl<infer P, infer R, infer G>
    ? (params: P, context: RequestContext<G>) => Promise<R>
    : D[M] extends NotificationDecl<infer P>
      ? (params: P) => void
      : never;
};

/** The peer's handler failed: `message` is its reason. */
export class RpcFailure extends Error {
  override readonly name = 'RpcFailure';
}

/** The endpoint closed before the request was answered. */
export class RpcClosed extends Error {
  override readonly name = 'RpcClosed';
}

const id = z.number().check(z.int(), z.positive());
/** One line of the protocol, before its params or result are checked against the method's declaration. */
export const envelopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('request'), id, method: z.string().check(z.maxLength(100)), params: z.unknown() }),
  z.object({ kind: z.literal('result'), id, result: z.unknown() }),
  z.object({ kind: z.literal('failure'), id, message: z.string() }),
  z.object({ kind: z.literal('cancel'), id }),
  z.object({ kind: z.literal('progress'), id, value: z.unknown() }),
  z.object({ kind: z.literal('notify'), method: z.string().check(z.maxLength(100)), params: z.unknown() }),
]);
export type Envelope = z.infer<typeof envelopeSchema>;

/** A function of any signature, called with arguments checked against its declaration (`Reflect.apply`). */
type Callable = (...args: never[]) => unknown;

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
  onProgress: Callable | undefined;
  detach(): void;
}

export class RpcEndpoint<In extends Declarations, Out extends Declarations> {
  private nextId = 1;
  private lastPeerId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly serving = new Map<number, AbortController>();
  private closedReason: string | null = null;
  private readonly table: Map<string, Callable>;

  /**
   * `send` writes one envelope to the peer (false: it could not, the channel is gone); requests and
   * notifications of `incoming` are answered by `handlers`; `outgoing` declares what this end
   * sends, whose results are checked on arrival.
   */
  constructor(
    private readonly send: (m: Envelope) => boolean,
    private readonly incoming: In,
    private readonly outgoing: Out,
    handlers: Handlers<In>,
    private readonly onViolation: (reason: string) => void,
  ) {
    this.table = new Map<string, Callable>(Object.entries(handlers));
  }

  /** Sends a request; see the class contract. Aborting `signal` sends `cancel` and still waits for the answer. */
  request<M extends RequestNames<Out>>(method: M, params: ParamsOf<Out, M>, opts: { signal?: AbortSignal; onProgress?: (value: ProgressOf<Out, M>) => void } = {}): Promise<ResultOf<Out, M>> {
    if (this.closedReason !== null) return Promise.reject(new RpcClosed(this.closedReason));
    const requestId = this.nextId++;
    return new Promise<ResultOf<Out, M>>((resolve, reject) => {
      const onAbort = () => {
        if (this.pending.has(requestId)) this.send({ kind: 'cancel', id: requestId });
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(requestId, {
        method,
        resolve: (v) => resolve(v as ResultOf<Out, M>),
        reject,
        onProgress: opts.onProgress,
        detach: () => opts.signal?.removeEventListener('abort', onAbort),
      });
      this.send({ kind: 'request', id: requestId, method, params });
      if (opts.signal?.aborted) onAbort();
    });
  }

  /** Sends a notification (nothing once closed). */
  notify<M extends NotificationNames<Out>>(method: M, params: ParamsOf<Out, M>): void {
    if (this.closedReason === null) this.send({ kind: 'notify', method, params });
  }

  /** Requests this end sent that are not answered yet. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Handles one envelope from the peer (already checked against `envelopeSchema`). Never throws. */
  receive(m: Envelope): void {
    if (this.closedReason !== null) return;
    switch (m.kind) {
      case 'request':
        return this.serve(m.id, m.method, m.params);
      case 'notify': {
        const decl = this.incoming[m.method];
        if (!decl || decl.kind !== 'notification') return this.violation(`an undeclared notification "${m.method}"`);
        const params = z.safeParse(decl.params, m.params);
        if (!params.success) return this.violation(`notification "${m.method}" with params that do not match its declaration: ${firstIssue(params.error)}`);
        const handler = this.table.get(m.method);
        if (handler) callSafely(() => Reflect.apply(handler, undefined, [params.data]));
        return;
      }
      case 'cancel':
        // A cancel for a request already answered is harmless (the answer crossed it).
        this.serving.get(m.id)?.abort();
        return;
      case 'progress': {
        const p = this.pending.get(m.id);
        if (!p) return this.violation(`progress for request ${m.id}, which is not waiting`);
        const decl = this.outgoing[p.method];
        if (!decl || decl.kind !== 'request' || !decl.progress) return this.violation(`progress for "${p.method}", which declares none`);
        const value = z.safeParse(decl.progress, m.value);
        if (!value.success) return this.violation(`progress of "${p.method}" that does not match its declaration: ${firstIssue(value.error)}`);
        const onProgress = p.onProgress;
        if (onProgress) callSafely(() => Reflect.apply(onProgress, undefined, [value.data]));
        return;
      }
      case 'result':
      case 'failure': {
        const p = this.pending.get(m.id);
        if (!p) return this.violation(`an answer for request ${m.id}, which is not waiting`);
        this.pending.delete(m.id);
        p.detach();
        if (m.kind === 'failure') return p.reject(new RpcFailure(m.message));
        const decl = this.outgoing[p.method];
        if (!decl || decl.kind !== 'request') return p.reject(new RpcClosed(`"${p.method}" is not a declared request`));
        const result = z.safeParse(decl.result, m.result);
        if (!result.success) {
          p.reject(new RpcClosed(`the answer to "${p.method}" does not match its declaration`));
          return this.violation(`an answer to "${p.method}" that does not match its declaration: ${firstIssue(result.error)}`);
        }
        return p.resolve(result.data);
      }
    }
  }

  /** No more messages: waiting requests reject with `RpcClosed(reason)`, running handlers' signals abort. Idempotent. */
  close(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    for (const p of this.pending.values()) {
      p.detach();
      p.reject(new RpcClosed(reason));
    }
    this.pending.clear();
    for (const c of this.serving.values()) c.abort();
    this.serving.clear();
  }

  private serve(requestId: number, method: string, raw: unknown): void {
    if (requestId <= this.lastPeerId) return this.violation(`request id ${requestId} after ${this.lastPeerId} (ids must increase)`);
    this.lastPeerId = requestId;
    const decl = this.incoming[method];
    if (!decl || decl.kind !== 'request') return this.violation(`an undeclared request "${method}"`);
    const params = z.safeParse(decl.params, raw);
    if (!params.success) return this.violation(`request "${method}" with params that do not match its declaration: ${firstIssue(params.error)}`);
    const controller = new AbortController();
    this.serving.set(requestId, controller);
    let answered = false;
    const context: RequestContext<unknown> = {
      signal: controller.signal,
      progress: (value) => {
        if (!answered && this.closedReason === null) this.send({ kind: 'progress', id: requestId, value });
      },
    };
    const answer = (m: Envelope) => {
      answered = true;
      this.serving.delete(requestId);
      if (this.closedReason === null) this.send(m);
    };
    const handler = this.table.get(method);
    let run: Promise<unknown>;
    try {
      if (!handler) throw new Error(`"${method}" is not handled here`);
      run = Promise.resolve(Reflect.apply(handler, undefined, [params.data, context]));
    } catch (err) {
      run = Promise.reject(err);
    }
    run.then(
      (result) => answer({ kind: 'result', id: requestId, result }),
      (err: unknown) => answer({ kind: 'failure', id: requestId, message: err instanceof Error ? err.message : String(err) }),
    );
  }

  private violation(reason: string): void {
    if (this.closedReason !== null) return;
    this.close(`protocol violation: ${reason}`);
    this.onViolation(reason);
  }
}

function firstIssue(error: { issues: readonly { message: string; path: readonly PropertyKey[] }[] }): string {
  const i = error.issues[0];
  return i ? `${i.path.map(String).join('.') || '(root)'}: ${i.message}` : 'invalid';
}

function callSafely(f: () => void): void {
  try {
    f();
  } catch {
    // A handler's failure is its own; the connection stays as it is.
  }
}
