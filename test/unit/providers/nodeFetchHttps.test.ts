import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * nodeFetch over TLS trusts what Node's fetch trusts: a server whose certificate (a self-signed
 * one for 127.0.0.1, test/fixtures/transport/localhost-*.pem, made for this test only) is not
 * trusted fails the same way for both, and once NODE_EXTRA_CA_CERTS names it both connect.
 * Each side runs in a Node process of its own: Node reads NODE_EXTRA_CA_CERTS only at start.
 */
const FIXTURES = join(__dirname, '../../fixtures/transport');
const CERT = join(FIXTURES, 'localhost-cert.pem');
let server: https.Server;
let url: string;
let dir: string;
let probe: string;

beforeAll(async () => {
  server = https.createServer({ cert: readFileSync(CERT), key: readFileSync(join(FIXTURES, 'localhost-key.pem')) }, (_req, res) => res.end('over TLS'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  dir = mkdtempSync(join(tmpdir(), 'keel-https-probe-'));
  probe = join(dir, 'probe.cjs');
  await build({ entryPoints: [join(FIXTURES, 'httpsProbe.ts')], outfile: probe, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

async function runProbe(env: NodeJS.ProcessEnv): Promise<{ node: unknown; undici: unknown }> {
  const { stdout } = await promisify(execFile)(process.execPath, [probe, url], { env, timeout: 30_000 });
  return JSON.parse(stdout.trim()) as { node: unknown; undici: unknown };
}

describe('nodeFetch over https', () => {
  it('an untrusted certificate fails with the same TLS code as Node fetch', async () => {
    const { NODE_EXTRA_CA_CERTS: _unset, ...env } = process.env;
    const r = await runProbe(env);
    expect(r.node).toEqual(r.undici);
    expect(r.node).toMatchObject({ code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/) });
  });

  it('NODE_EXTRA_CA_CERTS is trusted, as by Node fetch', async () => {
    const r = await runProbe({ ...process.env, NODE_EXTRA_CA_CERTS: CERT });
    expect(r).toEqual({ node: { status: 200, text: 'over TLS' }, undici: { status: 200, text: 'over TLS' } });
  });
});
