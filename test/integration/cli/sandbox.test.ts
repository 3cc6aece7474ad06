import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../../src/core/sandbox/bwrap';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, runCli } from './cliHarness';

/**
 * `keel run` with the sandbox turned on in the user's `~/.keel/settings.json` and an allow-list
 * naming this machine's host name (which the system resolver maps to a loopback address here):
 * the model's curl reaches a real HTTP server on the host through Keel's proxy, a host off the
 * list gets 403, and a project file's own allow-list widens nothing.
 */
const name = hostname().toLowerCase();
const address = await lookup(name).then((a) => a.address, () => undefined);
const ready = detectSandbox().available && existsSync('/usr/bin/curl') && address !== undefined;
/** Whether this machine's resolver knows ip6-localhost (Debian's /etc/hosts usually does). */
const v6local = await lookup('ip6-localhost').then(() => true, () => false);

let model: FakeModelServer;
let web: Server;
let port = 0;
beforeAll(async () => {
  await cliBundle();
  model = await startFakeModelServer();
  web = createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise<void>((r) => web.listen(0, address ?? '127.0.0.1', () => r()));
  port = (web.address() as AddressInfo).port;
}, 120_000);
afterAll(async () => {
  await model?.close();
  await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
});

describe.runIf(ready)('keel run in the sandbox with a network allow-list', () => {
  it('reaches the allowed host through the proxy and nothing else', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-sbx-home-'));
    const workspace = mkdtempSync(join(tmpdir(), 'keel-sbx-ws-'));
    mkdirSync(join(home, '.keel'));
    writeFileSync(join(home, '.keel', 'settings.json'), JSON.stringify({ sandbox: { enabled: true, network: { allowedDomains: [name] } } }));
    mkdirSync(join(workspace, '.keel'));
    writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify({ sandbox: { network: { allowedDomains: ['widened.test'] } } }));
    const command = [`curl -sS http://${name}:${port}/allowed`, 'curl -sS -w " %{http_code}" -o /dev/null http://widened.test/', 'curl -sS -w " %{http_code}" -o /dev/null http://example.com/', 'touch /var/tmp/keel-sbx-escape'].join('; echo; ');
    const escape = { command: 'touch /var/tmp/keel-sbx-escape2', dangerouslyDisableSandbox: true };
    model.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_net', name: 'Bash', input: { command } }, { type: 'tool_use', id: 'toolu_out', name: 'Bash', input: escape }] }, { blocks: [{ type: 'text', text: 'Done.' }] });
    const run = await runCli(['run', 'fetch', '--provider', 'anthropic', '--base-url', model.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions'], { ANTHROPIC_API_KEY: 'sk-test', HOME: home });
    expect((await run.exit).code, run.stderr()).toBe(0);
    // What the model was told (the tool result in its next request).
    // (The gatekeeper's lesson call comes after it and carries no tool results.)
    const content = JSON.stringify(model.requests.map((r) => r.body).findLast((b) => JSON.stringify(b).includes('"tool_result"')));
    expect(content).toContain('hello /allowed');
    expect(content.match(/ 403/g)).toHaveLength(2);
    expect(content).toMatch(/Read-only file system/);
    expect(existsSync('/var/tmp/keel-sbx-escape')).toBe(false);
    // Leaving the sandbox asks even in bypassPermissions; headless, asking is a denial.
    expect(content).toMatch(/"tool_use_id":"toolu_out","content":"Permission denied: Keel would ask first \(the command asks to run outside the sandbox\) and a headless run has no one to ask; no mode or allow rule would run it without asking/);
    expect(existsSync('/var/tmp/keel-sbx-escape2')).toBe(false);
    expect(run.stderr()).toContain('sandbox.network.allowedDomains is ignored; a project can narrow the network, not widen it');
  });
});

describe.runIf(ready)('keel run in the sandbox: `*` does not reach this machine through its own names (issue 21, item 10)', () => {
  it('the machine\'s host name (and ip6-localhost, where /etc/hosts has it) resolve to loopback: refused with 403, nothing reached', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-sbx-home-'));
    const workspace = mkdtempSync(join(tmpdir(), 'keel-sbx-ws-'));
    mkdirSync(join(home, '.keel'));
    writeFileSync(join(home, '.keel', 'settings.json'), JSON.stringify({ sandbox: { enabled: true, network: { allowedDomains: ['*'] } } }));
    const names = [name, ...(v6local ? ['ip6-localhost'] : [])];
    const hits: string[] = [];
    web.on('request', (req) => hits.push(req.url ?? ''));
    const command = names.map((n) => `curl -sS -w " %{http_code}" http://${n}:${port}/reached-${n}`).join('; echo; ');
    model.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_self', name: 'Bash', input: { command } }] }, { blocks: [{ type: 'text', text: 'Done.' }] });
    const before = model.requests.length;
    const run = await runCli(['run', 'fetch', '--provider', 'anthropic', '--base-url', model.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions', '--no-memory'], { ANTHROPIC_API_KEY: 'sk-test', HOME: home });
    expect((await run.exit).code, run.stderr()).toBe(0);
    const content = JSON.stringify(model.requests.slice(before).map((r) => r.body).findLast((b) => JSON.stringify(b).includes('"tool_result"')));
    for (const n of names) expect(content).toContain(`${n} resolves to`);
    expect(content.match(/ 403/g)).toHaveLength(names.length);
    expect(hits).toEqual([]);
  });
});

it('keel permissions check asks about leaving the sandbox exactly when a run would', async () => {
  const cli = await cliBundle();
  const home = mkdtempSync(join(tmpdir(), 'keel-sbx-home-'));
  const workspace = mkdtempSync(join(tmpdir(), 'keel-sbx-ws-'));
  const check = async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'permissions', 'check', '--tool', 'Bash', '--input', '{"command":"ls","dangerouslyDisableSandbox":true}', '--workspace', workspace, '--home', home, '--mode', 'bypassPermissions'], {
      env: { PATH: process.env.PATH, HOME: home },
    });
    return (JSON.parse(stdout) as { decision: string }).decision;
  };
  expect(await check()).toBe('allow');
  mkdirSync(join(workspace, '.claude'));
  writeFileSync(join(workspace, '.claude', 'settings.json'), JSON.stringify({ sandbox: { enabled: true } }));
  expect(await check()).toBe('ask');
});
