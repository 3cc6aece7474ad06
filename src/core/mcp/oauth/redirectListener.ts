import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loopback end of an OAuth authorization (RFC 8252 §7.3): an HTTP server on 127.0.0.1 that
 * waits for the authorization server to send the browser back with `code` and `state`.
 *
 * Contract: listens on 127.0.0.1 only (a port the caller prefers when it is free, else a random
 * one); accepts exactly one callback on `/callback` whose `state` equals the expected one — a
 * request with another state, or to another path, is answered 400/404 and does not end the wait;
 * after that one callback (or an `error` answer with the right state) it closes; `result` rejects
 * after `timeoutMs`, on `close()`, or when the authorization server answered with an error.
 * Never reflects what the request carried into its page (the browser shows fixed text).
 */
export interface RedirectListener {
  readonly redirectUrl: string;
  readonly port: number;
  /** Sets the state the callback must carry (known only once the authorization URL is built). */
  expectState(state: string): void;
  /** The callback's query (with `code`, `state`, maybe `iss`). */
  readonly result: Promise<URLSearchParams>;
  close(): void;
}

export class OAuthCallbackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthCallbackError';
  }
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;

export async function startRedirectListener(opts: { timeoutMs: number; preferredPort?: number }): Promise<RedirectListener> {
  let expected: string | null = null;
  let settle: { resolve: (p: URLSearchParams) => void; reject: (e: Error) => void } | null = null;
  const result = new Promise<URLSearchParams>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Nobody may await `result` (a sign-in that failed before the browser step): no unhandled rejection.
  result.catch(() => {});
  let done = false;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const reply = (status: number, title: string, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
      res.end(PAGE(title, text));
    };
    if (req.method !== 'GET' || url.pathname !== '/callback') return reply(404, 'Not found', 'This address only receives Keel\'s sign-in.');
    if (done || expected === null || url.searchParams.get('state') !== expected) {
      return reply(400, 'Sign-in not accepted', 'This answer does not belong to the sign-in Keel is waiting for. Start the sign-in again from Keel.');
    }
    finish();
    const error = url.searchParams.get('error');
    if (error) {
      reply(400, 'Sign-in refused', 'The authorization server did not grant access. You can close this page and try again from Keel.');
      settle?.reject(new OAuthCallbackError(`the authorization server refused the sign-in (${error.slice(0, 100)})`));
    } else if (!url.searchParams.get('code')) {
      reply(400, 'Sign-in failed', 'The answer carried no authorization code. Start the sign-in again from Keel.');
      settle?.reject(new OAuthCallbackError('the authorization server sent the browser back without a code'));
    } else {
      reply(200, 'Signed in', 'Keel has the authorization. You can close this page.');
      settle?.resolve(url.searchParams);
    }
  });

  const finish = () => {
    done = true;
    if (timer) clearTimeout(timer);
    // Let the answer go out, then stop listening.
    setImmediate(() => server.close());
    server.closeIdleConnections?.();
  };

  let timer: NodeJS.Timeout | undefined = undefined;
  const port = await listen(server, opts.preferredPort);
  timer = setTimeout(() => {
    if (done) return;
    finish();
    settle?.reject(new OAuthCallbackError(`no sign-in arrived within ${Math.round(opts.timeoutMs / 1000)} s; start it again`));
  }, opts.timeoutMs);
  timer.unref?.();

  return {
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    port,
    expectState: (state) => {
      expected = state;
    },
    result,
    close: () => {
      if (done) return;
      finish();
      settle?.reject(new OAuthCallbackError('the sign-in was cancelled'));
    },
  };
}

async function listen(server: Server, preferred: number | undefined): Promise<number> {
  const attempt = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.once('error', onError);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', onError);
        resolve((server.address() as AddressInfo).port);
      });
    });
  if (preferred) {
    try {
      return await attempt(preferred);
    } catch {
      // Taken: a random port (the client registers again for it).
    }
  }
  return attempt(0);
}
