import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Provider faults as a user of `keel run` meets them: the built CLI as a child process, the real
 * Anthropic provider, the fake model server (a real loopback HTTP server).
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const args = (baseUrl: string, ...extra: string[]) => ['run', 'hi', '--provider', 'anthropic', '--base-url', baseUrl, '--model', 'claude-test', '--workspace', workspace, ...extra];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cli-faults-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel run: provider faults are final or visibly retried', () => {
  it('--base-url http://127.0.0.1:9 (a port fetch refuses) fails at once, with no retry, naming the URL', async () => {
    const run = await runCli(args('http://127.0.0.1:9', '--output-format', 'stream-json'), KEY);
    expect((await run.exit).code).toBe(1);
    expect(ofType(run.events, 'retry')).toEqual([]);
    const errors = ofType(run.events, 'error');
    expect(errors).toEqual([expect.objectContaining({ code: 'connection_refused', retryable: false })]);
    expect(String(errors[0]!.message)).toContain('http://127.0.0.1:9');
  });

  it('a 429 is retried by the machine alone, and the wait is printed', async () => {
    server.enqueue({ blocks: [], fault: { kind: 'http', status: 429, retryAfterSeconds: 0.2 } }, { blocks: [{ type: 'text', text: 'Answered.' }] });
    const run = await runCli(args(server.url), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(run.stdout()).toContain('Answered.');
    expect(run.stderr()).toMatch(/\(rate_limited\) .*rate limit reached \(429\).* Retrying in 0\.2 s \(retry 1\)\./);
    expect(server.requests).toHaveLength(3); // the 429, the retry, the gatekeeper's lesson call
  });
});
