import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../../src/shared/domain/duration';
import { baseUrlProblem, connectionError } from '../../../src/core/providers/connectionErrors';
import { connectionFailure, type Failure } from '../../../src/core/providers/failures';

/** What Node's fetch really throws for `url` (no SDK in between). */
async function fetchError(url: string): Promise<unknown> {
  try {
    await fetch(url, { method: 'POST', body: '{}' });
  } catch (err) {
    return err;
  }
  throw new Error(`fetch ${url} succeeded`);
}

function classify(err: unknown, url: string) {
  const f = connectionFailure(err) as Extract<Failure, { kind: 'connection' }>;
  return connectionError(f, url);
}

describe('connection failures: final when trying again cannot help', () => {
  it('a port fetch refuses is final and says which port', async () => {
    const url = 'http://127.0.0.1:9';
    const e = classify(await fetchError(`${url}/v1/messages`), url);
    expect(e).toMatchObject({ code: 'connection_refused', retryable: false, phase: 'connect' });
    expect(e.message).toContain('fetch refuses port 9');
  });

  it('connection refused is final', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const url = `http://127.0.0.1:${port}`;
    expect(classify(await fetchError(url), url)).toMatchObject({ code: 'connection_refused', retryable: false });
  });

  it('https to a plain-http server (a TLS failure) is final', async () => {
    const server = http.createServer((_req, res) => res.end('x'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const e = classify(await fetchError(url), url);
      expect(e).toMatchObject({ code: 'connection_refused', retryable: false });
      expect(e.message).toMatch(/secure connection to https:\/\/127\.0\.0\.1:\d+: .*\(ERR_SSL_/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('an unknown scheme is invalid input', async () => {
    const url = 'ftp://127.0.0.1:2121';
    expect(classify(await fetchError(url), url)).toMatchObject({ code: 'invalid_input', retryable: false });
  });

  it('host not found is final; a temporary DNS failure and a reset are retried', () => {
    const dns = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(`getaddrinfo ${code} api.example`), { code }) });
    expect(classify(dns('ENOTFOUND'), 'https://api.example')).toMatchObject({ code: 'connection_refused', retryable: false });
    expect(classify(dns('EAI_AGAIN'), 'https://api.example')).toMatchObject({ code: 'connection_refused', retryable: true });
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    expect(classify(reset, 'https://api.example')).toMatchObject({ code: 'connection_reset', retryable: true });
  });

  it('base URLs: http(s) only, and a clear message otherwise', () => {
    expect(baseUrlProblem('https://api.anthropic.com')).toBeUndefined();
    expect(baseUrlProblem('http://localhost:11434/v1')).toBeUndefined();
    expect(baseUrlProblem('localhost:11434')).toMatch(/“localhost:11434” uses localhost:\/\/; only http:\/\/ and https:\/\//);
    expect(baseUrlProblem('not a url')).toMatch(/“not a url” is not a valid URL/);
    expect(baseUrlProblem('file:///etc')).toMatch(/uses file:\/\//);
  });
});

describe('formatDuration', () => {
  it('reads as a person would say it', () => {
    expect([0, 250, 1000, 9_960, 30_000, 89_000, 90_000, 600_000, 5_400_000, 7_200_000, 100_000_000, -5, Number.NaN].map(formatDuration)).toEqual([
      '0 s', '0.3 s', '1 s', '10 s', '30 s', '89 s', '2 min', '10 min', '1 h 30 min', '2 h', '27 h 47 min', '0 s', '0 s',
    ]);
  });
});
