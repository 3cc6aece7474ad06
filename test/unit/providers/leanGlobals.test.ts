import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';

/**
 * The worker's transport setup (leanGlobals.ts + nodeFetch.ts) in a Node process of its own, as a
 * worker has it: the globals it replaces must not leak into this test runner.
 */
let server: FakeModelServer;
let dir: string;
let probe: string;
beforeAll(async () => {
  server = await startFakeModelServer();
  dir = mkdtempSync(join(tmpdir(), 'keel-lean-globals-'));
  probe = join(dir, 'probe.cjs');
  await build({ entryPoints: [join(__dirname, '../../fixtures/transport/leanGlobalsProbe.ts')], outfile: probe, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

interface ProbeResult {
  text: string;
  undiciAfterRequest: boolean;
  headers: { padded: string | null; list: string | null; keys: string[]; badName: string };
  formData: { instanceof: boolean; value: unknown; before: boolean; stillNoUndici: boolean; undiciNow: boolean };
}

async function runProbe(provider: 'anthropic' | 'openai' = 'anthropic'): Promise<ProbeResult> {
  const { stdout } = await promisify(execFile)(process.execPath, [probe, server.url, provider], { timeout: 30_000 });
  return JSON.parse(stdout.trim()) as ProbeResult;
}

describe("a worker's lean web globals", () => {
  it.each([
    ['anthropic', '/v1/messages'],
    ['openai', '/v1/chat/completions'],
  ] as const)('a streamed %s request over nodeFetch works and never loads undici', async (provider, path) => {
    server.enqueue({ blocks: [{ type: 'text', text: 'streamed without undici' }] });
    const r = await runProbe(provider);
    expect(r.text).toBe('streamed without undici');
    expect(r.undiciAfterRequest).toBe(false);
    const sent = server.requests.at(-1)!;
    expect(sent.path).toBe(path);
    expect(JSON.stringify(sent.headers)).toContain('sk-probe');
  });

  it('Headers follows the Fetch standard: values trimmed, repeated names joined, names lower-cased and checked', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'ok' }] });
    const { headers } = await runProbe();
    expect(headers).toEqual({ padded: 'value', list: 'a, b', keys: ['x-list', 'x-padded'], badName: 'TypeError' });
  });

  it('FormData: instanceof is false without loading undici; new FormData() is the real one', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'ok' }] });
    const { formData } = await runProbe();
    expect(formData).toEqual({ instanceof: true, value: 'value', before: false, stillNoUndici: true, undiciNow: true });
  });
});
